"""ui: the Streamlit pages, the only package that imports streamlit. ``app.py`` calls these
parts top to bottom, each a function of the view (``viz.ViewState``, kept in the URL by
``kit.Navigator``) and the opened dump:

- ``kit``: the Navigator, sections, markdown escaping, widgets that move the view;
- ``opening``: upload, stored dumps, ``--dump``; ``explorer``: module, stage, controls,
  search, breadcrumb, detail tabs; ``graph`` and ``inspector``: the view and the selection;
- ``memory``: the Memory tab, the memory overlay, temp and peak under the pass stepper;
- ``passes``, ``runtimes``, ``sharing``: the pass stepper, measured and predicted time, links,
  saved views, comments and exports;
- ``visitor``: which stored dumps a visitor is shown (their own, or all on a team server);
- ``compare``: the dump shown against a baseline compile (another dump, or another
  compile of one function): pairing, counts, flags, memory, measured times, graph diff;
- ``tf``: the TensorFlow cluster view (clusters, their modules, why nodes stayed out);
- ``workspace``: search, toolbar, breadcrumb, graph and inspector as one fragment, the
  part a click reruns alone.
"""

from . import (compare, explorer, graph, inspector, kit, memory, opening, passes, runtimes,
               sharing, tf, visitor, workspace)

__all__ = [
    "compare", "explorer", "graph", "inspector", "kit", "memory", "opening", "passes",
    "runtimes", "sharing", "tf", "visitor", "workspace",
]
