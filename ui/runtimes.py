"""The runtime parts of the page: measured and predicted kernel runtimes.

``app.py`` places them: ``overlay_control`` in the sidebar (none / measured / predicted /
ratio, in the URL as ``overlay``), ``graph_messages`` above the graph (what keeps the
overlay from showing measurements: no trace, a broken one, another stage), the
inspector's line, and the *Runtimes* tab (``panel``: the trace and a place to add one,
the predictor and why, metrics with their noise floor, scatter, roofline, kernels).
The trace and the report come from ``ui.traces`` (``Runtimes``).

Every move (a click on a point or a row) goes through ``viz.navigation`` and the URL.
"""

from __future__ import annotations

import math
import os
from functools import partial

import streamlit as st

from compiler_bridge.dumps import AFTER
from compiler_bridge.perf import RuntimeReport, StepTime, rate_note
from viz import OVERLAYS, GraphView
from viz import navigation as N
from viz import runtime as RV

from .actions import select_after
from .data import kernel_sizes
from .kit import (
    STAGES,
    Navigator,
    code,
    go,
    md,
    overlay_picker,
    selected_points,
    selected_row,
)
from .model import Inspected, Shown
from .traces import Runtimes, trace_row

OVERLAY_NAMES = {"": "none", "measured": "measured", "predicted": "predicted",
                 "ratio": "ratio"}
CHART_CONFIG = {"displayModeBar": False}


# --------------------------------------------------------------------------- sidebar

def overlay_control(nav: Navigator, rt: Runtimes | None) -> None:
    """Sidebar: colour the graph by runtime, and where the runtimes come from."""
    state = nav.state
    sb = st.sidebar
    overlay_picker(
        "Runtime overlay", "pick-overlay", state.overlay, OVERLAYS, OVERLAY_NAMES,
        N.set_overlay,
        help="Colour each kernel by its measured time (the trace), its predicted time "
             "(roofline or learned model), or predicted / measured; boxes show totals per "
             "step. The Runtimes tab below has the numbers.")
    if rt is None:
        return
    if rt.choice is None:
        sb.caption(":material/timer: No trace for this dump: *predicted* works; add a trace "
                   "in the Runtimes tab.")
    elif rt.choice.origin == "dump":
        sb.caption(":material/timer: Trace in the dump: "
                   + code(os.path.basename(rt.choice.name)))
    else:
        sb.caption(f":material/timer: Uploaded trace: {code(rt.choice.name)}")


# --------------------------------------------------------------------------- graph

def graph_messages(nav: Navigator, rt: Runtimes | None) -> None:
    """Above the graph, with the overlay on: what keeps it from showing measurements."""
    state = nav.state
    if not state.overlay or rt is None:
        return
    if rt.warning:
        st.warning(rt.warning)
    if rt.shown.stage != AFTER:
        # the button under the notice: a fifth of the graph's column cut its label
        st.info(f"The runtime overlay colours the module **after optimizations** (what "
                f"ran); this is {md(_stage_name(rt.shown))}.")
        st.button("Show after optimizations", key="rt-to-after", on_click=go,
                  args=(N.choose_step, AFTER))
        return
    r = rt.report()
    if r is None:
        st.error(f"Runtimes cannot be computed: {code(rt.error)}")
        return
    if state.overlay != "predicted":
        problem = rt.problem(r)
        if problem:
            st.warning(problem + " The graph shows no measured colours; *predicted* still "
                       "works.")


def _stage_name(shown: Shown) -> str:
    if shown.timeline is not None:
        step = shown.timeline.step(shown.index)
        if step.kind == "pass":
            return f"pass step {step.index} ({step.pass_name})"
    return STAGES.get(shown.stage, shown.stage)


# --------------------------------------------------------------------------- inspector

def inspector(nav: Navigator, rt: Runtimes | None, inspected: Inspected,
              view: GraphView | None = None) -> None:
    """In the inspector: the selected kernel's runtime, or a box's totals per step, when
    there is a trace or the overlay is on (at the stage that ran)."""
    name = inspected.name
    if rt is None or not name or rt.shown.stage != AFTER:
        return
    if rt.choice is None and not nav.state.overlay:
        return
    if inspected.info is None and not (view is not None and name in view.groups):
        return
    r = rt.report()
    if r is None:
        return
    if inspected.info is None:
        if view is None:
            return
        line = group_line(r, view, name, rt.shown.module, rt.shown.dump_module.id)
        if line:
            with inspected.slot:
                st.markdown(line)
        return
    row = r.row(name, rt.shown.dump_module.id)
    if row is not None:
        with inspected.slot:
            st.markdown(kernel_line(r, row, rt.shown.module))


def group_line(r: RuntimeReport, view: GraphView, gid: str, module, module_id: str) -> str:
    """A box's kernels per step: measured, predicted and their ratio (markdown, or '')."""
    inc = RV.inclusive_totals(r, module, module_id)
    got = {mode: RV.overlay(r, mode, view=view, module_id=module_id,
                           inclusive=inc).values.get(gid) for mode in RV.MODES}
    if got["predicted"] is None:
        return ""
    parts = []
    if got["measured"] is not None:
        parts.append(f"measured **{RV.fmt_us(got['measured'])}** per step")
    fitted = " fitted to this trace" if r.fit else ""
    parts.append(f"predicted **{RV.fmt_us(got['predicted'])}** ({r.predictor}{fitted})")
    if got["ratio"] is not None:
        parts.append(f"×{got['ratio']:.2f} of measured over the measured kernels")
    return ":material/timer: **Runtime of its kernels**: " + \
        md(" · ".join(parts)).replace("\\*", "*")


def kernel_line(r: RuntimeReport, row, module) -> str:
    """One kernel's runtime, measured beside predicted, as a markdown line."""
    fmt = RV._fmt_us
    parts = []
    t = row.timing
    if row.measured_us is not None and t is not None:
        spread = f"p10 {fmt(t.p10_us)} · p90 {fmt(t.p90_us)}, {t.count} executions"
        parts.append(f"measured **{fmt(row.measured_us)}** {r.stat} per execution ({spread})")
        if row.executions_per_run and row.executions_per_run > 1:
            parts.append(f"×{row.executions_per_run:g} per step")
        if row.share is not None:
            parts.append(RV.share_text(row))
        if row.overlap:
            parts.append(f"**overlapped**: other kernels ran during {row.overlap:.0%} of "
                         "its time (that time is split between them in the share)")
    elif r.measured is not None:
        parts.append("not measured (no event for it in the trace)")
    ratio = f", ×{row.ratio:.2f} of measured" if row.ratio is not None else ""
    if row.uncalibrated_us is not None:
        alone = row.uncalibrated_us / row.measured_us if row.measured_us else None
        parts.append(f"predicted **{fmt(row.predicted_us)}** ({r.predictor} fitted to this "
                     f"trace{ratio}; {fmt(row.uncalibrated_us)} on the profile alone"
                     + (f", ×{alone:.2f})" if alone is not None else ")"))
    else:
        parts.append(f"predicted **{fmt(row.predicted_us)}** ({r.predictor}{ratio})")
    inc = RV.inclusive_totals(r, module, row.module_id).get(row.instruction)
    if inc is not None and inc[0]:
        parts.append(f"with body {fmt(inc[0])} per step")
    if row.cost.flops or row.cost.bytes:
        parts.append(f"{RV.si(row.cost.flops, 'flop')}, {RV.si(row.cost.bytes, 'B')}, "
                     f"{row.bound}-bound")
    else:
        parts.append(f"{row.bound}-bound")
    why = rate_note(row.cost, r.device)
    if why:
        parts.append(why)
    return ":material/timer: **Runtime**: " + md(" · ".join(parts)).replace("\\*", "*")


# --------------------------------------------------------------------------- panel

def panel(nav: Navigator, rt: Runtimes | None) -> None:
    """The Runtimes tab."""
    if rt is None:
        st.caption("Runtimes are not available for this module.")
        return
    trace_row(nav, rt)
    r = rt.report()
    if r is None:
        st.error(f"Runtimes cannot be computed: {code(rt.error)}")
        return
    st.markdown(predictor_line(r, rt))
    step = r.step_time(rt.shown.dump_module.id)
    if step is not None:
        st.markdown(step_line(step, r))
    estimate = RV.xla_estimate_lines(r, rt.shown.dump_module.id)
    if estimate:
        st.markdown("  \n".join(estimate))
    if rt.shown.stage != AFTER:
        st.caption(f"These are the kernels of the module after optimizations (what ran); "
                   f"this is {md(_stage_name(rt.shown))}. Picking one shows it there.")
    problem = rt.problem(r, in_panel=True)
    if problem:
        st.warning(problem)
    unread = r.measured.errors if r.measured is not None else []
    if unread:      # beside files that were read: the runtimes are from those alone
        st.warning(f"**{len(unread)} trace file(s) could not be read**; the runtimes are "
                   "from the rest:  \n" + "  \n".join(md(e) for e in unread))
    measured = r.measured_rows
    if r.measured is not None and measured:
        st.caption(_measured_line(r))
    notes = [n for n in r.notes if ("has no events in the trace" not in n or not measured)
             and not n.startswith("skipped: ")]
    if notes:
        with st.expander(f"Notes on the trace ({len(notes)})"):
            st.markdown("\n".join(f"- {md(n)}" for n in notes))
    if len(measured) >= 2:
        _metrics(r)
    selected = nav.state.selected
    if measured:
        charts = (("rt-scatter", RV.scatter_figure), ("rt-roofline", RV.roofline_figure))
        for col, (name, figure) in zip(st.columns(2, gap="medium"), charts):
            with col:
                fig = figure(r, selected=selected)
                fig.update_layout(height=420, title={"font": {"size": 14}})
                key = f"{name}:{rt.shown.dump_module.id}:{r.key}:{selected}"
                st.plotly_chart(fig, key=key, on_select=partial(_on_points, key, rt),
                                selection_mode="points", config=CHART_CONFIG)
        st.caption("Click a point to select that kernel in the graph. Left: on the dashed "
                   "diagonal the prediction is exact, in the grey band within ×2. Right: "
                   "how close each kernel came to the device's roofs.")
        _timeline(rt, r, selected)
    _kernels(nav, rt, r)


def _timeline(rt: Runtimes, r: RuntimeReport, selected: str) -> None:
    """One step's kernels in per-thread lanes (a trace viewer): click selects."""
    mid = rt.shown.dump_module.id
    runs = RV.timeline_runs(r, mid)
    if not runs:
        return
    mt = r.measured.module(mid) if r.measured is not None else None
    median = mt.median_run() if mt is not None else None
    names = [k for k, _ in runs]
    labels = {k: f"step {i + 1} of {len(runs)} · {RV.fmt_us(us)}"
                 + (" (median)" if k == median else "") for i, (k, us) in enumerate(runs)}
    st.markdown("**Trace timeline**")
    run = st.selectbox("Step", names, index=names.index(median) if median in names else 0,
                       format_func=lambda k: labels[k], key=f"rt-step:{mid}:{r.key}")
    fig = RV.timeline_figure(r, mid, run, selected=selected)
    key = f"rt-timeline:{mid}:{r.key}:{run}:{selected}"
    st.plotly_chart(fig, key=key, on_select=partial(_on_points, key, rt),
                    selection_mode="points",
                    config={"scrollZoom": True, "displayModeBar": True,
                            "displaylogo": False})
    st.caption("Drag to pan, scroll to zoom, double-click to reset; hover a bar for the "
               "instruction, click it to select it in the graph. Hatched bars: an "
               "asynchronous thunk's work on the thread pool after its event; a dark "
               "outline: the kernel ran alongside others.")


def predictor_line(r: RuntimeReport, rt: Runtimes) -> str:
    """Which predictor, and why that one."""
    dev = r.device
    path = code(_home(rt.model_path))
    if r.predictor == "learned" and r.predictor_detail.startswith("default model"):
        head, _, rest = r.predictor_detail.partition(" (")
        text = (f"**Predictor: {md(head)}** ({md(rest.rstrip(')'))}): shipped with HLO "
                f"Lens, a correction to the roofline of {md(dev.name)}, used because no "
                f"model of your own for {md(dev.kind)} devices is saved at {path} "
                "(`python -m compiler_bridge train DUMP_DIRS… --out "
                f"{_home(rt.model_path)}` fine-tunes it on your traces).")
    elif r.predictor == "learned":
        text = (f"**Predictor: learned model** ({md(r.predictor_detail)}): a correction "
                f"to the roofline of {md(dev.name)}, used because a model for "
                f"{md(dev.kind)} devices is saved at {path}.")
        tau = r.roofline_metrics.get("kendall_tau") if r.roofline_metrics else None
        if tau is not None and not math.isnan(tau):
            text += f" The roofline alone ranks these kernels with Kendall tau {tau:.2f}."
    else:
        text = (f"**Predictor: roofline** on {md(dev.name)}: max(flops / peak, bytes / "
                "bandwidth) + launch overhead per kernel, because no learned model for "
                f"{md(dev.kind)} devices is saved yet (`python -m compiler_bridge train "
                f"DUMP_DIRS… --out {_home(rt.model_path)}` trains one on dumps with traces; "
                "the app then uses it).")
    if dev.measured:
        text += " Device profile: calibrated on this machine."
    elif dev.kind == "cpu":
        text += (" Device profile: generic CPU (`python -m compiler_bridge calibrate` "
                 "measures this machine).")
    else:
        text += f" Device profile: {md(dev.source)}."
    return text


def step_line(step: StepTime, r: RuntimeReport) -> str:
    """The module's time per step: what the predictor sums to, what was measured."""
    fitted = step.uncalibrated_us is not None and step.median_fit_us is not None
    how = ("expected time (its time fitted to this trace times the fit's smearing factor)"
           if fitted else "predicted time" if r.predictor != "roofline" else "roofline")
    text = (f"**Step time: {RV.fmt_us(step.predicted_us)} predicted** (each kernel's {how} "
            "times its executions per step, summed")
    if fitted:
        text += (f"; {RV.fmt_us(step.median_fit_us or 0)} from the fitted times alone, "
                 f"{RV.fmt_us(step.uncalibrated_us or 0)} on the profile alone")
    text += f"; an estimate: {md(step.caveat)})" if step.caveat else ")"
    if step.measured_us is not None:
        text += f" · {RV.fmt_us(step.measured_us)} measured (median step while profiling)"
    if step.far_off and step.ratio is not None:
        text += (f" · :red[**{step.ratio:.2g}× the measured step: more than 2× off**] "
                 "(the kernel table shows which kernels)")
    return text + "."


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home and path.startswith(home + os.sep) else path


def _measured_line(r: RuntimeReport) -> str:
    m = r.measured
    if m is None:
        return ""
    mt = m.module(r.rows[0].module_id) if r.rows else None
    parts = [f"{len(r.measured_rows)} of {len(r.rows)} kernels measured",
             f"{m.matched_events:,} per-op events matched"
             + (f", {m.unmatched_events:,} match nothing" if m.unmatched_events else "")]
    if mt is not None:
        parts.append(f"{len(mt.step_us)} runs, step {RV.fmt_us(mt.step_median_us)} median, "
                     f"{RV.fmt_us(mt.step_mean_us)} mean (while profiling)")
    parts.append(f"{r.stat} per execution")
    return " · ".join(parts) + f" · from {md(', '.join(m.sources))}"


def _fmt_metric(value, percent: bool) -> str:
    if value is None:
        return "–"
    return f"{value:.0%}" if percent else f"{value:.2f}"


def _metrics(r: RuntimeReport) -> None:
    rows = RV.metrics_rows(r)
    learned = r.predictor != "roofline"
    fitted = r.fit is not None
    ours = f"{r.predictor} fitted to this trace (held-out kernels)" if fitted else r.predictor
    table = []
    for m in rows:
        row = {"metric": m["metric"], ours: _fmt_metric(m["value"], m["percent"]),
               "noise floor": _fmt_metric(m["noise_floor"], m["percent"]),
               "short of the floor": ("at the floor" if m["gap"] == 0 else
                                      _fmt_metric(m["gap"], m["percent"]))
               if m["gap"] is not None else "–"}
        if fitted:
            row[f"{r.predictor}, profile alone"] = _fmt_metric(m["uncalibrated"], m["percent"])
        if learned:
            row["roofline" + (", profile alone" if fitted else "")] = \
                _fmt_metric(m["roofline"], m["percent"])
        row["better"] = "higher" if m["higher_is_better"] else "lower"
        row["what it measures"] = m["help"]
        table.append(row)
    st.dataframe(table, hide_index=True, key="rt-metrics", width="stretch",
                 column_config={"what it measures": st.column_config.TextColumn(width="large")})
    st.caption("Noise floor: the same metric between two halves of the measurements "
               "(alternate profiling sessions when the trace has several, else alternate "
               "runs: the trace against itself). The goal is the floor: a prediction is as "
               "good as the measurement lets it be when it agrees with the measurement as "
               "well as the measurement agrees with itself (*short of the floor*: how far "
               "it is from that); with few runs the floor is itself noisy." + (_fit_caption(r) if fitted else
                                                  " " + md(r.fit_note) if r.fit_note else ""))


def _fit_caption(r: RuntimeReport) -> str:
    """What the fit to the trace is and how it is scored."""
    fit = r.fit or {}
    return (f" *Fitted to this trace*: a correction of the {r.predictor} for the machine "
            "that made the trace (log time = offset + slope × log predicted + an offset per "
            "kind of kernel, a median regression so a few kernels in a slow mode do not "
            f"pull the rest; offset {fit.get('offset', 0):.2f}, slope "
            f"{fit.get('slope', 1):.2f}), scored on kernels whose own measurement the fit "
            f"did not see ({fit.get('folds')}-fold over kernels). *Profile alone*: the "
            "prediction without it, what a dump without a trace gets.")


TABLE_CONFIG = {
    "instruction": st.column_config.TextColumn("instruction", pinned=True),
    "fused_ops": st.column_config.NumberColumn("ops", format="%d",
                                               help="A fusion's fused ops (not parameters)"),
    "share": st.column_config.NumberColumn(
        "share of step (mean)", format="percent",
        help="Mean time per step over the mean step; time it ran alongside other kernels "
             "is split between them, so shares add up to at most 100%"),
    "per_step_us": st.column_config.NumberColumn(
        "µs per step (mean over steps)", format="%.2f",
        help="Its time in a step, the mean over the profiled steps (outlier runs lift it "
             "above runs per step × the median per execution)"),
    "overlap": st.column_config.NumberColumn(
        "overlapped", format="percent",
        help="Share of its own time during which kernels on other threads (or the "
             "thread's other ops, while an asynchronous thunk waited) ran too"),
    "measured_us": st.column_config.NumberColumn("measured µs (median per execution)",
                                                 format="%.2f"),
    "predicted_us": st.column_config.NumberColumn("predicted µs", format="%.2f"),
    "xla_estimate_us": st.column_config.NumberColumn(
        "XLA's estimate µs", format="%.2f",
        help="XLA:TPU's estimated_cycles of the kernel (after_codegen.txt) at the chip's "
             "clock: XLA's own cost model, a prediction, not a measurement"),
    "ratio": st.column_config.NumberColumn("pred / meas", format="%.2f"),
    "executions_per_run": st.column_config.NumberColumn("runs per step", format="%.3g"),
    "p10_us": st.column_config.NumberColumn("p10 µs", format="%.2f"),
    "p90_us": st.column_config.NumberColumn("p90 µs", format="%.2f"),
    "max_us": st.column_config.NumberColumn("max µs", format="%.2f",
                                            help="Its slowest execution"),
    "outlier_runs": st.column_config.NumberColumn(
        "outlier runs", format="%d",
        help="Profiled steps in which this kernel took over 3× its median step's time"),
    "work_us": st.column_config.NumberColumn(
        "µs start to completion", format="%.2f",
        help="Median per execution from its start to its completion: an asynchronous "
             "dot's or convolution's work on the thread pool included; the roofline chart's "
             "flop rate is its flops over this"),
    "flops": st.column_config.NumberColumn("flops", format="compact"),
    "bytes": st.column_config.NumberColumn("bytes", format="compact"),
    "intensity": st.column_config.NumberColumn("flop / byte", format="%.2f"),
}


def _kernels(nav: Navigator, rt: Runtimes, r: RuntimeReport) -> None:
    try:
        sizes = kernel_sizes(rt.opened.dump, rt.shown.dump_module.id)
    except (KeyError, ValueError):
        sizes = {}
    sorts = list(RV.SORTS) if r.measured_rows else \
        ["predicted_us"] + [k for k in RV.SORTS if k not in ("share", "measured_us",
                                                             "predicted_us")]
    head = st.columns([3, 2], vertical_alignment="bottom")
    sort = head[1].selectbox("Sort by (largest first)", sorts, key="rt-sort",
                             format_func=lambda k: RV.SORTS[k])
    rows = RV.kernel_rows(r, sizes=sizes, sort=sort or sorts[0])
    if not rows:
        st.caption("This module runs no kernels.")
        return
    names = [x["instruction"] for x in rows]
    head[0].markdown(f"**Kernels and fusions** ({len(rows):,}, by {RV.SORTS[sort or sorts[0]]})")
    key = f"rt-kernels:{rt.shown.dump_module.id}:{r.key}:{sort}:{nav.state.selected}"
    columns = [c for c in RV.TABLE_COLUMNS if r.measured_rows or c not in
               ("share", "per_step_us", "overlap", "measured_us", "ratio",
                "executions_per_run", "p10_us", "p90_us", "max_us", "outlier_runs",
                "work_us")]
    if not r.xla_estimates:
        columns.remove("xla_estimate_us")
    # a cell with no value (not measured, no spread) shows '–' as the app's other tables
    st.dataframe(rows, hide_index=True, key=key, column_order=columns, placeholder="–",
                 column_config=TABLE_CONFIG, on_select=partial(_on_row, key, names, rt),
                 selection_mode="single-row", height=min(38 + 35 * len(rows), 460))
    st.caption(f"Click a row to select that kernel in the graph. *ops*: a fusion's fused "
               f"instructions other than parameters (its node's label counts the same). "
               f"*measured* is the {r.stat} per execution; *share of step* and *µs per "
               "step* are means over the runs (only means add up), so a few slow runs "
               "(*outlier runs*, *max*) lift them above *runs per step* × *measured*. "
               "Kernels in a loop body run once per iteration: *runs per step* counts "
               "them, *share of step* sums them.")


# --------------------------------------------------------------------------- selection

def _on_points(key: str, rt: Runtimes) -> None:
    name = RV.selectable(selected_points(st.session_state.get(key)))
    if name:
        go(select_after, rt.opened, rt.shown, name)


def _on_row(key: str, names: list[str], rt: Runtimes) -> None:
    row = selected_row(key, len(names))
    if row is not None:
        go(select_after, rt.opened, rt.shown, names[row])
