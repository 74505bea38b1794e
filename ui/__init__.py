"""ui: the Streamlit pages, the only package that imports streamlit. ``app.py`` calls these
parts top to bottom, each a function of the view (``viz.ViewState``, kept in the URL by
``kit.Navigator``) and the opened dump.

Pages (each the layout of its part of the screen; a page imports no other page):

- ``opening``: upload, stored dumps, ``--dump``; ``explorer``: module, stage, controls,
  search, breadcrumb, detail tabs; ``graph`` and ``inspector``: the view and the selection;
- ``compare``: the dump shown against a baseline compile (another dump, or another
  compile of one function): pairing, counts, flags, memory, measured times, graph diff;
- ``memory``: the Memory tab, the memory overlay, temp and peak under the pass stepper;
- ``runtimes``: measured and predicted time (overlay, inspector line, the Runtimes tab);
- ``sharing``: links, saved views, comments and exports;
- ``tf``: the TensorFlow cluster view (clusters, their modules, why nodes stayed out);
- ``communication``: the Communication tab of a sharded module (collectives, by source
  line, overlap and exposed time).

``sharding_info`` (the selection on the device mesh) is a part of the inspector.

What the pages share:

- ``kit``: the Navigator, sections, markdown escaping, stage names, widgets that move the
  view (an overlay's picker, a diff's tables);
- ``model``: what pages hand one another (``Opened``, ``Picked``, ``Shown``, ``Inspected``);
- ``data``: every cached loader (``st.cache_data`` / ``st.cache_resource``), keyed by content;
- ``actions``: what one page asks of another (select and show an instruction, go to a
  diff row, to a stage, to a computation);
- ``stepper``: the stepper over a timeline, its diff tabs and history, placed by the HLO
  explorer and the TF page alike;
- ``traces``: where runtimes come from (``Runtimes``: the trace, its upload, the report);
- ``visitor``: which stored dumps a visitor is shown (their own, or all on a team server);
- ``component``: the graph component and the light mounts (JS, no build step).

``workspace`` composes pages, like ``app.py``: search, toolbar, breadcrumb, graph and
inspector as one fragment, the part a click reruns alone.
"""

from . import (actions, communication, compare, data, explorer, graph, inspector, kit, memory,
               model, opening, runtimes, sharing, stepper, tf, traces, visitor, workspace)

__all__ = [
    "actions", "communication", "compare", "data", "explorer", "graph", "inspector", "kit", "memory", "model",
    "opening", "runtimes", "sharing", "stepper", "tf", "traces", "visitor", "workspace",
]
