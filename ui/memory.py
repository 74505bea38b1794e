"""Memory: where the module's bytes go. ``app.py`` places ``panel`` as the "Memory" detail
tab (totals, live bytes over the schedule with the peak, the values live at the peak by
op_name scope, the selected instruction's values), ``overlay_control`` in the sidebar
(colour the graph by bytes, in the URL as ``memory``) and ``stepper_line`` under the pass
stepper (temp and peak, or why a step has none).

Everything comes from the after-optimizations buffer assignment and live ranges
(``compiler_bridge.memory``); a click on the chart or a table row selects the instruction
in the graph.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from compiler_bridge.dumps import AFTER, DumpModule
from compiler_bridge.memory import ModuleMemory
from viz import MEMORY_OVERLAYS, ViewState
from viz import memory as MV
from viz import panels as P

from .actions import select_after
from .data import memory
from .kit import Navigator, code, go, md, overlay_picker, selected_points, selected_row
from .model import Inspected, Opened, Picked, Shown

OVERLAY_NAMES = {"": "off", "defined": "bytes defined", "live": "bytes live"}
CHART_CONFIG = {"displayModeBar": False}


def memory_of(opened: Opened, module: DumpModule) -> tuple[ModuleMemory | None, str]:
    """The module's memory, or why there is none."""
    return memory(opened.dump, module.id)


# --------------------------------------------------------------------------- sidebar

def set_memory(state: ViewState, mode: str) -> ViewState:
    """Colour the graph by bytes ('' = off); the runtime overlay makes way for it."""
    mode = mode if mode in MEMORY_OVERLAYS else ""
    return state.with_(memory=mode, overlay="" if mode else state.overlay)


def overlay_control(nav: Navigator, opened: Opened, shown: Shown) -> None:
    """Sidebar: colour the graph by the bytes each instruction defines or that are live
    while it runs (after optimizations, where XLA assigned buffers)."""
    state = nav.state
    sb = st.sidebar
    overlay_picker(
        "Memory overlay", "pick-memory", state.memory, MEMORY_OVERLAYS, OVERLAY_NAMES,
        set_memory,
        help="Colour each instruction by the bytes of the values it defines, or by the "
             "bytes live at its place in the schedule (from XLA's buffer assignment and "
             "live ranges); boxes show sums (defined) or maxima (live).")
    if not state.memory:
        return
    if state.overlay:
        sb.caption("The runtime overlay is on: it colours the graph instead.")
        return
    if shown.stage != AFTER:
        sb.caption("XLA assigns buffers after optimizations: the overlay colours that stage.")
        return
    mem, why = memory_of(opened, shown.dump_module)
    if mem is None:
        sb.caption(f"No memory overlay: {code(why.splitlines()[0])}")
        return
    ov = MV.memory_overlay(mem, state.memory)
    sb.markdown(f'<div class="hl-legend">{MV.overlay_legend_html(ov)}</div>',
                unsafe_allow_html=True)


# --------------------------------------------------------------------------- stepper

def stepper_line(opened: Opened, picked: Picked) -> None:
    """Under the pass stepper: the module's temp and peak bytes, and why a pass step has
    none of its own (XLA assigns buffers once, after the last pass)."""
    if len(picked.timeline) < 2:
        return
    mem, why = memory_of(opened, picked.dump_module)
    if mem is None:
        st.caption(f":material/memory: No temp or peak bytes: {md(why.splitlines()[0])}")
        return
    t = mem.totals()
    peak = f", peak {P.human_bytes(t.peak_bytes)} live" if t.peak_bytes is not None else ""
    if picked.stage == AFTER:
        st.caption(f":material/memory: After optimizations: temp {P.human_bytes(t.temp_bytes)}"
                   f"{peak} (the Memory tab has the rest).")
    else:
        st.caption(f":material/memory: Temp and peak bytes exist for the module after "
                   f"optimizations only (temp {P.human_bytes(t.temp_bytes)}{peak}): XLA "
                   "assigns buffers once, after its last pass, so this step has none to "
                   "compare; comparing two dumps shows their deltas.")


# --------------------------------------------------------------------------- tab

def _on_points(key: str, opened: Opened, shown: Shown) -> None:
    for p in selected_points(st.session_state.get(key)):
        cd = p.get("customdata") if isinstance(p, dict) else None
        if cd and cd[0] != "(end)":
            go(select_after, opened, shown, str(cd[0]))
            return


def _on_row(key: str, names: list[str], opened: Opened, shown: Shown) -> None:
    row = selected_row(key, len(names))
    if row is not None:
        go(select_after, opened, shown, names[row])


def _totals(mem: ModuleMemory) -> None:
    t = mem.totals()
    cells = [("Arguments", t.argument_bytes), ("Output", t.output_bytes),
             ("Temp", t.temp_bytes), ("Alias", t.alias_bytes),
             ("Constants", t.constant_bytes), ("Thread-local", t.thread_local_bytes),
             ("Peak live", t.peak_bytes)]
    for col, (label, value) in zip(st.columns(len(cells)), cells):
        col.metric(label, P.human_bytes(value) if value is not None else "–",
                   help=f"{value:,} bytes" if value is not None else None)
    if t.peak_index is not None and t.peak_instruction is not None:
        st.markdown(f"**Peak**: {P.human_bytes(t.peak_bytes or 0)} live at position "
                    f"{t.peak_index} of the schedule, at {code(t.peak_instruction)}.")
    lr = mem.live_range
    if lr is not None and lr.peak_at is not None and lr.peak_at != t.peak_index \
            and lr.peak_bytes is not None:
        st.caption(f"XLA's live-range file names position {lr.peak_at} as its peak "
                   f"({P.human_bytes(lr.peak_bytes)} live there, the same sum as here): it "
                   "looks for the peak sizing each value by its whole defining instruction "
                   "(a tuple element as the tuple), then lists the values' own sizes.")
    for note in t.missing:
        st.info(md(note))


def panel(nav: Navigator, opened: Opened, shown: Shown) -> None:
    """The Memory tab."""
    mem, why = memory_of(opened, shown.dump_module)
    if mem is None:
        st.info(f"No memory view for this module: {code(why)}")
        return
    if shown.stage != AFTER:
        st.caption("Buffers are assigned after optimizations: this is that module's memory; "
                   "picking an instruction shows it there.")
    st.caption(f"{len(mem.allocations):,} allocations holding {len(mem.lives):,} values "
               "(XLA's buffer assignment; totals as `memory_analysis()` counts them).")
    _totals(mem)
    selected = nav.state.selected
    if mem.curve:
        by = st.segmented_control("Stack by", list(MV.BY), key="mem-by", default="kind",
                                  format_func=lambda b: {"kind": "kind of allocation",
                                                         "allocation": "allocation"}[b])
        fig = MV.timeline_figure(mem, by or "kind", selected=selected)
        key = f"mem-chart:{shown.dump_module.id}:{by}:{selected}"
        st.plotly_chart(fig, key=key, on_select=partial(_on_points, key, opened, shown),
                        selection_mode="points", config=CHART_CONFIG)
        st.caption("Click a point to select its instruction in the graph. Live bytes are "
                   "the sizes of the values live at each position (HloLiveRange), a value "
                   "from its definition to its last use, both included.")
        _at_peak(nav, mem, opened, shown)
    if selected:
        _selected(mem, selected)


def _at_peak(nav: Navigator, mem: ModuleMemory, opened: Opened, shown: Shown) -> None:
    peak = mem.peak_index
    if peak is None:
        return
    rows = MV.live_rows(mem, peak)
    st.markdown(f"**Live at the peak** ({len(rows):,} values, "
                f"{P.human_bytes(mem.curve[peak])})")
    depth = st.slider("op_name levels", 1, 6, 2, key="mem-depth",
                      help="How many levels of the op_name scope group the values")
    scopes = MV.scope_rows(rows, depth)
    st.dataframe([{"scope": s.scope, "bytes": s.bytes, "share": s.share, "values": s.values,
                   "biggest": s.biggest} for s in scopes],
                 hide_index=True, key=f"mem-scopes:{shown.dump_module.id}:{depth}",
                 column_config={
                     "bytes": st.column_config.NumberColumn("bytes", format="compact"),
                     "share": st.column_config.ProgressColumn("share", format="percent",
                                                              min_value=0, max_value=1)},
                 height=min(38 + 35 * len(scopes), 320), width="stretch")
    names = [str(r["instruction"]) for r in rows]
    key = f"mem-peak:{shown.dump_module.id}:{nav.state.selected}"
    st.dataframe(rows, hide_index=True, key=key, on_select=partial(_on_row, key, names,
                                                                     opened, shown),
                 selection_mode="single-row", height=min(38 + 35 * len(rows), 460),
                 column_config={"bytes": st.column_config.NumberColumn("bytes",
                                                                       format="compact")},
                 width="stretch")
    st.caption("Click a row to select the instruction that defines the value.")


def _selected(mem: ModuleMemory, name: str) -> None:
    rows = MV.value_rows(mem, name)
    if not rows:
        return
    st.markdown(f"**{md(name)}**: its values in the buffer assignment")
    st.dataframe(rows, hide_index=True, key=f"mem-values:{name}", width="stretch")


# --------------------------------------------------------------------------- inspector

def inspector(opened: Opened, shown: Shown, inspected: Inspected) -> None:
    """In the inspector, after optimizations: where the selected instruction's values
    live (allocation, offset, size) and which values share those bytes."""
    if inspected.info is None or shown.stage != AFTER:
        return
    mem, _ = memory_of(opened, shown.dump_module)
    if mem is None:
        return
    rows = MV.value_rows(mem, inspected.name)
    if not rows:
        return
    with inspected.slot:
        lines = []
        for r in rows[:8]:
            share = f"; shares its bytes with {code(str(r['shares its bytes with']))}" \
                if r["shares its bytes with"] else ""
            lines.append(f"- :material/memory: {code(str(r['value']))}: "
                         f"{P.human_bytes(int(str(r['bytes'])))} in allocation "
                         f"{r['allocation']} ({md(str(r['kind']))}, "
                         f"{P.human_bytes(int(str(r['allocation bytes'])))}) at offset "
                         f"{r['offset']:,}{share}")
        if len(rows) > 8:
            lines.append(f"- … {len(rows) - 8} more values (the Memory tab lists them)")
        st.markdown("\n".join(lines))
