"""The workspace: the part of the page a click reruns alone (a Streamlit fragment).

Search, the share toolbar, the breadcrumb, the graph and the inspector live here. A click
in the graph, a search, an operand chip or a comment reruns only this part: the sidebar,
the pass stepper and the detail tabs are neither rebuilt nor resent. What a rerun here may
change is the selection, the viewport, which groups are open and the focus (``LOCAL``,
drawn here); an action
that changes anything else (another computation, focus, a stage) reruns the whole page,
so every part shows the same view. A part here that needs the whole page again (a saved
view, listed in the sidebar) asks with ``kit.rerun_page()`` from its callback.

Not a page but a composition of pages, like ``app.py``: it places the parts of several.
"""

from __future__ import annotations

from dataclasses import fields

import streamlit as st

from viz import GraphView, ViewState

from . import compare, explorer, graph, inspector, memory, runtimes, sharing, stepper
from .compare import Comparing
from .kit import Navigator, page_rerun_asked, section
from .model import Opened, Shown
from .traces import Runtimes

# what a rerun of the workspace alone may change in the view
LOCAL = frozenset({"selected", "viewport", "expanded", "focus", "radius"})


def beyond_local(before: ViewState, after: ViewState) -> bool:
    """Whether ``after`` differs from ``before`` in more than the workspace redraws."""
    return any(getattr(before, f.name) != getattr(after, f.name)
               for f in fields(ViewState) if f.name not in LOCAL)


@st.fragment
def workspace(page_state: ViewState, opened: Opened, shown: Shown,
              rt: Runtimes | None, cmp: Comparing | None = None) -> GraphView | None:
    """``page_state``: the view the rest of the page was drawn for (this run's, or the
    last whole run's when only the workspace reruns); ``cmp``: the comparison with a
    baseline compile, if any. Returns the graph view drawn."""
    nav = Navigator()              # the URL, after this rerun's callbacks
    with section("Graph events"):
        explorer.handle_graph_events(nav, shown)     # clicks and pans since the last run
    if page_rerun_asked() or beyond_local(page_state, nav.state):
        st.rerun(scope="app")
    top_left, top_right = st.columns([3, 2], vertical_alignment="top")
    with top_left, section("Search"):
        explorer.search_box(nav, shown)
    with section("Breadcrumb"):
        explorer.breadcrumb(nav, shown)              # ENTRY › while.5 › body, and a picker
    module_comments = sharing.comments_of(opened, shown.dump_module.id)
    view, svg, inspected = None, "", None
    graph_col, inspector_col = st.columns([3, 2], gap="medium")
    with graph_col, section("Graph"):
        explorer.focus_controls(nav, shown)          # focus on the selection, hops
        runtimes.graph_messages(nav, rt)             # no trace, a broken one, another stage
        view, svg = graph.show(nav, opened, shown, sharing.comment_counts(module_comments),
                               rt.for_graph() if rt else None)
    with inspector_col, section("Inspector"):
        inspected = inspector.show(nav, opened, shown, view)
        runtimes.inspector(nav, rt, inspected, view)     # its measured/predicted time
        memory.inspector(opened, shown, inspected)       # its values' allocation, offset
        stepper.history(nav, opened, shown, inspected)   # the steps that changed it
        compare.inspector(nav, shown, inspected, cmp)    # its baseline's side
        sharing.comments(nav, opened, shown, inspected, module_comments)
    with top_right, section("Sharing"):
        sharing.toolbar(st.container(), nav, opened, shown, view, svg, inspected,
                        runtime_rows=rt.export_rows if rt else None,
                        runtime_legend=rt.export_legend if rt else None,
                        runtime_measured=rt.export_measured if rt else None,
                        compared=compare.report_notes(cmp))
    return view
