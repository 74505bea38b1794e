"""The pass explorer's parts of the page: stepper and timeline, diff tabs, history.

``app.py`` places them: ``pass_panel`` above the graph (previous / next / slider, the
timeline chart, what the step is compared with), ``detail_tabs`` before the module's
own tabs (the diff as tables, the side-by-side text diff, every step as a table) and
``history`` in the inspector. The data comes from ``compiler_bridge.passes`` (cached
by the dump's content), the views from ``viz.stepper``; every move goes through
``viz.navigation`` and the URL, like the rest of the page.

The same stepper and tabs step through a TF graph's dumps around XLA clustering
(``compiler_bridge.tf.graph_timeline``; ``ui.tf`` places them): ``stepper`` and
``graph_tabs``, the diff a ``GraphDiff`` of nodes instead of a ``ModuleDiff``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from compiler_bridge import HloParseError
from compiler_bridge.dumps import AFTER, BEFORE, STABLEHLO
from compiler_bridge.steps import TF_GRAPH
from compiler_bridge.tf import GraphDiff, graph_step_diff, graph_text_diff, tf_index
from compiler_bridge.passes import (
    PER_PASS_FLAG,
    PER_PASS_HINT,
    STABLEHLO_INDEX,
    Step,
    ModuleDiff,
    Timeline,
    text_diff,
)
from viz import ViewState, compare_step, diff_for
from viz import navigation as N
from viz import stepper as SV

from .actions import on_diff_row
from .data import changes_per_step, step_history, step_tables, timeline_chart
from .kit import (
    STAGES,
    Navigator,
    RowClick,
    code,
    controlled,
    diff_table,
    go,
    go_option,
    go_widget,
    md,
    section,
    selected_points,
    selected_row,
    stage_label,
)
from .model import Inspected, Opened, Picked, Shown

# below this many instructions over all steps, +/−/~ per step are counted at once
# (one diff per changed step); above it, when the Steps tab asks for them
CHANGES_AT_ONCE = 150_000
ALL_TEXT = "\0all"           # the text diff's "every changed computation" choice
MAX_NODE_TEXTS = 200         # a TF diff's node texts all at once up to this many nodes


# --------------------------------------------------------------------------- data

Diff = ModuleDiff | GraphDiff


def current_diff(opened: Opened, tl: Timeline, index: int, state: ViewState
                 ) -> tuple[Diff | None, int | None, str]:
    """(diff, step compared with, error) for the step on screen; no diff without a
    compare target, and none on a step that does not parse."""
    st = state.with_(stage=tl.step(index).stage)
    against = compare_step(tl, st)
    if tl.source == TF_GRAPH:
        if against is None:
            return None, None, ""
        return graph_step_diff(tf_index(opened.dump), tl, index, against), against, ""
    try:
        return diff_for(opened.dump, st, tl), against, ""
    except HloParseError as e:
        return None, against, str(e)


def counted_at_once(tl: Timeline) -> bool:
    """Whether +/−/~ per step are counted without asking (a small enough module)."""
    return sum(s.count or 0 for s in tl.steps if not s.identical) <= CHANGES_AT_ONCE


def changes(opened: Opened, tl: Timeline, force: bool = False) -> list[dict] | None:
    """+/−/~ per step (None when that would take long and nobody asked)."""
    if not force and not counted_at_once(tl):
        return None
    return changes_per_step(opened.dump, tl)


# --------------------------------------------------------------------------- stepper

def _visible(tl: Timeline, index: int, hide: bool) -> list[int]:
    visible = [s.index for s in tl.visible(hide)]
    if tl.stablehlo is not None:         # the stepper starts where the compile does
        visible.insert(0, STABLEHLO_INDEX)
    if index not in visible:
        visible = sorted(visible + [index])
    return visible


def _to_index(state: ViewState, index: int, tl: Timeline):
    return N.choose_step(state, tl.step(int(index)).stage)


def step_from_selection(selection) -> int | None:
    """The step index a click on the timeline chart picked (its points' customdata)."""
    for p in selected_points(selection):
        data = p.get("customdata") if isinstance(p, dict) else None
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return int(data)
    return None


def _on_chart(key: str, tl: Timeline) -> None:
    index = step_from_selection(st.session_state.get(key))
    if index is not None and 0 <= index < len(tl):
        go(_to_index, index, tl)


def pass_panel(nav: Navigator, opened: Opened, picked: Picked) -> None:
    """Previous / next / slider over the steps, the timeline chart (click a point to go
    there), what the step is compared with, and the diff's one-line summary."""
    tl = picked.timeline
    if len(tl) < 2:
        return
    if not tl.per_pass:
        _before_after_panel(nav, opened, picked)
        return
    stepper(nav, opened, tl, picked.index)
    if picked.step.error:
        st.caption(f"⚠ Step {picked.index} does not parse (the message is below); step to "
                   "another one with ◀ ▶.")


# Fewer steps than this draw no timeline chart: the slider names each of them and the Steps
# tab lists their counts, while the chart's plotly script costs a page ~1.2 s in a new
# browser context (BENCHMARKS.md, TF notes): most of a small page's load.
CHART_MIN_STEPS = 16


def stepper(nav: Navigator, opened: Opened, tl: Timeline, index: int) -> None:
    """Previous / next / slider over the steps of ``tl`` (an HLO module's or a TF
    graph's), the step's title, what it is compared with and the diff's one line, and the
    timeline chart (a click on a point goes there) when there are CHART_MIN_STEPS steps
    or more."""
    state = nav.state
    st.session_state.setdefault("pass-hide", True)
    hide = bool(st.session_state["pass-hide"])
    visible = _visible(tl, index, hide)
    pos = visible.index(index)
    charted = len(visible) >= CHART_MIN_STEPS
    left, right = st.columns([5, 4], gap="medium") if charted else (st.container(), None)
    with left:
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            prev_stage = tl.step(visible[pos - 1]).stage if pos > 0 else ""
            next_stage = tl.step(visible[pos + 1]).stage if pos + 1 < len(visible) else ""
            st.button("◀", key="pass-prev", disabled=not prev_stage, shortcut="K",
                      on_click=go, args=(N.choose_step, prev_stage),
                      help="The previous step (key K)")
            st.button("Next ▶", key="pass-next", disabled=not next_stage, shortcut="J",
                      type="primary", on_click=go, args=(N.choose_step, next_stage),
                      help="The next step (key J)")
            controlled("pass-slider", index)
            st.select_slider("Step", visible, key="pass-slider", label_visibility="collapsed",
                             format_func=_slider_label, on_change=go_option,
                             args=(_to_index, "pass-slider", visible, tl), width="stretch")
        st.markdown(_step_title(tl, index))
        with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
            st.toggle("Hide identical steps", key="pass-hide",
                      help="Steps whose text equals the previous step's (XLA writes one at "
                           "each pipeline start) are skipped by the stepper and the chart")
            if tl.source != TF_GRAPH:      # the TF graph draws every node
                controlled("pass-only", state.changed_only)
                st.toggle("Only what changed", key="pass-only", on_change=go_widget,
                          args=(N.set_changed_only, "pass-only"),
                          help="Draw only the instructions this step added, changed or "
                               "removed next to, and their neighbours")
            _compare_picker(nav, tl, index)
        _diff_line(opened, tl, index, state)
    if right is None:
        return
    with right:
        fig = timeline_chart(opened.dump, tl, index, hide, counted_at_once(tl))
        key = f"pass-chart:{tl.module_id}:{index}:{hide}"
        st.plotly_chart(fig, key=key, on_select=partial(_on_chart, key, tl),
                        selection_mode="points", config={"displayModeBar": False})


def _slider_label(index: int) -> str:
    return "StableHLO" if index == STABLEHLO_INDEX else str(index)


def stablehlo_note(step: Step) -> str:
    """What the StableHLO stage is (markdown)."""
    return (f"{code(step.file)}: what JAX handed XLA, converted to HLO by jaxlib; its MLIR "
            "locations are the source lines.")


def _step_title(tl: Timeline, index: int) -> str:
    s = tl.step(index)
    if s.kind == STABLEHLO:
        return f"**{STAGES[STABLEHLO]}** · {stablehlo_note(s)} The steps count from " \
            "before optimizations (step 0)."
    head = f"step **{index}** of {len(tl) - 1} · "
    if tl.source == TF_GRAPH:
        prev = tl.previous_ok(index)
        before = tl.step(prev).nodes if prev is not None else None
        delta = f" ({s.nodes - before:+,})" if before is not None and s.nodes is not None \
            and s.nodes != before else ""
        return (head + f"**{md(s.pass_name)}** · {code(s.file)}  \n:gray[{s.nodes:,} nodes"
                f"{delta} · {s.clusters} clusters · {s.clustered:,} nodes in clusters]")
    if s.kind != "pass":
        return head + f"**{md(stage_label(s))}**"
    out = head + f"**{md(s.pass_name)}** · {code(s.pipeline)} ({s.sequence:04d})"
    if s.next_pass:
        out += f" → {code(s.next_pass)}"
    if s.ok:
        prev = tl.previous_ok(index)
        delta = ""
        before, now = tl.step(prev).instructions if prev is not None else None, s.instructions
        if before is not None and now is not None:
            delta = f" ({now - before:+,})" if now != before else ""
        out += (f"  \n:gray[{s.instructions:,} instructions{delta} · {s.fusions:,} fusions · "
                f"{s.entry_instructions:,} in ENTRY · {SV.human_bytes(s.tensor_bytes)} of "
                "ENTRY tensors]")
    return out


def _compare_picker(nav: Navigator, tl: Timeline, index: int) -> None:
    state = nav.state
    prev = tl.previous_ok(index)
    options = ["", "none"] + [s.stage for s in tl.every_step if s.index != index and s.ok
                              and not (s.identical and s.stage != state.compare)]
    labels = {"": "vs the previous step" + (f" ({prev})" if prev is not None else ""),
              "none": "vs nothing (plain graph)"}
    labels.update({s.stage: "vs " + stage_label(s) for s in tl.every_step})
    value = state.compare if state.compare in options else ""
    controlled("pass-compare", value, [labels.get(o, o) for o in options])
    st.selectbox("Compared with", options, key="pass-compare",
                 format_func=lambda o: labels.get(o, o),
                 on_change=go_option, args=(N.set_compare, "pass-compare", options),
                 label_visibility="collapsed", width="stretch",
                 help="The step the graph colours, tables and text diff compare this one "
                      "with; type a pass name to find one")


def _diff_line(opened: Opened, tl: Timeline, index: int, state: ViewState) -> None:
    step = tl.step(index)
    if not step.ok:
        return
    # a narrowed --xla_dump_hlo_pass_re: the diff covers passes that were not dumped
    if step.unseen and not step.identical:
        st.caption(f"⚠ Passes {md(step.unseen)} ran since the previous snapshot but were "
                   "not dumped (a narrowed --xla_dump_hlo_pass_re): the changes below may "
                   "be theirs, not only this step's pass.")
    if step.identical and not state.compare:
        st.caption("Same text as the previous step: this pass changed nothing.")
        return
    d, against, error = current_diff(opened, tl, index, state)
    if error:
        st.warning(f"Cannot compare with {_step_name(tl, against)}: "
                   f"{code(error.splitlines()[0])}")
    elif d is None or against is None:
        if against is None and state.compare != "none":
            st.caption("The first step: nothing to compare with.")
    elif d.is_empty:
        st.caption(f"No {tl.unit} changed since {_step_name(tl, against)}"
                   + (" (only the order or the header)" if isinstance(d, ModuleDiff)
                      and (d.reordered or d.header_changes) else "") + ".")
    else:
        st.caption(f"vs {_step_name(tl, against)}: {md(SV.diff_summary(d))}")


def _step_name(tl: Timeline, index: int | None) -> str:
    if index is None:
        return "nothing"
    s = tl.step(index)
    if tl.source == TF_GRAPH:
        return f"step {index} ({md(s.pass_name)})"
    return f"step {index}" if s.kind == "pass" else STAGES.get(s.kind, s.kind)


def _before_after_panel(nav: Navigator, opened: Opened, picked: Picked) -> None:
    """A dump without per-pass files: compare after with before optimizations on request,
    and say how to get per-pass files."""
    state = nav.state
    tl = picked.timeline
    # what each stage is compared with on request: after with before; before with the
    # StableHLO (jaxlib names instructions as XLA's conversion does, so it pairs them all)
    earlier = {AFTER: BEFORE, BEFORE: STABLEHLO}.get(picked.stage, "")
    if earlier and tl.index_of(earlier) is None:
        earlier = ""
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        if earlier:
            controlled("pass-vs-before", state.compare == earlier)
            st.toggle(f"Show what changed since {STAGES[earlier]}", key="pass-vs-before",
                      on_change=go_widget, args=(_vs_earlier, "pass-vs-before", earlier),
                      help="Colour the graph by what XLA's passes added and changed, and "
                           "fill the Changes and Text diff tabs" if earlier == BEFORE else
                           "Colour the graph by what XLA changed converting the StableHLO "
                           "it was handed (mostly metadata), and fill the Changes and Text "
                           "diff tabs")
        if picked.stage == STABLEHLO:
            st.caption(stablehlo_note(picked.step))
        st.caption(f"No per-pass snapshots in this dump. To step through every pass, dump "
                   f"with `{PER_PASS_FLAG}`.", help=PER_PASS_HINT)
    if earlier and state.compare == earlier:
        _diff_line(opened, tl, picked.index, state)


def _vs_earlier(state: ViewState, on: bool, earlier: str) -> ViewState:
    return N.set_compare(state, earlier if on else "")


# --------------------------------------------------------------------------- tabs

def detail_tabs(nav: Navigator, opened: Opened, shown: Shown
                ) -> list[tuple[str, Callable[[], None]]]:
    """The diff tabs for the page's details (none for a module with one snapshot)."""
    tl = shown.timeline
    if tl is None or len(tl) < 2:
        return []
    on_row = partial(on_diff_row, opened=opened, shown=shown)
    on_screen = shown.module.entry.name if shown.module.entry else ""
    tabs = [("Changes", lambda: _changes_tab(nav, opened, tl, shown.index, on_row)),
            ("Text diff", lambda: _text_tab(nav, opened, tl, shown.index, on_screen))]
    if tl.per_pass:
        tabs.append(("Steps", lambda: _steps_tab(opened, tl, shown.index)))
    return tabs


def graph_tabs(nav: Navigator, opened: Opened, tl: Timeline, index: int, on_row: RowClick
               ) -> list[tuple[str, Callable[[], None]]]:
    """The same diff tabs for a TF graph's timeline; ``on_row`` selects a clicked node."""
    if len(tl) < 2:
        return []
    return [("Changes", lambda: _changes_tab(nav, opened, tl, index, on_row)),
            ("Text diff", lambda: _text_tab(nav, opened, tl, index, "")),
            ("Steps", lambda: _steps_tab(opened, tl, index))]


def _no_diff_reason(tl: Timeline, index: int, state: ViewState, against, error: str) -> str:
    if error:
        return f"Cannot compare with {_step_name(tl, against)}: {code(error.splitlines()[0])}"
    if not tl.per_pass and state.compare not in (BEFORE, STABLEHLO):
        return ("Nothing is compared yet: turn on *Show what changed since before "
                "optimizations* above (at the after-optimizations stage).")
    if state.compare == "none":
        return "Nothing is compared: pick a step under *Compared with* above."
    return "The first step has nothing to compare with."


def _changes_tab(nav: Navigator, opened: Opened, tl: Timeline, index: int,
                 on_row: RowClick) -> None:
    state = nav.state
    d, against, error = current_diff(opened, tl, index, state)
    if d is None or against is None:
        st.caption(_no_diff_reason(tl, index, state, against, error))
        return
    st.markdown(f"**{md(stage_label(tl.step(against)))} → {md(stage_label(tl.step(index)))}**"
                f"  \n{md(SV.diff_summary(d))}")
    tables = step_tables(opened.dump, tl, index, against)
    rows = diff_table(tables, "diff-table", f"diff-rows:{tl.module_id}:{index}:{against}",
                      on_row, above=_conflicts_note)
    if rows is None:
        st.caption(f"No {tl.unit} was added, removed or changed.")
        return
    if len(rows) >= 2000:
        st.caption("The first 2,000 rows." if tl.source == TF_GRAPH else
                   "The first 2,000 rows; `python -m compiler_bridge passes PATH --diff STEP "
                   "--json` lists them all.")
    st.caption(f"Click a row to select that {tl.unit} in the graph.")


def _conflicts_note(kind: str, rows: list[dict]) -> None:
    if kind == "layout conflicts":
        moved = sum(r["bytes moved"] for r in rows)
        st.caption(f"copies and transposes this step inserted to resolve layout conflicts: "
                   f"{SV.human_bytes(moved)} moved in all")


def _changed_computations(d: ModuleDiff) -> list[str]:
    """Computations (newer names; older ones for removed computations) the diff touches,
    most changes first."""
    count: dict[str, int] = {}

    def bump(name: str) -> None:
        if name:
            count[name] = count.get(name, 0) + 1
    for r in d.added:
        bump(r.computation)
    for r in d.removed:
        bump(d.computation_map.get(r.computation, r.computation))
    for c in d.changed:
        bump(c.new.computation)
        if c.old.computation != c.new.computation:
            bump(d.computation_map.get(c.old.computation, c.old.computation))
    for name in d.computations_added + d.computations_removed:
        bump(name)
    for name in d.reordered:
        bump(name)
    return sorted(count, key=lambda n: -count[n])


def _text_tab(nav: Navigator, opened: Opened, tl: Timeline, index: int, on_screen: str
              ) -> None:
    state = nav.state
    d, against, error = current_diff(opened, tl, index, state)
    if d is None or against is None:
        st.caption(_no_diff_reason(tl, index, state, against, error))
        return
    if isinstance(d, GraphDiff):
        _node_text_tab(opened, tl, index, against, d)
        return
    comps = _changed_computations(d)
    if not comps:
        st.caption("The text of every computation is the same (after pairing renamed "
                   "instructions).")
        return
    on_screen = state.computation or on_screen
    small = (tl.step(index).instructions or 0) <= 4000
    options = ([ALL_TEXT] if small and len(comps) > 1 else []) + comps
    key = f"text-diff-comp:{tl.module_id}"
    if st.session_state.get(key) not in options:
        st.session_state[key] = ALL_TEXT if ALL_TEXT in options else \
            on_screen if on_screen in options else options[0]
    chosen, context = _text_picker("Computation", options, key,
                                   f"every changed computation ({len(comps)})")
    back = {v: k for k, v in d.computation_map.items()}
    wanted = None if chosen == ALL_TEXT else {chosen, back.get(chosen, chosen)}
    diffs = text_diff(d, context=context, computations=wanted)
    st.html(SV.text_diff_html(diffs, old_title=_titled(tl, against),
                             new_title=_titled(tl, index)))


def _text_picker(label: str, options: list[str], key: str, every: str) -> tuple[str, int]:
    """The text diff's picker (``every`` names ALL_TEXT) and its context lines."""
    cols = st.columns([3, 1], vertical_alignment="bottom")
    cols[0].selectbox(label, options, key=key,
                      format_func=lambda c: every if c == ALL_TEXT else c)
    context = cols[1].number_input("Context lines", 0, 50, 3, key="text-diff-context")
    return st.session_state[key], int(context)


def _titled(tl: Timeline, index: int) -> str:
    """'step 3: 3 · algsimp · …', or the StableHLO's label (it has no step number)."""
    label = stage_label(tl.step(index))
    return label if index == STABLEHLO_INDEX else f"step {index}: {label}"


def _node_text_tab(opened: Opened, tl: Timeline, index: int, against: int,
                   d: GraphDiff) -> None:
    """A TF graph diff's text: each added, removed or changed node's NodeDef side by side
    (every one at once for a small diff, else one picked)."""
    names = [c.new.name for c in d.changed] + [n.name for n in d.added] + \
        [n.name for n in d.removed]
    if not names:
        st.caption("No node was added, removed or changed.")
        return
    options = ([ALL_TEXT] if len(names) <= MAX_NODE_TEXTS else []) + names
    key = f"text-diff-node:{tl.module_id}:{index}:{against}"
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]
    chosen, context = _text_picker("Node", options, key, f"every changed node ({len(names)})")
    wanted = None if chosen == ALL_TEXT else {chosen}
    diffs = graph_text_diff(opened.dump, d, wanted, context=context)
    st.html(SV.text_diff_html(diffs, old_title=_titled(tl, against),
                             new_title=_titled(tl, index), block="node", unit="lines"))


def _steps_tab(opened: Opened, tl: Timeline, index: int) -> None:
    hide = bool(st.session_state.get("pass-hide", True))
    ch = changes(opened, tl)
    if ch is None:
        if st.button(f"Count what every step changed ({len(tl)} diffs of "
                     f"{max(s.count or 0 for s in tl.steps):,} {tl.unit}s)",
                     key="count-changes"):
            ch = changes(opened, tl, force=True)
    rows = SV.shown_rows(SV.timeline_rows(tl, ch, hide_identical=hide))
    for r in rows:
        r["now"] = "▶" if r["step"] == index else ""
    rows = [{"now": r.pop("now"), **r} for r in rows]
    key = f"steps:{tl.module_id}:{index}:{hide}"
    st.dataframe(rows, hide_index=True, key=key, on_select=partial(_on_step_row, key, rows, tl),
                 selection_mode="single-row",
                 height=min(38 + 35 * len(rows), 460))
    st.caption("Click a row to go to that step.")


def _on_step_row(key: str, rows: list[dict], tl: Timeline) -> None:
    row = selected_row(key, len(rows))
    if row is not None:
        go(_to_index, rows[row]["step"], tl)


# --------------------------------------------------------------------------- history

def history(nav: Navigator, opened: Opened, shown: Shown, inspected: Inspected) -> None:
    """In the inspector: the steps that created, changed, fused or removed the selected
    instruction, each a button to that step. A name this step removed is explained."""
    tl = shown.timeline
    name = inspected.name
    if tl is None or len(tl) < 2 or not name or ":" in name:
        return
    with inspected.slot:
        index: int | None = shown.index
        if inspected.info is None:
            index = _removed_here(nav, opened, tl, shown.index, name)
        if index is None:
            return
        with section("History"):
            _history_box(nav, opened, tl, index, name, shown.index)


def _removed_here(nav: Navigator, opened: Opened, tl: Timeline, index: int,
                  name: str) -> int | None:
    """The selected name is not in step ``index``: if the step removed it, say so; returns
    the step where it still exists (to follow its history from), else None."""
    d, against, _ = current_diff(opened, tl, index, nav.state)
    if not isinstance(d, ModuleDiff) or against is None:
        return None
    ref = d.removed_ref(name)
    change = d.change_of_old(name)
    if ref is None and change is None:
        return None
    if change is not None:
        st.info(f"In {_step_name(tl, against)} this was {code(name)}; this step made it "
                f"{code(change.new.name)}: {md(change.describe())}")
        st.button(f"Select {change.new.name}", key=f"renamed:{name}", on_click=go,
                  args=(lambda s: (s.with_(selected=change.new.name), ""),))
    elif ref is not None:
        old = d.old.find(name)
        st.error(f"✕ Removed by this step (it was in {code(ref.where)} at "
                 f"{_step_name(tl, against)}).")
        if old is not None:
            st.code(old.text, language=None, wrap_lines=True)
    return against


def _history_box(nav: Navigator, opened: Opened, tl: Timeline, index: int, name: str,
                 shown_index: int) -> None:
    title = "History across passes" if tl.per_pass else "History: before → after"
    box = st.expander(title, key=f"history:{tl.module_id}:{index}:{name}", on_change="rerun")
    if not box.open:
        return
    with box:
        events = step_history(opened.dump, tl, index, name)
        if not events:
            st.caption("No step changed it: it is the same from the first step to the last.")
            return
        st.caption(f"{len(events)} step{'s' if len(events) != 1 else ''} changed it; "
                   "click one to go there.")
        for k, e in enumerate(events[:60]):
            target = e.name_after or e.name_before
            label = f"step {e.index} · {tl.step(e.index).pass_name} — {e.line}"
            st.button(md(label[:220]), key=f"hist:{name}:{k}", type="tertiary",
                      disabled=e.index == shown_index, on_click=go,
                      args=(N.step_to, tl.step(e.index).stage, target),
                      help=md(f"{e.label}: {e.name_before or '—'} → {e.name_after or '—'}"))
        if len(events) > 60:
            st.caption(f"… and {len(events) - 60} more")
