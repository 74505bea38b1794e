"""Communication: a sharded module's collectives. ``app.py`` places ``panel`` as the
"Communication" detail tab: the collectives (kind, groups, bytes, sync or async, source
line, why the partitioner put each there), the same grouped by source line, and the overlap
of async pairs with compute with the exposed time estimated over the target's link. A click
on a row selects the collective in the graph (after optimizations)."""

from __future__ import annotations

from functools import partial

import streamlit as st

from compiler_bridge.spmd import link_for, num_partitions, partitioner_input
from viz import sharding as SHV

from .actions import select_after
from .kit import Navigator, go, md, selected_row
from .model import Opened, Shown
from .traces import Runtimes


def panel(nav: Navigator, opened: Opened, shown: Shown, rt: Runtimes | None = None) -> None:
    dm = shown.dump_module
    after = dm.after_optimizations
    module = opened.dump.stage(dm) if after is not None else shown.module
    if num_partitions(module) <= 1:
        st.caption(f"{md(dm.name)} runs on one device: no collectives, no shardings.")
        return
    pre = partitioner_input(opened.dump, dm) if after is not None else None
    link = link_for(after.platform if after is not None else "",
                    [opened.name] + [f.name for f in dm.files])   # the dump's name: the chip
    view = SHV.communication(module, pre[0] if pre else None, link)
    rows = view["rows"]
    if not rows:
        st.caption("No collectives in this module.")
        return
    st.markdown(
        f"**{len(rows)}** collectives ({view['async']} async) on "
        f"**{num_partitions(module)}** devices; one device sends "
        f"**{view['total_sent']:,} B** per step, about **{view['estimated_s'] * 1e6:,.2f} µs** "
        f"over {md(link.name)} ({link.bytes_per_second / 1e9:,.0f} GB/s: {md(link.source)}), "
        f"**{view['exposed_s'] * 1e6:,.2f} µs** of it exposed (synchronous, or async with no "
        "compute scheduled between start and done).")
    if pre is not None:
        st.caption(f"Causes read from the partitioner's input, {md(pre[1])}.")
    measured = _measured(rt, dm.id, [r["collective"] for r in rows])
    if measured:      # on a trace: the measured times beside the estimate
        for r in rows:
            r["measured (µs)"] = measured.get(r["collective"])
        st.caption(f"Measured: the {md(measured_stat(rt))} of each collective's time on the "
                   "trace (all devices).")
    names = [r["collective"] for r in rows]
    key = f"comm:{dm.id}"
    st.dataframe(rows, hide_index=True, key=key, selection_mode="single-row",
                 on_select=partial(_on_row, key, names, opened, shown),
                 height=min(38 + 35 * len(rows), 420), width="stretch")
    st.caption("Sent bytes by README's ring / all-to-all formulas; click a row to select "
               "the collective in the graph.")
    st.markdown("**Where the communication comes from** (by source line)")
    st.dataframe(view["by_source"], hide_index=True, width="stretch",
                 height=min(38 + 35 * len(view["by_source"]), 320))


def _on_row(key: str, names: list[str], opened: Opened, shown: Shown) -> None:
    row = selected_row(key, len(names))
    if row is not None:
        go(select_after, opened, shown, names[row])


def measured_stat(rt: Runtimes | None) -> str:
    report = rt.report() if rt is not None else None
    return report.stat if report is not None else ""


def _measured(rt: Runtimes | None, module_id: str, names: list[str]) -> dict[str, float]:
    """Each collective's measured time (µs) on the dump's trace; empty without one."""
    if rt is None or rt.choice is None:
        return {}
    report = rt.report()
    if report is None or report.measured is None:
        return {}
    out = {}
    for name in names:
        row = report.row(name, module_id)
        if row is not None and row.measured_us is not None:
            out[name] = round(row.measured_us, 3)
    return out
