"""The graph: the view for the state (built once per ``ViewParams``, cached), laid out
off the main thread (``viz.start_layout``), shown in the component, with its legend.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

import streamlit as st

from compiler_bridge import Dump, HloModule, HloParseError
from compiler_bridge.dumps import AFTER, BEFORE
from compiler_bridge.passes import Timeline
from compiler_bridge.perf import RuntimeReport
from viz import (
    BORDERS,
    COMMENT_LEGEND,
    DIFF_LEGEND,
    REMOVED_BORDER,
    GraphView,
    Layout,
    ViewState,
    compare_step,
    graph_for,
    prefetch,
    runtime_overlay,
    start_layout,
)
from viz import navigation as N
from viz import panels as P
from viz import runtime as RV

from .compare import diff_for_graph
from .component import graph_view, svg_id
from .explorer import Shown
from .kit import BY_CONTENT, GRAPH_HEIGHT, GRAPH_KEY, Navigator, go, md
from .opening import Opened

# How long a run waits for Graphviz before it says the layout is still running and polls;
# the layout goes on in the background, and a view Graphviz takes minutes over never
# blocks the page.
LAYOUT_WAIT = 8.0


# --------------------------------------------------------------------------- graph

@dataclass(frozen=True)
class ViewParams:
    """Everything a graph view is drawn from besides the dump, the module's timeline and
    the runtime report (which the cache knows by their ``key``): the view state reduced
    to what changes the drawing, and the comment badges. The cache key of the view.

    Left out: the selection and viewport (the browser highlights and pans), the dump and
    trace (the dump and report arguments). Normalised so that equal drawings share one
    entry: the computation '' when the module lacks it, the groups sorted, ``compare``
    the stage actually compared with ('none' for no diff), ``changed_only`` only with a
    diff, ``overlay`` only with a report at the stage that ran."""

    state: ViewState
    comments: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, shown: Shown, state: ViewState, comments: Mapping[str, int] | None,
           overlay: bool) -> ViewParams:
        comp = state.computation if shown.module.get_computation(state.computation or "") \
            else ""
        tl = shown.timeline
        # comparing with another compile: its diff replaces the step's (ui.compare)
        against = compare_step(tl, state) if tl is not None and not state.base else None
        compare = tl.step(against).stage if tl is not None and against is not None else "none"
        drawn = ViewState(module=shown.dump_module.id, stage=shown.stage, computation=comp,
                          expanded=tuple(sorted(state.expanded)), grouping=state.grouping,
                          focus=state.focus, radius=state.radius, compare=compare,
                          changed_only=state.changed_only and (against is not None
                                                               or bool(state.base)),
                          overlay=state.overlay if overlay else "", budget=state.budget,
                          memory=state.memory if shown.stage == AFTER else "",
                          base=state.base, base_module=state.base_module)
        return cls(drawn, tuple(sorted((comments or {}).items())))


def _draw(dump: Dump, timeline: Timeline | None, runtime: RuntimeReport | None,
          params: ViewParams) -> GraphView:
    """The view of ``params``: what the page draws, and what ``likely_next`` lays out
    ahead (one function, so both make the same DOT and the layout is found)."""
    state = params.state
    cross = diff_for_graph(dump, stage_file(dump, state), state) if state.base else None
    return graph_for(dump, state, timeline=None if state.base else timeline,
                     comments=dict(params.comments), runtime=runtime, diff=cross)


def stage_file(dump: Dump, state: ViewState) -> str:
    """The dump file of the state's module and stage ('' when there is none)."""
    try:
        mod = dump.module(state.module) if state.module else dump.main
    except KeyError:
        return ""
    if mod is None:
        return ""
    if state.stage.startswith("pass:"):
        return ""
    f = mod.first(state.stage) or mod.first(AFTER) or mod.first(BEFORE)
    return f.path if f is not None else ""


@st.cache_resource(show_spinner=False, max_entries=48, hash_funcs=BY_CONTENT)
def _view(dump: Dump, timeline: Timeline | None, runtime: RuntimeReport | None,
          params: ViewParams) -> tuple[GraphView, float]:
    t0 = time.perf_counter()
    view = _draw(dump, timeline, runtime, params)
    return view, time.perf_counter() - t0


@st.cache_resource(show_spinner=False, max_entries=48, hash_funcs=BY_CONTENT)
def _cards(module: HloModule, drawn: tuple[str, ...]) -> str:
    """The inspector headers of the drawn instructions, as the JSON the graph carries."""
    return json.dumps(P.cards(module, drawn), separators=(",", ":"), ensure_ascii=False)


def cards_for(shown: Shown, view: GraphView) -> str:
    drawn = tuple(sorted(n for sid, n in view.nodes.items() if sid.startswith("node:")))
    return _cards(shown.module, drawn)


def _params(shown: Shown, state: ViewState, comments: Mapping[str, int] | None,
            runtime: RuntimeReport | None) -> tuple[ViewParams, RuntimeReport | None]:
    """The view's params, and the runtime report it is coloured by (only with the overlay
    on, at the stage that ran)."""
    if not (state.overlay and shown.stage == AFTER):
        runtime = None
    return ViewParams.of(shown, state, comments, overlay=runtime is not None), runtime


def view_for(opened: Opened, shown: Shown, state: ViewState,
             comments: Mapping[str, int] | None = None,
             runtime: RuntimeReport | None = None) -> tuple[GraphView, float]:
    """The (cached) graph view of ``state`` and the seconds it took to build: diff colours
    when the step is compared with another, comment badges from ``comments``
    (instruction -> count), runtime colours from ``runtime`` when ``state.overlay`` is on
    at the stage that ran."""
    params, runtime = _params(shown, state, comments, runtime)
    return _view(opened.dump, shown.timeline, runtime, params)


# at most this many views laid out ahead after each one drawn, and none around a view
# bigger than PREFETCH_AROUND nodes (its neighbours are as slow to lay out)
PREFETCH_VIEWS = 3
PREFETCH_AROUND = 1000


def likely_next(opened: Opened, shown: Shown, state: ViewState, view: GraphView,
                comments: Mapping[str, int] | None, runtime: RuntimeReport | None,
                steps: Sequence[int] = ()) -> Iterator[str]:
    """The DOT texts of the views a user is likely to open from this one, the likeliest
    first: the pass steps ``steps`` (the next one on screen), the selected
    fusion opened or closed, the biggest closed groups opened. Built the way a click
    builds them (``viz.navigation``), so asking for one finds its layout ready."""
    tl = shown.timeline
    for index in steps:
        if tl is None:
            break
        step = tl.step(index)
        try:
            module = opened.dump.parse(step.file)
        except HloParseError:
            continue
        other = Shown(shown.dump_module, step.stage, step.file, module, tl, index)
        new, _ = N.choose_step(state, step.stage)
        params, rt = _params(other, new, comments, runtime)
        yield _draw(opened.dump, tl, rt, params).dot
    targets = []
    if state.selected and ":" not in state.selected:
        inst = shown.module.find(state.selected)
        if inst is not None and inst.opcode == "fusion":
            targets.append("node:" + state.selected)
    closed = sorted((g for g in view.groups.values() if not g.expanded and g.size > 1),
                    key=lambda g: -g.size)
    targets += ["group:" + g.id for g in closed]
    for target in targets[:PREFETCH_VIEWS]:
        new, _ = N.on_graph_event(state, shown.module, "dblclick", target)
        params, rt = _params(shown, new, comments, runtime)
        yield _draw(opened.dump, tl, rt, params).dot


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
               f"{layout_s * 1000:,.0f} ms · drag to pan, wheel to zoom, click to inspect, "
               "double-click to open or close")
    for note in view.notes:
        if "budget" in note:
            st.info(note)
        else:
            st.caption(f"ℹ {md(note)}")
    graph_view(svg, selected=state.selected, viewport=state.viewport, key=GRAPH_KEY,
               height=GRAPH_HEIGHT, cards=cards_for(shown, view))
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
        for name, color in DIFF_LEGEND:
            if compared:
                name = name.replace("in this step", "(not in the baseline)")
            box = f"background:#fff;border:2px dashed {color}" if color == REMOVED_BORDER \
                else f"background:{color};border:1px solid {color}"
            items.append(f'<span><span class="sw" style="{box}"></span>'
                         f'{html.escape(name)}</span>')
        items.append('<span><span class="sw" style="background:#fff5f5;border:2px dashed '
                     '#e03131"></span>' + ("only in the baseline (ghost node)" if compared
                                            else "removed (ghost node)") + '</span>')
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
