"""ui: the Streamlit pages, the only package that imports streamlit. ``app.py`` calls these
parts top to bottom, each a function of the view (``viz.ViewState``, kept in the URL by
``kit.Navigator``) and the opened dump:

- ``kit``: the Navigator, sections, markdown escaping, widgets that move the view;
- ``opening``: upload, stored dumps, ``--dump``; ``explorer``: module, stage, controls,
  search, breadcrumb, detail tabs; ``graph`` and ``inspector``: the view and the selection;
- ``passes``, ``runtimes``, ``sharing``: the pass stepper, measured and predicted time, links,
  saved views, comments and exports;
- ``tf``: the TensorFlow cluster view (clusters, their modules, why nodes stayed out);
- ``workspace``: search, toolbar, breadcrumb, graph and inspector as one fragment, the
  part a click reruns alone.
"""

from . import explorer, graph, inspector, kit, opening, passes, runtimes, sharing, workspace
from . import tf                               # the TensorFlow cluster view

__all__ = [
    "explorer", "graph", "inspector", "kit", "opening", "passes", "runtimes", "sharing",
    "tf", "workspace",
]
