"""Memory: where the module's bytes go. ``app.py`` places ``panel`` as the "Memory" detail
tab (``memory_analysis()``'s totals and peak, bytes per memory space, per device for a
sharded module, the out-of-memory explanation, live bytes over the schedule with their
maximum, the values live there by op_name scope, the selected instruction's values; one
unit system, binary), ``overlay_control`` in the sidebar
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
    peak = f", peak {P.human_bytes(t.peak_bytes)}" if t.peak_bytes is not None else ""
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


def _metrics(cells: list[tuple[str, int | None, str]]) -> None:
    for col, (label, value, why) in zip(st.columns(len(cells)), cells):
        col.metric(label, P.human_bytes(value) if value is not None else "–",
                   help=(f"{value:,} bytes. " if value is not None else "") + why)


_FIGURES = {"temp_bytes": "Temp", "peak_bytes": "Peak (XLA)"}


def _totals(mem: ModuleMemory) -> None:
    t = mem.totals()
    x = mem.xla()
    _metrics([("Arguments", t.argument_bytes, "Entry-parameter allocations."),
              ("Output", t.output_bytes, "Maybe-live-out allocations."),
              ("Alias", t.alias_bytes, "Arguments donated to (aliased with) the output."),
              ("Temp", t.temp_bytes, "Preallocated temp allocations, as memory_analysis() "
               "counts them."),
              ("Peak (XLA)", t.peak_bytes, "XLA's peak_memory_in_bytes: " + x.rule + ".")])
    _metrics([("Constants", t.constant_bytes, ""),
              ("Thread-local", t.thread_local_bytes, "Scratch of one thread, not in the peak."),
              ("All allocations", t.total_bytes, "Every allocation, every memory space."),
              ("Live-bytes peak", t.live_peak_bytes,
               "The maximum of the live-bytes curve below: every value live at one position, "
               "all memory spaces and tuple tables included. Not XLA's definition.")])
    if t.peak_bytes is not None:
        where = (f", the temporaries peaking at position {t.peak_index} of the schedule "
                 f"({code(t.peak_instruction)})" if t.peak_index is not None
                 and t.peak_instruction is not None and x.heap_peak_bytes else "")
        heap = (f" + temporaries {P.human_bytes(x.heap_peak_bytes)}"
                if x.heap_colors and x.heap_peak_bytes is not None else "")
        st.markdown(f"**Peak** {P.human_bytes(t.peak_bytes)} = whole-run buffers "
                    f"{P.human_bytes(x.whole_run_bytes)}{heap}{where}.")
        st.caption(f"{md(x.rule)}. The figure `compiled.memory_analysis()` reports, "
                   "computed from the dump as XLA computes it (ARCHITECTURE.md §9.9).")
    for figure, d in x.known_differences.items():
        # measured gaps to XLA's own figure: said, never left silent (§9.9)
        st.warning(f"{_FIGURES.get(figure, figure)} may be {d['direction']} XLA's "
                   f"`memory_analysis()` by up to {d['up_to']:.1%}: {md(d['why'])}.")
    _spaces(mem)
    _devices(mem)
    for note in t.missing:
        st.info(md(note))


def _spaces(mem: ModuleMemory) -> None:
    """Bytes per memory space, and why XLA:TPU says temp 0."""
    x = mem.xla()
    if len(x.spaces) > 1:
        st.markdown("**Memory spaces** (bytes the buffer assignment reserves): " + " · ".join(
            f"{md(name)} {P.human_bytes(size)}" for name, size in x.spaces.items()))
    if x.target == "tpu" and x.temp_bytes == 0 and x.spaces.get("VMEM"):
        st.caption("XLA:TPU reports temp 0: its temporaries live in VMEM (layouts `S(1)`, "
                   "color 1) and its HBM temp allocation holds only tuple index tables; "
                   "the peak still counts the VMEM temporaries' peak.")


def _devices(mem: ModuleMemory) -> None:
    """A sharded program: the numbers are one device's; the total over devices."""
    t = mem.totals()
    replicas, partitions = mem.devices
    if t.devices < 2:
        return
    total = (f": peak {P.human_bytes(t.peak_bytes * t.devices)}"
             if t.peak_bytes is not None else "")
    st.info(f"Per device: after SPMD partitioning this module is what **one** of "
            f"{t.devices} devices runs (replica_count {replicas} × num_partitions "
            f"{partitions}, from the module header); every number here is one device's. "
            f"Over all {t.devices} devices{total}, arguments "
            f"{P.human_bytes(t.argument_bytes * t.devices)}, all allocations "
            f"{P.human_bytes(t.total_bytes * t.devices)}.")


def _oom(mem: ModuleMemory, module_id: str) -> None:
    """The out-of-memory explanation: from the error text the user pastes (the dump
    folder does not hold it) or, on a TPU, from the chip's HBM."""
    key = f"mem-oom-error:{module_id}"
    found = mem.oom(str(st.session_state.get(key) or ""))
    with st.expander("Out of memory?", expanded=found is not None):
        text = st.text_area(
            "The compile's error text (optional)", key=key, height=80,
            placeholder="RESOURCE_EXHAUSTED: Ran out of memory on HBM, ...",
            help="JAX raises the error; the dump folder does not hold it. Paste it to "
                 "compare with what XLA says is available.")
        if found is None:
            st.caption("No sign of an out-of-memory compile" + (
                ": the error text names no required and available bytes." if text else
                "."))
            return
        avail = (f"{P.human_bytes(found.available_bytes)} available ({md(found.available_from)})"
                 if found.available_bytes is not None else "the device's memory unknown")
        err = found.error
        said = (f" The error says {P.human_bytes(err.required_bytes)} required."
                if err is not None else "")
        st.error(f"Ran out of memory: the buffers need {P.human_bytes(found.required_bytes)} "
                 f"of {found.space} (the buffer assignment's {found.space} allocations), "
                 f"{avail}.{said}")
        rows = MV.oom_rows(found)
        st.dataframe(rows, hide_index=True, key=f"mem-oom:{module_id}", width="stretch",
                     column_config={"bytes": st.column_config.NumberColumn(
                         "bytes", format="localized")})
        st.caption("The biggest buffers in HBM: the whole-run ones (arguments, outputs) and "
                   "the temporaries live where HBM's temporaries peak; tile padding is what "
                   "a tiled layout adds to the array's own bytes.")


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
    _oom(mem, shown.dump_module.id)
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
                   "from its definition to its last use, both included, in every memory "
                   "space: their maximum is the live-bytes peak, not XLA's peak (the dotted "
                   "line).")
        _at_peak(nav, mem, opened, shown)
    if selected:
        _selected(mem, selected)


def _at_peak(nav: Navigator, mem: ModuleMemory, opened: Opened, shown: Shown) -> None:
    peak = mem.peak_index
    if peak is None:
        return
    rows = MV.live_rows(mem, peak)
    at = mem.instruction_at(peak)
    st.markdown(f"**Live at the live-bytes peak**, position {peak} of the schedule"
                + (f" ({code(at)})" if at else "")
                + f": {len(rows):,} values, {P.human_bytes(mem.curve[peak])}")
    depth = st.slider("op_name levels", 1, 6, 2, key="mem-depth",
                      help="How many levels of the op_name scope group the values")
    scopes = MV.scope_rows(rows, depth)
    st.dataframe([{"scope": s.scope, "bytes": s.bytes, "size": P.human_bytes(s.bytes),
                   "share": s.share, "values": s.values, "biggest": s.biggest}
                  for s in scopes],
                 hide_index=True, key=f"mem-scopes:{shown.dump_module.id}:{depth}",
                 column_config={
                     "bytes": st.column_config.NumberColumn("bytes", format="localized"),
                     "share": st.column_config.ProgressColumn("share", format="percent",
                                                              min_value=0, max_value=1)},
                 height=min(38 + 35 * len(scopes), 320), width="stretch")
    names = [str(r["instruction"]) for r in rows]
    key = f"mem-peak:{shown.dump_module.id}:{nav.state.selected}"
    st.dataframe(rows, hide_index=True, key=key, on_select=partial(_on_row, key, names,
                                                                     opened, shown),
                 selection_mode="single-row", height=min(38 + 35 * len(rows), 460),
                 column_config={"bytes": st.column_config.NumberColumn("bytes",
                                                                       format="localized")},
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
