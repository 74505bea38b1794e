"""The graph: the view for the state (built once per ``data.ViewParams``, cached), laid
out off the main thread (``viz.start_layout``), shown in the component, with its legend;
the views a click is likely to open next are laid out ahead.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from dataclasses import replace
from functools import partial

import streamlit as st

from compiler_bridge import Dump
from compiler_bridge.dumps import AFTER
from compiler_bridge.perf import RuntimeReport
from viz import (
    BORDERS,
    COMMENT_LEGEND,
    DIFF_GHOST,
    REMOVED_BORDER,
    GraphView,
    Layout,
    ViewState,
    compare_step,
    diff_legend,
    home,
    prefetch,
    runtime_overlay,
    start_layout,
)
from viz import runtime as RV

from .component import graph_view, svg_id
from .data import cards_for, diff_for_graph, likely_next, view_for
from .kit import GRAPH_HEIGHT, GRAPH_KEY, Navigator, go, md
from .model import Opened, Shown

# How long a run waits for Graphviz before it says the layout is still running and polls;
# the layout goes on in the background, and a view Graphviz takes minutes over never
# blocks the page.
LAYOUT_WAIT = 8.0


# no views laid out ahead around a view bigger than PREFETCH_AROUND nodes (its neighbours
# are as slow to lay out)
PREFETCH_AROUND = 1000


def show(nav: Navigator, opened: Opened, shown: Shown,
         comments: Mapping[str, int] | None = None,
         runtime: RuntimeReport | None = None) -> tuple[GraphView | None, str]:
    """The graph of the computation on screen; returns the view and its SVG ('' while
    Graphviz is still busy). ``runtime``: the report to colour it by."""
    state = nav.state
    view, build_s = view_for(opened, shown, state, comments, runtime)
    job = start_layout(view.dot)
    got = job.wait(LAYOUT_WAIT)
    if got is None:
        _layout_pending(nav, view, job)
        return view, ""
    svg, layout_s = got
    st.caption(f"**{md(view.computation)}** — {view.node_count:,} nodes, "
               f"{view.edge_count:,} edges · built in {build_s * 1000:,.0f} ms, laid out in "
               f"{layout_s * 1000:,.0f} ms · drag to pan, Ctrl/⌘ + wheel to zoom (the wheel "
               "alone scrolls the page until you click the graph), click to inspect, "
               "double-click to open or close")
    for note in view.notes:
        if "budget" in note:
            st.info(note)
        else:
            st.caption(f"ℹ {md(note)}")
    graph_view(svg, selected=state.selected, viewport=state.viewport, key=GRAPH_KEY,
               height=GRAPH_HEIGHT, cards=cards_for(shown, view), home=home(view, shown.module))
    if view.node_count <= PREFETCH_AROUND:
        steps = _neighbour_steps(shown)
        # once per drawing and selection: a pan or a click elsewhere asks for nothing new
        inst = shown.module.find(state.selected) if state.selected in view.shown_as else None
        asked = (svg_id(svg), inst.name if inst is not None and inst.opcode == "fusion" else "",
                 tuple(steps))
        before = st.session_state.get("hlolens-prefetched")
        if before != asked:
            st.session_state["hlolens-prefetched"] = asked
            if before is not None:       # not on a page load: its reader reads first
                prefetch(partial(likely_next, opened, shown, state, view, comments, runtime,
                                 steps))
    overlay = None
    if runtime is not None and state.overlay and shown.stage == AFTER:
        overlay = runtime_overlay(runtime, state, shown.module, shown.dump_module.id, view)
    legend(view, diff=_has_diff(opened.dump, shown, state), comments=bool(comments),
           overlay=overlay, compared=bool(state.base))
    return view, svg


def _neighbour_steps(shown: Shown) -> list[int]:
    """The next step the stepper shows (J), when stepping passes."""
    tl = shown.timeline
    if tl is None or not tl.per_pass:
        return []
    visible = [s.index for s in tl.visible(bool(st.session_state.get("pass-hide", True)))]
    return [i for i in visible if i > shown.index][:1]


def _has_diff(dump: Dump, shown: Shown, state: ViewState) -> bool:
    if state.base:
        return diff_for_graph(dump, shown.path, state) is not None
    return shown.timeline is not None and compare_step(shown.timeline, state) is not None


def _layout_pending(nav: Navigator, view: GraphView, job: Layout) -> None:
    """Graphviz is still busy: say so, offer a smaller view, show the graph when done."""
    st.warning(f"Graphviz is still laying out this view ({view.node_count:,} nodes, "
               f"{view.edge_count:,} edges); it keeps going in the background and the graph "
               "appears here when it is done. Close some groups, or focus on a node, for a "
               "smaller view.")
    cols = st.columns(2)
    if nav.state.expanded:
        cols[0].button("Close the groups I opened", on_click=go,
                       args=(lambda s: s.with_(expanded=(), viewport=""),))

    @st.fragment(run_every=1.0)
    def poll() -> None:
        st.caption(f"laying out for {time.time() - job.started:,.0f} s…")
        if job.done():
            st.rerun(scope="app")

    with cols[1]:
        poll()


def legend(view: GraphView, diff: bool = False, comments: bool = False,
           overlay: RV.Overlay | None = None, compared: bool = False) -> None:
    """``compared``: the diff is against a baseline compile, not a pass step."""
    if overlay is not None:
        extra = " · a diff shows as the border colour" if diff else ""
        if not overlay.values:           # why is said above the graph
            overlay = replace(overlay, note="nothing to colour in this computation")
        st.markdown(f'<div class="hl-legend hl-runtime-legend">{RV.legend_html(overlay)}'
                    f'<span>blank: runs no kernel or not measured{extra}</span></div>',
                    unsafe_allow_html=True)
    items = []
    if diff:
        for name, color in diff_legend(compared):
            box = f"background:#fff5f5;border:2px dashed {color}" if name.endswith(DIFF_GHOST) \
                else f"background:#fff;border:2px dashed {color}" if color == REMOVED_BORDER \
                else f"background:{color};border:1px solid {color}"
            items.append(f'<span><span class="sw" style="{box}"></span>'
                         f'{html.escape(name)}</span>')
    if comments:
        name, color = COMMENT_LEGEND
        items.append(f'<span><span class="sw" style="background:#fff;border:3px solid '
                     f'{color}"></span>{html.escape(name)}</span>')
    if items:
        st.markdown(f'<div class="hl-legend">{"".join(items)}</div>', unsafe_allow_html=True)
    items = [f'<span><span class="sw" style="background:{color};border:1px solid '
             f'{BORDERS.get(cat, "#868e96")}"></span>{html.escape(cat)}</span>'
             for cat, color in view.legend]
    items.append('<span><span class="sw" style="background:#fff;border:3px solid #e8590c">'
                 '</span>layout change</span>')
    items.append('<span><span class="sw" style="background:#fff;border:3px double #495057">'
                 '</span>ROOT</span>')
    items.append('<span>⏏ parameter</span><span>▣ closed box (double-click)</span>')
    st.markdown(f'<div class="hl-legend">{"".join(items)}</div>', unsafe_allow_html=True)
