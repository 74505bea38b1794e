"""The explorer around the graph: the module and stage pickers (``Picked``), parsing the
stage shown (``Shown``), the title line, the graph's clicks and pans, graph controls,
search, the breadcrumb, and the detail tabs under the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from compiler_bridge import Dump, HloModule, HloParseError
from compiler_bridge.hlo import MLIR_TEXT
from compiler_bridge.dumps import AFTER, BEFORE
from compiler_bridge.passes import PER_PASS_FLAG

from viz import GROUPINGS, ViewState
from viz import navigation as N
from viz import panels as P

from .actions import choose_computation
from .component import graph_events, handled
from .data import layout_changes_of, module_summary, parse_stats, search, timeline
from .kit import (
    GRAPH_KEY,
    STAGES,
    Navigator,
    clip,
    code,
    controlled,
    describe,
    go,
    go_option,
    go_pick,
    go_widget,
    md,
    section,
    stage_label,
)
from .model import Opened, Picked, Shown

# a loose .mlir's module: the HLO jaxlib converts it to, the stage the URL names (a dump's
# own module.mlir is the stage STABLEHLO, "StableHLO (as HLO)")
FROM_MLIR = f"{STAGES[BEFORE]} (StableHLO converted by jaxlib)"


# --------------------------------------------------------------------------- module

def _module_stats(opened: Opened) -> tuple[dict, dict]:
    stats, errors = {}, {}
    for m in opened.dump.modules:
        f = m.after_optimizations or m.before_optimizations
        if f is None:
            continue
        got = parse_stats(opened.dump, f.path)
        if "stats" in got:
            stats[m.id] = got["stats"]
        else:
            errors[m.id] = got["error"]
    return stats, errors


def from_mlir(dump: Dump, path: str) -> bool:
    """The stage in ``path`` is StableHLO/MLIR that jaxlib converted to HLO."""
    try:
        return dump.file(path).source == MLIR_TEXT
    except KeyError:
        return False


def pick_module(nav: Navigator, opened: Opened) -> Picked | None:
    """Sidebar: module and stage pickers (every pass step is a stage, searchable by pass
    name). Returns the choice, or None (with a message)."""
    dump = opened.dump
    stats, errors = _module_stats(opened)
    main = dump.main
    choices = P.module_choices(dump.modules, main.id if main else None, stats, errors)
    by_id = {c.id: c for c in choices}
    state = nav.state
    try:
        current = dump.module(state.module) if state.module else main
    except KeyError as e:       # the dump by its name, not the store's folder (a hash)
        said = describe(e).removeprefix(f"{dump.name}: ")
        current = main
        showing = f"; showing {current.label}" if current is not None else ""
        st.warning(md(f"Dump {opened.name}: {said}{showing}."))
    if current is None:
        st.error(f"{md(opened.name)} holds no HLO modules.")
        return None
    # with the labels: after a compile the same module id counts other instructions
    controlled("pick-module", current.id, [c.label for c in choices])
    st.sidebar.selectbox("Module", [c.id for c in choices], key="pick-module",
                         format_func=lambda i: by_id[i].label,
                         on_change=go_option,
                         args=(N.choose_module, "pick-module", [c.id for c in choices]))
    tl = timeline(opened.dump, current.id)
    listed = tl.every_step               # the StableHLO (module.mlir) first, as compiled
    if not listed:
        st.error(f"Module {md(current.label)} has no HLO text (before or after "
                 "optimizations).")
        return None
    stages = [s.stage for s in listed]
    index = tl.index_of(state.stage)
    if index is None:
        if state.stage not in (BEFORE, AFTER):
            st.warning(f"Module {md(current.label)} has no step {code(state.stage)}; "
                       "showing it after optimizations.")
        index = tl.index_of(AFTER)
        index = listed[-1].index if index is None else index
    stage = tl.step(index).stage
    if stage != state.stage:          # 'pass:17' -> 'pass:0017', or a fallback
        nav.go(state.with_(stage=stage))
    labels = {s.stage: stage_label(s) for s in listed}
    labels.update({s.stage: FROM_MLIR for s in tl.steps
                   if s.kind == BEFORE and from_mlir(dump, s.file)})
    controlled("pick-stage", stage)
    mlir = " or its StableHLO (module.mlir, converted by jaxlib)" \
        if tl.stablehlo is not None else ""
    st.sidebar.selectbox(
        "Stage", stages, key="pick-stage", format_func=lambda s: labels.get(s, s),
        on_change=go_option, args=(N.choose_step, "pick-stage", stages),
        help=f"Before or after XLA's optimizations{mlir}, or any pass step of a dump written "
             f"with {PER_PASS_FLAG} (type a pass name to find it)"
             if tl.per_pass else f"Before or after XLA's optimizations{mlir}")
    return Picked(current, tl, index, stage, tl.step(index).file)


def parse_stage(opened: Opened, picked: Picked) -> Shown | None:
    """The picked step's parsed module, or None with the parser's message."""
    step = picked.step
    try:
        module = opened.dump.parse(picked.path)
    except HloParseError as e:
        where = f"step {step.index} ({step.label})" if step.kind == "pass" \
            else STAGES.get(step.kind, step.kind)
        why = "jaxlib cannot convert its StableHLO to HLO" if from_mlir(opened.dump, step.file) \
            else "it cannot be parsed"
        st.error(f"Module **{md(picked.dump_module.label)}** at {md(where)}: {why}, so it "
                 "cannot be drawn; the other steps and modules still work."
                 f"{code(str(e))}")
        return None
    return Shown(picked.dump_module, picked.stage, picked.path, module, picked.timeline,
                 picked.index)


def header(opened: Opened, picked: Picked):
    """The title line; returns the container on its right for the share toolbar."""
    m = picked.dump_module
    step = picked.step
    where = stage_label(step, short=True) if step.kind == "pass" else STAGES[step.kind]
    if step.kind == BEFORE and from_mlir(opened.dump, step.file):
        where = FROM_MLIR
    left, right = st.columns([3, 2], vertical_alignment="center")
    # md: backslash escapes keep both markdown and HTML of a name text in this HTML line
    left.markdown(f"### {md(m.name)} <span style='color:#868e96;font-weight:400;"
                  f"font-size:1rem'>module {md(m.id)} · {md(where)} · "
                  f"{md(opened.name)}</span>", unsafe_allow_html=True)
    return right


def handle_graph_events(nav: Navigator, shown: Shown) -> None:
    """Apply clicks, double-clicks and pans the graph reported since the last run."""
    for ev in graph_events(GRAPH_KEY):
        if ev.kind == "viewport" or ev.target:
            state, center = N.on_graph_event(nav.state, shown.module, ev.kind, ev.target,
                                             ev.viewport)
            nav.go(state, center)
        handled(GRAPH_KEY, ev)       # only now: a run stopped inside go() told the browser nothing


def graph_controls(nav: Navigator, shown: Shown) -> None:
    """Sidebar: grouping and the node budget."""
    state = nav.state
    sb = st.sidebar
    controlled("pick-grouping", state.grouping)
    sb.segmented_control("Group by", list(GROUPINGS), key="pick-grouping", required=True,
                         format_func=str,
                         on_change=go_widget, args=(N.choose_grouping, "pick-grouping"),
                         help="layers: op_name scopes · source: the Python call path · "
                              "flat: no boxes", width="stretch")
    controlled("pick-budget", state.budget)
    # from 100, or a link's lower budget (it keeps 50 to 6,000: ``viz.state.BUDGET``)
    sb.number_input("Node budget", min(100, state.budget), 6000, step=250, key="pick-budget",
                    on_change=go_widget, args=(N.set_budget, "pick-budget"),
                    help="The most nodes a view draws; beyond it groups stay closed. Layout "
                         "time grows with nodes and edges: about 1–3 s at 2,000 nodes.")


def focus_controls(nav: Navigator, shown: Shown) -> None:
    """Above the graph: focus on the selection and its hops (part of the workspace, so a
    click or a search hit that focuses reruns only the workspace)."""
    state = nav.state
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        can_focus = bool(state.focus) or (bool(state.selected) and ":" not in state.selected)
        controlled("pick-focus", bool(state.focus))
        st.toggle("Focus on the selection", key="pick-focus", disabled=not can_focus,
                  on_change=go_widget, args=(N.set_focus, "pick-focus"),
                  help="Show only the instructions within k hops of the selected one")
        if not state.focus:        # the hops only with focus on: a slider's code (with
            return                 # moment and numbro, 130 KB) is no first page's
        controlled("pick-radius", state.radius)
        # 1 to 8, stretched to a link's hops (it keeps 0 to 20: ``viz.state.RADIUS``)
        st.slider("Hops (k)", min(1, state.radius), max(8, state.radius), key="pick-radius",
                  on_change=go_widget, args=(N.set_radius, "pick-radius"), width=160,
                  label_visibility="collapsed", format="%d hops")
        comp = (shown.module.get_computation(state.computation) if state.computation
                else shown.module.entry)
        if comp is not None and comp.get(state.focus) is None:     # a link's stale focus
            st.caption(f"{code(state.focus)} is not in {code(comp.name)}: no focus, "
                       "everything is drawn")
        else:
            st.caption(f"Focused on {code(state.focus)}")


# --------------------------------------------------------------------------- search

def search_box(nav: Navigator, shown: Shown) -> None:
    # the text is for the dump it was typed in: another dump (an upload) starts empty
    if st.session_state.get("search-q·dump", nav.state.dump) != nav.state.dump:
        st.session_state["search-q"] = ""
    st.session_state["search-q·dump"] = nav.state.dump
    cols = st.columns([5, 1], vertical_alignment="center")
    query = cols[0].text_input(
        "Search", key="search-q", label_visibility="collapsed", icon=":material/search:",
        placeholder="Search: name, opcode, op_name, shape or source (e.g. dot, f32[64,64], "
                    "attention) — Enter goes to the first hit",
        on_change=_go_to_first_hit, args=(shown.module,))
    regex = cols[1].toggle("regex", key="search-re")
    if not query.strip():
        return
    result = search(shown.module, query, regex)
    if result.error:
        st.warning(md(result.error))
        return
    if result.stopped:
        st.warning(f"**Search stopped.** {md(result.stopped)}.")
    if not result.hits:
        st.caption(f"No instruction matches {code(query)}" +
                   (" in what was searched." if result.stopped else "."))
        return
    hits = {h.name: h for h in result.hits}
    more = f" (showing the first {len(result.hits)})" if result.total > len(result.hits) else ""
    pick_key = f"search-pick:{regex}:{query}"
    cols = st.columns([5, 1], vertical_alignment="bottom")
    if len(hits) == 1:              # nothing to pick: one click (or Enter) goes there
        (h,) = result.hits
        cols[0].button(f"1 hit: {code(h.name)} · {md(h.opcode)} · {md(h.shape)} · "
                       f"{md(h.computation)} — go to it", key=pick_key, type="tertiary",
                       on_click=go, args=(_go_to_hit, h.name, shown.module))
    else:
        cols[0].selectbox(
            f"{result.total:,} hits{more} — Enter went to the first; pick one to go to it",
            list(hits), index=None, key=pick_key, placeholder="Go to a hit…",
            format_func=lambda n: (f"{n} · {hits[n].opcode} · {hits[n].shape} · "
                                   f"{hits[n].computation}"),
            on_change=go_pick, args=(_go_to_hit, pick_key, shown.module))
    table = cols[1].popover("Table", width="stretch", key=f"search-table:{pick_key}",
                            on_change="rerun")
    if table.open:
        table.dataframe([{"name": h.name, "opcode": h.opcode, "shape": h.shape,
                          "op_name": h.op_name, "computation": h.computation,
                          "matched": h.field} for h in result.hits],
                        hide_index=True, width=900)


def _go_to_hit(state: ViewState, name: str, module: HloModule):
    """A hit is shown and selected; focus mode stays as the user set it (on, it follows
    the hit)."""
    return N.go_to(state, module, name, focus=bool(state.focus))


def _go_to_first_hit(module: HloModule) -> None:
    """Enter in the search box: to the first (best ranked) hit, as a pick of it would."""
    query = st.session_state.get("search-q") or ""
    if not query.strip():
        return
    result = search(module, query, bool(st.session_state.get("search-re")))
    if result.hits and not result.error:
        go(_go_to_hit, result.hits[0].name, module)


# --------------------------------------------------------------------------- breadcrumb

def breadcrumb(nav: Navigator, shown: Shown) -> None:
    """ENTRY › ... › the computation shown (each step one click back), and a picker."""
    module = shown.module
    state = nav.state
    comp = state.computation
    if comp and module.get_computation(comp) is None:
        st.warning(f"{md(module.name)} has no computation {code(comp)}; showing the ENTRY.")
        comp = ""
    crumbs = P.breadcrumb(module, comp or None)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left.container(horizontal=True, gap="small", key="crumbs"):
        for i, c in enumerate(crumbs):
            last = i == len(crumbs) - 1
            target = "" if i == 0 else c.computation
            st.button(c.label if not last else f"**{c.label}**", key=f"crumb:{i}:{c.computation}",
                      type="tertiary", disabled=last, on_click=go,
                      args=(N.choose_computation, target))
            if not last:
                st.markdown("›")
    choices = P.computation_choices(module, include_fused=False)
    labels = {c.name: c.label for c in choices}
    current = comp or (module.entry.name if module.entry is not None else "")
    if current not in labels:
        fused = module.get_computation(current)
        labels[current] = f"{current} (fused)" if fused is not None else current
    controlled("pick-computation", current, [labels[k] for k in labels])
    right.selectbox("Computation", list(labels), key="pick-computation",
                    format_func=lambda c: labels.get(c, c), label_visibility="collapsed",
                    on_change=go_option,
                    args=(choose_computation, "pick-computation", list(labels), module))


# --------------------------------------------------------------------------- details

def details(nav: Navigator, opened: Opened, shown: Shown,
            extra: Sequence[tuple[str, Callable[[], None]]] = (),
            more: Sequence[tuple[str, Callable[[], None]]] = ()) -> None:
    """Module summary, opcode histogram, layout changes and files (after ``extra`` tabs,
    e.g. the pass diff's, the first of them open at first, and ``more`` tabs, e.g. the
    runtimes, open when clicked), in tabs that only compute (and send to the browser)
    what the open tab shows."""
    names = [name for name, _ in extra] + [name for name, _ in more] + [
        "Module summary", "Opcodes", "Layout changes", "Files"]
    tabs = st.tabs(names, key="details:" + "|".join(names), on_change="rerun")
    for k, (tab, (name, draw)) in enumerate(zip(tabs, list(extra) + list(more))):
        if tab.open or (k == 0 and k < len(extra) and tab.open is None):
            with tab, section(name):
                draw()
    summary_tab, opcodes_tab, changes_tab, files_tab = tabs[len(extra) + len(more):]
    if summary_tab.open or (not extra and summary_tab.open is None):
        with summary_tab, section("Module summary"):
            summary = module_summary(shown.module)
            cols = st.columns(2)
            cols[0].markdown("\n".join(f"- **{k}**: {v}" for k, v in summary.metrics()))
            if summary.attributes:
                cols[1].code("\n".join(f"{k}={clip(v, 400)}"
                                       for k, v in summary.attributes.items()),
                             language=None, wrap_lines=True)
    if opcodes_tab.open:
        with opcodes_tab, section("Opcodes"):
            summary = module_summary(shown.module)
            st.plotly_chart(P.opcode_histogram(summary), config={"displayModeBar": False})
    if changes_tab.open:
        with changes_tab, section("Layout changes"):
            _layout_change_list(shown)
    if files_tab.open:
        with files_tab, section("Files"):
            files = shown.dump_module.files
            st.caption(f"{len(files)} files of module {md(shown.dump_module.label)}")
            st.dataframe([{"file": f.path, "kind": f.kind, "bytes": f.size} for f in files],
                         hide_index=True)


def _layout_change_list(shown: Shown) -> None:
    changes = layout_changes_of(shown.module)
    if not changes:
        st.caption("No copy, transpose or bitcast in this module changes a layout.")
        return
    st.caption(f"{len(changes)} copies and transposes that move data to another layout, and "
               "bitcasts that relabel one. Pick one to show it in the graph.")
    names = [c.instruction for c in changes]
    by = {c.instruction: c for c in changes}
    key = f"pick-change:{shown.module.key}"
    st.selectbox("Go to", names, index=None, key=key, placeholder="Go to a layout change…",
                 format_func=lambda n: f"{n} · {by[n].reason}",
                 on_change=go_pick, args=(_go_to_hit, key, shown.module))
    st.dataframe([{"instruction": c.instruction, "computation": c.computation,
                   "opcode": c.opcode, "from": c.operand_shape, "to": c.shape,
                   "bytes": c.bytes, "reason": c.reason} for c in changes],
                 hide_index=True)
