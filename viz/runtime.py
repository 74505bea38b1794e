"""Runtime panel views: pure builders from a ``RuntimeReport`` to plotly figures, table
rows and graph decorations. No Streamlit, no file reading.

* :func:`scatter_figure`: log-log predicted vs measured, one point per measured kernel,
  ``customdata = [instruction, module_id]`` so a click selects the node
  (``st.plotly_chart(fig, on_select="rerun", selection_mode="points")``, then
  ``event.selection.points[0]["customdata"][0]``);
* :func:`metrics_rows`: each metric beside its noise floor;
* :func:`kernel_rows`: kernels by measured share of step time, predicted beside;
* :func:`roofline_figure`: arithmetic intensity vs achieved flop rate, under the device's
  roofs;
* :func:`overlay` -> :class:`Overlay`: ``decorations`` for ``viz.graph.draw``
  (node fill by measured, predicted or predicted/measured, value in the label), with
  group totals through ``GraphView.group_of`` and a legend.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

from compiler_bridge.perf import HIGHER_IS_BETTER, METRICS
from compiler_bridge.perf import KernelRow, RuntimeReport

from . import categories as C
from .grouping import GroupIndex, GroupInfo

MODES = ("measured", "predicted", "ratio")
# a log axis labelled at each power of ten (plotly's own labels between them read
# "2, 5, 2, 5" without their magnitude), with unlabelled minor ticks between
LOG_AXIS = dict(type="log", dtick=1, minor=dict(ticks="outside", dtick="D1", ticklen=3,
                                                showgrid=False))

METRIC_LABELS = {
    "kendall_tau": ("Kendall tau", "rank agreement over all pairs of kernels (1 = same order)"),
    "spearman": ("Spearman", "correlation of ranks"),
    "median_ape": ("median APE", "median of |predicted - measured| / measured"),
    "time_weighted_ape": ("time-weighted APE",
                          "sum |predicted - measured| / sum measured: slow kernels count most"),
    "top10_recall": ("top-10 recall",
                     "share of the 10 slowest measured kernels among the 10 slowest predicted"),
}


def fmt_us(us: float | None) -> str:
    if us is None or (isinstance(us, float) and math.isnan(us)):
        return "–"
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    if us >= 10:
        return f"{us:.0f} µs"
    return f"{us:.2f} µs"


_fmt_us = fmt_us       # its earlier name, which tests/test_app_runtime.py still reads


def si(x: float, unit: str = "") -> str:
    for p, s in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= s:
            return f"{x / s:.1f} {p}{unit}"
    return f"{x:.0f} {unit}".rstrip()


# --------------------------------------------------------------------------- scatter

def scatter_figure(report: RuntimeReport, selected: str = ""):
    """Log-log scatter of predicted vs measured µs, one point per measured kernel; with a
    prediction fitted to the trace, each kernel's held-out prediction (the one the
    metrics score: fitted without its own measurement)."""
    import plotly.graph_objects as go
    rows = report.measured_rows

    def shown(r: KernelRow) -> float:
        return r.held_out_us if r.held_out_us is not None else r.predicted_us
    fig = go.Figure()
    if not rows:
        fig.add_annotation(text=report.trace_error or "no measured kernels", showarrow=False,
                           x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_layout(height=360, xaxis_visible=False, yaxis_visible=False)
        return fig
    by_cat: dict[str, list[KernelRow]] = {}
    for r in rows:
        by_cat.setdefault(_category(r), []).append(r)
    values = [r.measured_us for r in rows if r.measured_us is not None] + \
        [shown(r) for r in rows]
    lo, hi = min(values), max(values)
    lo, hi = max(lo / 1.5, 1e-3), hi * 1.5
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="predicted = measured",
                             line=dict(color="#495057", dash="dash", width=1),
                             hoverinfo="skip"))
    for factor, name in ((2.0, "×2"),):
        fig.add_trace(go.Scatter(x=[lo, hi, hi, lo], y=[lo * factor, hi * factor, hi / factor,
                                                        lo / factor],
                                 fill="toself", mode="none", fillcolor="rgba(73,80,87,0.07)",
                                 name=f"within {name}", hoverinfo="skip"))
    for cat, rs in sorted(by_cat.items()):
        fig.add_trace(go.Scatter(
            x=[r.measured_us for r in rs], y=[shown(r) for r in rs], mode="markers",
            name=cat, customdata=[[r.instruction, r.module_id] for r in rs],
            text=[_hover(r) for r in rs], hovertemplate="%{text}<extra></extra>",
            marker=dict(size=[11 if r.instruction == selected else 7 for r in rs],
                        color=C.BORDERS.get(cat, "#495057"),
                        line=dict(width=[2.5 if r.instruction == selected else 0.5 for r in rs],
                                  color="#000000"), opacity=0.85)))
    tau = report.metrics.get("kendall_tau") if report.metrics else None
    fitted = " fitted to this trace, held out" if report.fit else ""
    title = f"{report.predictor}{fitted}: predicted vs measured ({len(rows)} kernels"
    title += f", Kendall tau {tau:.2f})" if tau is not None and not math.isnan(tau) else ")"
    fig.update_layout(
        title=title, height=440, margin=dict(l=60, r=20, t=50, b=50), clickmode="event+select",
        xaxis=dict(LOG_AXIS, title=f"measured µs ({report.stat} per execution)"),
        yaxis=dict(LOG_AXIS, title="predicted µs"),
        legend=dict(orientation="h", y=-0.18))
    return fig


def _category(r: KernelRow) -> str:
    if r.opcode == "fusion":
        if r.cost.matmul:
            return C.DOT_CONV
        return "fusion"
    return C.category(r.opcode)


def _hover(r: KernelRow) -> str:
    parts = [f"<b>{r.instruction}</b> ({r.opcode}{' ' + r.fusion_kind if r.fusion_kind else ''})",
             f"measured {fmt_us(r.measured_us)}, predicted {fmt_us(r.predicted_us)}"]
    if r.ratio is not None:
        parts.append(f"predicted / measured {r.ratio:.2f}")
    if r.share is not None:
        parts.append(share_text(r))
    if r.overlap:
        parts.append(f"overlapped: other kernels ran during {r.overlap:.0%} of its time")
    if r.work_us is not None and r.measured_us is not None and r.work_us > r.measured_us:
        parts.append(f"start to completion {fmt_us(r.work_us)} (asynchronous: its work "
                     "went on after its event)")
    parts.append(f"{si(r.cost.flops, 'flop')}, {si(r.cost.bytes, 'B')}, {r.bound}-bound")
    return "<br>".join(parts)


def share_text(r: KernelRow) -> str:
    """The share of step time with the time it is the share of: both means (only means
    add up over kernels), named."""
    if r.share is None:
        return ""
    per_step = f"mean {fmt_us(r.per_step_us)} per step = " if r.per_step_us is not None else ""
    return f"{per_step}{r.share:.1%} of the mean step"


# --------------------------------------------------------------------------- metrics

def metrics_rows(report: RuntimeReport) -> list[dict]:
    """One row per metric: value (held out, when fitted to the trace), noise floor, the
    predictor on the profile alone (``uncalibrated``, when fitted), whether higher is
    better, what it means."""
    out = []
    for k in METRICS:
        label, help_text = METRIC_LABELS[k]
        v = report.metrics.get(k) if report.metrics else None
        nf = report.noise_floor.get(k) if report.noise_floor else None
        rf = report.roofline_metrics.get(k) if report.roofline_metrics else None
        un = report.metrics_uncalibrated.get(k) if report.metrics_uncalibrated else None
        out.append({"metric": label, "key": k, "value": _clean(v), "noise_floor": _clean(nf),
                    "roofline": _clean(rf) if report.predictor != "roofline" else None,
                    "uncalibrated": _clean(un), "gap": _gap(k, v, nf),
                    "higher_is_better": HIGHER_IS_BETTER[k], "help": help_text,
                    "percent": k in ("median_ape", "time_weighted_ape", "top10_recall")})
    return out


def _clean(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _gap(metric: str, ours, floor) -> float | None:
    """How far the prediction falls short of the noise floor (0: it reaches it; the goal),
    in the metric's own units."""
    ours, floor = _clean(ours), _clean(floor)
    if ours is None or floor is None:
        return None
    short = floor - ours if HIGHER_IS_BETTER[metric] else ours - floor
    return max(short, 0.0)


# --------------------------------------------------------------------------- table

TABLE_COLUMNS = ("instruction", "opcode", "fused_ops", "share", "per_step_us", "overlap",
                 "measured_us", "predicted_us", "xla_estimate_us", "ratio",
                 "executions_per_run", "p10_us", "p90_us", "max_us", "outlier_runs",
                 "work_us", "flops", "bytes", "intensity", "bound", "computation")
# what the kernel table can be sorted by (largest first), and how it says so
SORTS = {"share": "share of step", "fused_ops": "ops (fused)", "bytes": "bytes",
         "flops": "flops", "measured_us": "measured time", "predicted_us": "predicted time"}


def kernel_sizes(module) -> dict[str, int]:
    """Each fusion's size in ops (``categories.fused_ops``, what its node's label shows)."""
    out = {}
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode == "fusion" and inst.called_names:
                fused = module.get_computation(inst.called_names[0])
                if fused is not None:
                    out[inst.name] = C.fused_ops(fused.instructions)
    return out


def kernel_rows(report: RuntimeReport, limit: int | None = None,
                sizes: Mapping[str, int] | None = None, sort: str = "share") -> list[dict]:
    """Kernels, largest first by ``sort`` (one of SORTS; default the measured share of
    step time, unmeasured ones last by predicted). ``sizes``: ops per fusion (see
    :func:`kernel_sizes`); other kernels count 1."""
    sizes = sizes or {}
    out = []
    for r in report.rows:
        t = r.timing
        out.append({
            "instruction": r.instruction, "opcode": r.opcode + (f" {r.fusion_kind}"
                                                                if r.fusion_kind else ""),
            "fused_ops": sizes.get(r.instruction, 1) if sizes else None,
            "share": r.share, "per_step_us": r.per_step_us, "overlap": r.overlap,
            "measured_us": r.measured_us, "predicted_us": r.predicted_us,
            "xla_estimate_us": r.xla_estimate_us, "ratio": r.ratio, "executions_per_run": r.executions_per_run,
            "p10_us": t.p10_us if t else None, "p90_us": t.p90_us if t else None,
            "max_us": t.max_us if t else None,
            "outlier_runs": t.outlier_runs() if t else None, "work_us": r.work_us,
            "flops": r.cost.flops, "bytes": r.cost.bytes, "intensity": r.cost.intensity,
            "bound": r.bound, "computation": r.computation, "module_id": r.module_id,
        })
    key = sort if sort in SORTS else "share"

    def order(x: dict) -> tuple[bool, float, float]:
        v = x[key]
        return v is None, -float(v or 0.0), -float(x["predicted_us"])
    out.sort(key=order)
    return out[:limit] if limit else out


def xla_estimate_lines(report: RuntimeReport, module_id: str) -> list[str]:
    """The roofline beside XLA's own estimates of the module, in words (markdown; [] when
    the dump holds none): Kendall's tau and the ratio over the kernels XLA:TPU priced
    (``estimated_cycles``), the step against ``optimal_seconds``. Predictions both."""
    est = next((a for a in report.xla_estimates if a.module_id == module_id), None)
    if est is None:
        return []
    out = []
    if est.kernels:
        tau = f"Kendall tau **{est.kendall_tau:.2f}**" if est.kendall_tau is not None \
            else "too few kernels for a Kendall tau"
        line = (f"**XLA's own estimate** (XLA:TPU's `estimated_cycles` of {est.kernels:,} "
                f"kernels in after_codegen.txt): {tau} between its order of the kernels and "
                "the roofline's")
        if est.xla_us is not None and est.ratio is not None:
            line += (f"; together {fmt_us(est.xla_us)} at {est.clock_hz / 1e9:.2f} GHz "
                     f"against the roofline's {fmt_us(est.roofline_us)}: ratio "
                     f"**{est.ratio:.2f}** (roofline / XLA)")
        out.append(line + ".")
    if est.optimal_us is not None and est.optimal_ratio is not None:
        out.append(f"XLA's `optimal_seconds` (cost_analysis): {fmt_us(est.optimal_us)} for "
                   f"the module; the roofline's step: {fmt_us(est.step_roofline_us)}, ratio "
                   f"**{est.optimal_ratio:.2f}**.")
    out.append("Both are predictions (two cost models of the same chip), not measurements.")
    return out


# --------------------------------------------------------------------------- timeline

TIMELINE_MAX_SLICES = 20_000
WAIT = "async wait (work on the thread pool)"


def timeline_runs(report: RuntimeReport, module_id: str) -> list[tuple[str, float]]:
    """The module's measured runs (steps) with their wall time, in trace order."""
    mt = report.measured.module(module_id) if report.measured is not None else None
    if mt is None:
        return []
    return sorted(mt.step_us.items())


def timeline_figure(report: RuntimeReport, module_id: str, run: str | None = None,
                    selected: str = ""):
    """One step's kernels in time, one lane per thread (and per nesting depth: a while's
    body ops run inside it), like a trace viewer: hover names the instruction, a click
    selects it (``customdata = [instruction, module_id]``). An asynchronous thunk's wait
    for its work is drawn in a lane of its own under its thread; kernels that ran
    alongside others have a dark outline."""
    import plotly.graph_objects as go
    fig = go.Figure()
    mt = report.measured.module(module_id) if report.measured is not None else None
    if mt is None or not mt.step_us:
        fig.add_annotation(text=report.trace_error or "no measured step for this module",
                           showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_layout(height=200, xaxis_visible=False, yaxis_visible=False)
        return fig
    if run is None or run not in mt.slices:
        run = mt.median_run()
    slices = mt.slices.get(run or "", [])[:TIMELINE_MAX_SLICES]
    threads: dict[str, int] = {}
    for x in slices:
        threads.setdefault(x.thread, len(threads) + 1)
    rows = {r.instruction: r for r in report.rows if r.module_id == module_id}

    def lane(x, wait: bool = False) -> str:
        n = threads[x.thread]
        if wait:
            return f"thread {n} · wait"
        return f"thread {n}" + (f" · depth {x.depth}" if x.depth else "")

    lanes: list[str] = []
    for t in sorted(threads.values()):
        depths = sorted({x.depth for x in slices if threads[x.thread] == t})
        lanes += [f"thread {t}" + (f" · depth {d}" if d else "") for d in depths]
        if any(x.done_us > x.end_us for x in slices if threads[x.thread] == t):
            lanes.append(f"thread {t} · wait")
    by_cat: dict[str, list] = {}
    for x in slices:
        r = rows.get(x.instruction)
        by_cat.setdefault(_category(r) if r is not None else C.OTHER, []).append(x)

    def hover(x, r) -> str:
        what = f"<b>{html.escape(x.instruction)}</b>"
        if r is not None:
            what += f" ({html.escape(r.opcode)})"
        parts = [what, f"starts {fmt_us(x.start_us)} into the step, event "
                       f"{fmt_us(x.end_us - x.start_us)}, own time {fmt_us(x.own_us)}"]
        if x.done_us > x.end_us:
            parts.append(f"asynchronous: done {fmt_us(x.done_us - x.start_us)} after start")
        if x.overlapped:
            parts.append(f"overlapped: {fmt_us(x.own_us - x.charged_us)} of it alongside "
                         "other kernels")
        return "<br>".join(parts)

    for cat, xs in sorted(by_cat.items()):
        fig.add_trace(go.Bar(
            orientation="h", name=cat, y=[lane(x) for x in xs],
            x=[max(x.end_us - x.start_us, 1e-3) for x in xs], base=[x.start_us for x in xs],
            customdata=[[x.instruction, module_id] for x in xs],
            hovertext=[hover(x, rows.get(x.instruction)) for x in xs],
            hovertemplate="%{hovertext}<extra></extra>",
            marker=dict(color=C.BORDERS.get(cat, C.BORDERS[C.OTHER]),
                        line=dict(color=["#000000" if x.instruction == selected else
                                         "#212529" if x.overlapped else "rgba(0,0,0,0)"
                                         for x in xs],
                                  width=[3 if x.instruction == selected else
                                         1.5 if x.overlapped else 0 for x in xs]))))
    waits = [x for x in slices if x.done_us > x.end_us]
    if waits:
        fig.add_trace(go.Bar(
            orientation="h", name=WAIT, y=[lane(x, True) for x in waits],
            x=[x.done_us - x.end_us for x in waits], base=[x.end_us for x in waits],
            customdata=[[x.instruction, module_id] for x in waits],
            hovertext=[hover(x, rows.get(x.instruction)) for x in waits],
            hovertemplate="%{hovertext}<extra></extra>",
            marker=dict(color="rgba(201,42,42,0.25)", pattern=dict(shape="/"),
                        line=dict(color="#c92a2a", width=1))))
    step = mt.step_us.get(run or "", 0.0)
    fig.update_layout(
        barmode="overlay", height=max(220, 90 + 34 * len(lanes)), bargap=0.25,
        margin=dict(l=10, r=10, t=56, b=40), clickmode="event+select", dragmode="pan",
        title=f"one step: {len(slices):,} kernel executions in {fmt_us(step)} on "
              f"{len(threads)} thread{'s' if len(threads) != 1 else ''}",
        xaxis=dict(title="µs from the step's start", range=[0, step * 1.01],
                   rangemode="tozero"),
        yaxis=dict(categoryorder="array", categoryarray=lanes, autorange="reversed",
                   type="category"),
        # above the plot, right of the title (below, it met the axis title)
        legend=dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom"))
    return fig


# --------------------------------------------------------------------------- roofline

def roofline_figure(report: RuntimeReport, selected: str = ""):
    """Arithmetic intensity (flop/byte) vs achieved flop rate (flop/s) of measured kernels,
    under the device's roofs (matmul and vector peaks, memory bandwidth)."""
    import plotly.graph_objects as go
    dev = report.device
    rows = [r for r in report.measured_rows
            if r.cost.flops > 0 and r.cost.bytes > 0 and (r.measured_us or 0) > 0]
    fig = go.Figure()
    xs = [r.cost.intensity for r in rows] or [1.0]
    lo, hi = min(xs) / 3, max(xs) * 3
    lo, hi = min(lo, 0.01), max(hi, 1000.0)
    bw = dev.bandwidth
    grid = [lo * (hi / lo) ** (i / 60) for i in range(61)]
    mm = dev.matmul_rate("f32")
    roofs = [(mm, f"matmul {si(mm, 'flop/s')}", "solid"),
             (dev.vector_flops, f"vector {si(dev.vector_flops, 'flop/s')}", "dot")]
    if dev.threads > 1.05:   # fusions XLA:CPU splits over threads reach higher
        split = dev.vector_flops * dev.threads
        roofs.append((split, f"vector ×{dev.threads:.1f} threads {si(split, 'flop/s')}",
                      "dashdot"))
    for peak, name, dash in roofs:
        fig.add_trace(go.Scatter(x=grid, y=[min(peak, bw * x) for x in grid], mode="lines",
                                 name=name, line=dict(color="#495057", dash=dash, width=1.5),
                                 hoverinfo="skip"))
    if dev.bandwidth_curve:
        best_bw = max(b for _, b in dev.bandwidth_curve)
        fig.add_trace(go.Scatter(x=grid, y=[min(mm, best_bw * x) for x in grid], mode="lines",
                                 name=f"cache {si(best_bw, 'B/s')}",
                                 line=dict(color="#adb5bd", dash="dash", width=1),
                                 hoverinfo="skip"))
    by_cat: dict[str, list[KernelRow]] = {}
    for r in rows:
        by_cat.setdefault(_category(r), []).append(r)
    for cat, rs in sorted(by_cat.items()):
        fig.add_trace(go.Scatter(
            x=[r.cost.intensity for r in rs], y=[r.achieved_flops for r in rs], mode="markers",
            name=cat, customdata=[[r.instruction, r.module_id] for r in rs],
            text=[_hover(r) for r in rs], hovertemplate="%{text}<extra></extra>",
            marker=dict(size=[11 if r.instruction == selected else 7 for r in rs],
                        color=C.BORDERS.get(cat, "#495057"), opacity=0.85,
                        line=dict(width=[2.5 if r.instruction == selected else 0.5 for r in rs],
                                  color="#000000"))))
    skipped = len(report.measured_rows) - len(rows)
    title = f"Roofline of {dev.name} ({len(rows)} kernels"
    title += f"; {skipped} without flops not shown)" if skipped else ")"
    fig.update_layout(title=title, height=440, margin=dict(l=60, r=20, t=50, b=50),
                      clickmode="event+select",
                      xaxis=dict(LOG_AXIS, title="arithmetic intensity (flop/byte)"),
                      # '100G', not plotly's default '100B' (billion), read as bytes
                      yaxis=dict(LOG_AXIS, exponentformat="SI",
                                 title="achieved flop/s (flops / start to completion)"),
                      legend=dict(orientation="h", yanchor="top", y=-0.25, font=dict(size=11)))
    return fig


# --------------------------------------------------------------------------- overlay

SEQUENTIAL = "YlOrRd"
DIVERGING = "RdBu_r"     # blue: predicted faster than measured; red: predicted slower


@dataclass
class Overlay:
    """Decorations for ``GraphOptions(decorations=...)`` and the legend that explains them."""

    mode: str
    decorations: dict[str, dict[str, str]]
    title: str
    stops: list[tuple[str, str]]          # (label, colour) from low to high
    values: dict[str, float] = field(default_factory=dict)   # node or group id -> value
    missing: int = 0                      # kernels of the view without a value
    note: str = ""


def _hex(color: str) -> str:
    if color.startswith("#"):
        return color
    nums = color[color.index("(") + 1:color.index(")")].split(",")
    r, g, b = (int(round(float(x))) for x in nums[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _sample(scale: str, t: float) -> str:
    """The colour at ``t`` (0..1) of a plotly scale, in 512 steps (memoized: plotly's
    sampler parses the scale on every call, ~0.4 ms)."""
    return _sample_step(scale, round(min(max(t, 0.0), 1.0) * 511))


@lru_cache(maxsize=4096)
def _sample_step(scale: str, step: int) -> str:
    from plotly.colors import sample_colorscale
    return _hex(sample_colorscale(scale, [step / 511])[0])


def _dark(color: str) -> bool:
    c = _hex(color)
    r, g, b = int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)
    return 0.299 * r + 0.587 * g + 0.114 * b < 120


def _per_step(r: KernelRow, which: str) -> float | None:
    """Time a kernel takes per step: per-execution value times executions per run (the
    expected time when predicted: these are summed)."""
    v = r.measured_us if which == "measured" else r.expected_us
    if v is None:
        return None
    n = r.executions_per_run if r.executions_per_run else 1.0
    return v * n


def inclusive_totals(report: RuntimeReport, module, module_id: str | None = None
                     ) -> dict[str, tuple[float | None, float, float]]:
    """Per step, what each ``while`` / ``conditional`` / ``call`` costs with everything
    the computations it calls run (transitively): its own self time plus their kernels.

    Returns instruction -> (measured µs or None when nothing in it was measured,
    predicted µs, predicted µs over the measured kernels only). ``module``: the
    ``HloModule`` the report's rows come from.
    """
    rows = [r for r in report.rows if module_id is None or r.module_id == module_id]
    per_comp: dict[str, list[float]] = {}
    for r in rows:
        meas, pred = _per_step(r, "measured"), _per_step(r, "predicted") or 0.0
        acc = per_comp.setdefault(r.computation, [0.0, 0.0, 0.0, 0.0])
        acc[1] += pred
        if meas is not None:
            acc[0] += meas
            acc[2] += pred
            acc[3] += 1
    own = {r.instruction: r for r in rows}
    out: dict[str, tuple[float | None, float, float]] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode not in ("while", "conditional", "call") or not inst.called_names:
                continue
            seen = {c.name for c in module.reachable(inst.called_names)}
            meas, pred, pred_m, n = 0.0, 0.0, 0.0, 0
            own_row = own.get(inst.name)
            if own_row is not None:
                m, p = _per_step(own_row, "measured"), _per_step(own_row, "predicted") or 0.0
                pred += p
                if m is not None:
                    meas, pred_m, n = meas + m, pred_m + p, n + 1
            for name in seen:
                called = per_comp.get(name)
                if called is not None:
                    meas, pred, pred_m, n = meas + called[0], pred + called[1], \
                        pred_m + called[2], n + int(called[3])
            if pred > 0 or n:
                out[inst.name] = (meas if n else None, pred, pred_m)
    return out


def overlay(report: RuntimeReport, mode: str = "measured", view: GroupIndex | None = None,
            module_id: str | None = None,
            inclusive: Mapping[str, tuple[float | None, float, float]] | None = None
            ) -> Overlay:
    """Colour kernels by measured time, predicted time, or predicted/measured.

    ``view``: a ``viz.grouping.Grouping`` or ``GraphView`` (its ``group_of`` and ``groups``
    give group totals: a group shows the sum over its kernels per step, or for ``ratio``
    the ratio of sums). Node labels get the value; tooltips say what it is. ``inclusive``
    (:func:`inclusive_totals`): control-flow instructions count with what they run, in
    group totals and in a "Σ with body" label line.
    """
    inclusive = inclusive or {}
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    rows = [r for r in report.rows if module_id is None or r.module_id == module_id]
    values: dict[str, float] = {}
    labels: dict[str, str] = {}
    missing = 0
    for r in rows:
        if mode == "ratio":
            v = r.ratio
        elif mode == "measured":
            v = r.measured_us
        else:
            v = r.predicted_us
        if v is None or v <= 0:
            missing += 1
            continue
        values[r.instruction] = v
        if mode == "ratio":
            labels[r.instruction] = f"pred/meas ×{v:.2f}"
        else:
            reps = f" ×{r.executions_per_run:g}" if r.executions_per_run and \
                r.executions_per_run > 1 else ""
            # the share is a mean and the value a per-execution statistic: the share goes
            # with its own time (inspector, table), not beside this one
            labels[r.instruction] = f"◷ {fmt_us(v)}{reps}"
        inc = inclusive.get(r.instruction)
        if inc is not None:
            meas_i, pred_i, pred_m = inc
            if mode == "ratio":
                if meas_i and pred_m:
                    labels[r.instruction] += f"\nΣ with body ×{pred_m / meas_i:.2f}"
            else:
                total = meas_i if mode == "measured" else pred_i
                if total:
                    labels[r.instruction] += f"\nΣ with body {fmt_us(total)} per step"
    # group totals
    group_values: dict[str, float] = {}
    group_of: Mapping[str, str] = view.group_of if view is not None else {}
    groups: Mapping[str, GroupInfo] = view.groups if view is not None else {}
    if group_of:
        sums: dict[str, list[float]] = {}
        for r in rows:
            gid = group_of.get(r.instruction, "")
            meas, pred = _per_step(r, "measured"), _per_step(r, "predicted")
            pred_m = pred or 0.0          # predicted over the measured kernels only
            if r.instruction in inclusive:
                meas, pred, pred_m = inclusive[r.instruction]
            seen = set()
            while gid and gid not in seen:
                seen.add(gid)
                acc = sums.setdefault(gid, [0.0, 0.0, 0.0])
                if meas is not None:
                    acc[0] += meas
                    acc[2] += pred_m
                acc[1] += pred or 0.0
                info = groups.get(gid)
                gid = info.parent if info is not None else ""
        for gid, (meas, pred, pred_measured) in sums.items():
            if mode == "measured" and meas > 0:
                group_values[gid] = meas
            elif mode == "predicted" and pred > 0:
                group_values[gid] = pred
            elif mode == "ratio" and meas > 0 and pred_measured > 0:
                group_values[gid] = pred_measured / meas
    decorations: dict[str, dict[str, str]] = {}
    stops: list[tuple[str, str]]
    if mode == "ratio":
        def color(v: float) -> str:          # log2 ratio, ±3 (×8) at the ends
            return _sample(DIVERGING, 0.5 + math.log2(v) / 6)
        stops = [(f"×{2.0 ** k:g}", _sample(DIVERGING, 0.5 + k / 6)) for k in (-3, -1, 0, 1, 3)]
        title = "predicted / measured (blue: model too fast, red: too slow)"
    else:
        vals = list(values.values())
        lo = min(vals) if vals else 1.0
        hi = max(vals) if vals else 10.0
        llo, lhi = math.log10(max(lo, 1e-3)), math.log10(max(hi, lo * 1.0001, 1e-3))
        span = max(lhi - llo, 1e-9)

        def color(v: float) -> str:
            return _sample(SEQUENTIAL, 0.08 + 0.92 * (math.log10(max(v, 1e-3)) - llo) / span)
        stops = [(fmt_us(10 ** (llo + span * t)), _sample(SEQUENTIAL, 0.08 + 0.92 * t))
                 for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
        title = f"{mode} µs per execution ({report.stat})" if mode == "measured" else \
            f"predicted µs per execution ({report.predictor}" \
            f"{' fitted to this trace' if report.fit else ''})"
    for name, v in values.items():
        fill = color(v)
        decorations[name] = {"fillcolor": fill, "label": labels[name],
                             "tooltip": f"{mode}: {labels[name]}",
                             "fontcolor": "#ffffff" if _dark(fill) else "#000000"}
    group_colors = {}
    if mode != "ratio" and group_values:
        glo, ghi = min(group_values.values()), max(group_values.values())
        gl, gh = math.log10(max(glo, 1e-3)), math.log10(max(ghi, glo * 1.0001, 1e-3))
        for gid, v in group_values.items():
            group_colors[gid] = _sample(SEQUENTIAL, 0.08 + 0.92 * (math.log10(max(v, 1e-3)) - gl)
                                        / max(gh - gl, 1e-9))
    for gid, v in group_values.items():
        fill = color(v) if mode == "ratio" else group_colors[gid]
        text = f"Σ pred/meas ×{v:.2f}" if mode == "ratio" else f"Σ {fmt_us(v)} per step"
        decorations[gid] = {"fillcolor": fill, "label": text, "tooltip": f"{mode}: {text}",
                            "fontcolor": "#ffffff" if _dark(fill) else "#000000"}
    note = ""
    if report.measured is None and mode != "predicted":
        note = f"nothing measured: {report.trace_error or 'no trace'}"
    elif missing:
        note = f"{missing} kernel{' has' if missing == 1 else 's have'} no {mode} value"
    all_values = dict(values)
    all_values.update(group_values)
    return Overlay(mode, decorations, title, stops, all_values, missing, note)


def scale_html(title: str, stops: Sequence[tuple[str, str]], note: str = "") -> str:
    """An overlay's colour scale as HTML: the title, one swatch per stop (label, colour),
    a note. A swatch keeps its label on one line ('12.9 KiB', never '12.9' over 'KiB')."""
    cells = "".join(f'<span style="background:{_hex(c)};padding:2px 8px;margin-right:2px;'
                    f'white-space:nowrap;display:inline-block;'
                    f'color:{"#fff" if _dark(c) else "#000"}">{html.escape(lab)}</span>'
                    for lab, c in stops)
    note = f'<div style="color:#868e96">{html.escape(note)}</div>' if note else ""
    return f'<div><b>{html.escape(title)}</b><br>{cells}{note}</div>'


def legend_html(ov: Overlay) -> str:
    """A small HTML legend (colour swatches) for the overlay."""
    return scale_html(ov.title, ov.stops if ov.values or ov.mode == "ratio" else (), ov.note)


def selectable(points: Sequence[Mapping]) -> str | None:
    """The instruction a plotly selection event points at (first point), or None."""
    for p in points or ():
        cd = p.get("customdata") if isinstance(p, Mapping) else None
        if cd:
            return str(cd[0])
    return None


def report_rows(report: RuntimeReport, limit: int | None = None) -> list[dict]:
    """The kernel table as text cells (the HTML report): slowest measured first."""
    out = []
    for r in kernel_rows(report, limit):
        reps = r["executions_per_run"]
        out.append({
            "instruction": r["instruction"], "opcode": r["opcode"],
            "share of step (mean)": f"{r['share']:.1%}" if r["share"] is not None else "–",
            "per step (mean)": fmt_us(r["per_step_us"]),
            "overlapped": f"{r['overlap']:.0%}" if r["overlap"] else "–",
            "measured (median per execution)": fmt_us(r["measured_us"]),
            "spread (p10–p90, max)": (f"{fmt_us(r['p10_us'])}–{fmt_us(r['p90_us'])}, "
                                      f"max {fmt_us(r['max_us'])}"
                                      if r["p10_us"] is not None else "–"),
            "outlier runs": (str(r["outlier_runs"]) if r["outlier_runs"] is not None
                             else "–"),
            "predicted": fmt_us(r["predicted_us"]),
            "predicted / measured": f"×{r['ratio']:.2f}" if r["ratio"] else "–",
            "per step": f"×{reps:g}" if reps else "–",
            "flops": si(r["flops"]), "bytes": si(r["bytes"], "B"), "bound": r["bound"],
            "computation": r["computation"],
        })
    return out
