"""The runtime panel's data: per kernel, measured (from traces) beside predicted (roofline
or learned model), with the accuracy metrics and their noise floor.

One entry point, :func:`runtime_report`, used by the CLI (``runtimes``) and the app's
runtime page (``ui/runtimes.py``); the view builders (``viz/runtime.py``) read only the
:class:`RuntimeReport` it returns, whose ``key`` says what it was computed from (for
caches keyed by content).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Sequence

from . import metrics as M
from . import model_loader
from .costs import KernelCost, costs_of, kernel_cost
from .dataset import module_with_pages
from .devices import DeviceProfile, device_profile, profile_for_module, profile_for_platform
from .execution import UNKNOWN_TRIP_COUNT, kernels, runs_per_step
from .roofline import bound, roofline_us, slow_conv_rate
from .trace_events import TraceError
from .trace_files import TraceSource
from .trace_fit import calibrate_to_trace, kernel_class, why_no_fit
from .traces import KernelTiming, Measured, measure
from .xla_estimates import Agreement, agreement, module_cycles, optimal_seconds
from ..dumps import Dump, DumpModule, module_target, target_note
from ..targets import cycles_to_us
from ..hlo import HloModule

STATS = ("median", "p10", "min", "mean")
# a step time predicted more than this many times off the measured one is flagged
FAR_OFF = 2.0


@dataclass
class KernelRow:
    """One kernel: what it costs, what was predicted, what was measured."""

    module_id: str
    module: str
    instruction: str
    computation: str
    opcode: str
    fusion_kind: str
    cost: KernelCost
    roofline_us: float
    predicted_us: float
    bound: str                              # 'compute' | 'memory' | 'overhead'
    timing: KernelTiming | None = None      # None: no event for this kernel
    measured_us: float | None = None        # the chosen statistic per execution
    share: float | None = None              # of step time: mean per step / mean step
    executions_per_run: float | None = None
    per_step_us: float | None = None        # its time per step (mean), share * mean step
    overlap: float | None = None            # share of its own time other kernels ran too
    runs_per_step: float = 1.0              # from the HLO: its loops' trip counts
    runs_known: bool = True                 # no loop of unknown trip count or branch around it
    xla_estimate_us: float | None = None    # XLA's own estimate (TPU estimated_cycles), not measured
    # the predictor's own time before the correction fitted to the trace (trace_fit);
    # None: predicted_us is uncorrected
    uncalibrated_us: float | None = None
    held_out_us: float | None = None        # corrected without its own measurement
    # expected over predicted time, for sums (trace_fit's smearing factor; 1: no fit)
    smearing: float = 1.0

    @property
    def runs(self) -> float:
        """Executions per step: measured when it was, else from the HLO."""
        return self.executions_per_run if self.executions_per_run is not None \
            else self.runs_per_step

    @property
    def expected_us(self) -> float:
        """Its expected time, what sums of kernels add up (a step, a group's total): the
        prediction times the fit's smearing factor (a median fit's time is a typical
        kernel's, below the mean of skewed times)."""
        return self.predicted_us * self.smearing

    @property
    def ratio(self) -> float | None:
        """predicted / measured (> 1: predicted slower than measured)."""
        if self.measured_us is None or self.measured_us <= 0:
            return None
        return self.predicted_us / self.measured_us

    @property
    def work_us(self) -> float | None:
        """Median time from an execution's start to its completion: for an asynchronous
        thunk (a dot, a convolution on the thread pool) its work after its event too,
        even where its thread ran other ops meanwhile (its own time then stops at them);
        for any other kernel its own time."""
        t = self.timing
        if self.measured_us is None or t is None:
            return None
        return max(t.work_us, self.measured_us) if t.work else self.measured_us

    @property
    def achieved_flops(self) -> float | None:
        """Flop/s the kernel reached when measured: its flops over its work time (an
        asynchronous thunk's own time can stop before its work does)."""
        w = self.work_us
        if w is None or w <= 0:
            return None
        return self.cost.flops / (w * 1e-6)

    @property
    def profile_us(self) -> float:
        """The prediction for the device profile alone (no correction from the trace)."""
        return self.uncalibrated_us if self.uncalibrated_us is not None else self.predicted_us

    def to_json(self) -> dict:
        t = self.timing
        return {
            "module": self.module, "module_id": self.module_id,
            "instruction": self.instruction, "computation": self.computation,
            "opcode": self.opcode, "fusion_kind": self.fusion_kind,
            "measured_us": self.measured_us, "predicted_us": self.predicted_us,
            "expected_us": self.expected_us,
            "roofline_us": self.roofline_us, "predicted_uncalibrated_us": self.profile_us,
            "flops": self.cost.flops,
            "transcendentals": self.cost.transcendentals, "bytes": self.cost.bytes,
            "bytes_read": self.cost.bytes_read, "bytes_written": self.cost.bytes_written,
            "intensity": self.cost.intensity, "bound": self.bound, "share": self.share,
            "conv_path": self.cost.conv_path, "trig": self.cost.trig,
            "share_stat": "mean", "per_step_us": self.per_step_us, "overlap": self.overlap,
            "count": t.count if t else 0, "runs": t.runs if t else 0,
            "executions_per_run": self.executions_per_run,
            "runs_per_step": self.runs_per_step, "runs_known": self.runs_known,
            "median_us": t.median_us if t else None, "p10_us": t.p10_us if t else None,
            "p90_us": t.p90_us if t else None, "min_us": t.min_us if t else None,
            "xla_estimate_us": self.xla_estimate_us,
            "work_us": self.work_us, "max_us": t.max_us if t else None,
            "outlier_runs": t.outlier_runs() if t else None,
        }


@dataclass(frozen=True)
class StepTime:
    """A module's time per step: each kernel's expected time (``KernelRow.expected_us``)
    times its executions per step (measured, else from its loops' trip counts), summed;
    what the profiler measured, when it did."""

    module_id: str
    predicted_us: float
    roofline_us: float
    exact: bool                     # every kernel's executions per step known
    measured_us: float | None       # median step while profiling
    uncalibrated_us: float | None = None   # the profile alone, when predicted_us is fitted
    median_fit_us: float | None = None     # fitted: the kernels' fitted times, unsmeared

    @property
    def ratio(self) -> float | None:
        """predicted / measured, None when nothing was measured."""
        if not self.measured_us:
            return None
        return self.predicted_us / self.measured_us

    @property
    def far_off(self) -> bool:
        """The prediction is more than FAR_OFF times off the measured step, either way."""
        r = self.ratio
        return r is not None and r > 0 and max(r, 1 / r) > FAR_OFF

    @property
    def caveat(self) -> str:
        """Why the prediction is an estimate even with exact kernel times ('' if not)."""
        if self.exact:
            return ""
        return (f"a while loop the HLO gives no trip count for counts {UNKNOWN_TRIP_COUNT} "
                "trips, each branch of a conditional runs once")

    def to_json(self) -> dict:
        return {"module_id": self.module_id, "predicted_us": self.predicted_us,
                "predicted_uncalibrated_us": self.uncalibrated_us,
                "predicted_median_fit_us": self.median_fit_us,
                "roofline_us": self.roofline_us, "runs_known": self.exact,
                "measured_us": self.measured_us, "ratio": self.ratio,
                "off_by_more_than_2x": self.far_off}


@dataclass
class RuntimeReport:
    """Everything the runtime panel and the ``runtimes`` command show."""

    dump: str
    modules: list[tuple[str, str]]          # (id, name) reported
    device: DeviceProfile
    predictor: str                          # 'roofline' | 'learned'
    predictor_detail: str                   # which device / which model file
    stat: str                               # statistic of measured_us
    rows: list[KernelRow]
    measured: Measured | None
    metrics: dict[str, float] = field(default_factory=dict)
    noise_floor: dict[str, float] = field(default_factory=dict)
    roofline_metrics: dict[str, float] = field(default_factory=dict)
    # with a correction fitted to the trace (trace_fit): ``metrics`` are held-out metrics
    # of the corrected prediction, these the predictor's own on the profile alone
    metrics_uncalibrated: dict[str, float] = field(default_factory=dict)
    fit: dict | None = None                 # the correction (Calibrated.describe), if any
    fit_note: str = ""                      # why there is none, when there is a trace
    notes: list[str] = field(default_factory=list)
    trace_error: str | None = None          # why nothing was measured, if so
    key: str = ""                           # content identity of the inputs (see runtime_report)
    # per module, the roofline against XLA's own estimates (predictions both)
    xla_estimates: list[Agreement] = field(default_factory=list)
    target: dict = field(default_factory=dict)   # Target.to_json() of the first module

    @property
    def measured_rows(self) -> list[KernelRow]:
        return [r for r in self.rows if r.measured_us is not None]

    def row(self, instruction: str, module_id: str | None = None) -> KernelRow | None:
        for r in self.rows:
            if r.instruction == instruction and (module_id is None or r.module_id == module_id):
                return r
        return None

    def step_time(self, module_id: str) -> StepTime | None:
        """The module's predicted (and measured) time per step; None: no kernels."""
        rows = [r for r in self.rows if r.module_id == module_id]
        if not rows:
            return None
        timings = self.measured.module(module_id) if self.measured is not None else None
        return StepTime(module_id, sum(r.expected_us * r.runs for r in rows),
                        sum(r.roofline_us * r.runs for r in rows),
                        all(r.runs_known or r.executions_per_run is not None for r in rows),
                        timings.step_median_us if timings is not None and timings.step_us
                        else None,
                        sum(r.profile_us * r.runs for r in rows) if self.fit else None,
                        sum(r.predicted_us * r.runs for r in rows) if self.fit else None)

    def metrics_json(self) -> dict:
        m = self.measured
        out: dict = dict(M.clean(self.metrics)) if self.metrics else \
            {k: None for k in M.METRICS}
        out["kernels_compared"] = len(self.measured_rows)
        out["matched_events"] = m.matched_events if m else 0
        out["unmatched_events"] = m.unmatched_events if m else 0
        out["noise_floor"] = M.clean(self.noise_floor) if self.noise_floor else None
        if self.predictor != "roofline":
            out["roofline"] = M.clean(self.roofline_metrics) if self.roofline_metrics else None
        out["against_floor"] = self.against_floor() or None
        out["fit"] = self.fit
        if self.fit_note:
            out["fit_note"] = self.fit_note
        return out

    def against_floor(self) -> dict[str, list[float | None]]:
        """Each metric as ``[ours, floor]``: a prediction is as good as the measurement
        lets it be when it agrees with the measurement as well as the measurement's two
        halves agree with each other (the goal; metrics.HIGHER_IS_BETTER says which
        way)."""
        if not self.metrics or not self.noise_floor:
            return {}
        ours, floor = M.clean(self.metrics), M.clean(self.noise_floor)
        return {k: [ours.get(k), floor.get(k)] for k in M.METRICS}

    def uncalibrated_json(self) -> dict | None:
        """``metrics_uncalibrated``: the predictor on the device profile alone (no
        correction from the trace), over the same measured kernels; None when nothing
        was measured."""
        if not self.metrics:
            return None
        return dict(M.clean(self.metrics_uncalibrated or self.metrics),
                    kernels_compared=len(self.measured_rows))

    def to_json(self) -> dict:
        return {
            "dump": self.dump,
            "modules": [{"id": i, "name": n} for i, n in self.modules],
            "predictor": self.predictor, "predictor_detail": self.predictor_detail,
            "device": self.device.name, "stat": self.stat,
            "kernels": [r.to_json() for r in self.rows],
            "step_time": [st.to_json() for st in (self.step_time(i) for i, _ in self.modules)
                          if st is not None],
            "metrics": self.metrics_json(),
            "metrics_uncalibrated": self.uncalibrated_json(),
            "trace": self.measured.summary() if self.measured else None,
            "trace_error": self.trace_error,
            "notes": self.notes,
            "target": self.target or None,
            "xla_estimates": [a.to_json() for a in self.xla_estimates],
        }


def rate_note(cost: KernelCost, device: DeviceProfile) -> str:
    """Why the roofline prices a kernel off the device's peak, when XLA runs it on a path
    the profile knows (a CPU's grouped or out-of-order convolution, trigonometry, an FFT,
    a reduce-window in generated loops, pages of a large temp allocation mapped fresh each
    run); '' otherwise."""
    if device.kind != "cpu":
        return ""
    g = 1e9
    if cost.fft_work > 0 and device.fft_flops > 0:
        return (f"an FFT: {cost.fft_work:,.0f} flops (5 n log2 n per transform; XLA counts "
                f"{cost.flops:,.0f}) at the FFT rate of {device.fft_flops / g:.0f} GFLOP/s")
    if cost.window_flops > 0 and device.window_flops > 0:
        return (f"a reduce-window in generated loops: {cost.window_flops:,.0f} flops at "
                f"{device.window_flops / g:.2g} GFLOP/s, not the vector rate of "
                f"{device.vector_flops / g:.0f}")
    fresh_bw = device.fresh_rate
    if cost.fresh_bytes > 0 and fresh_bw > 0:
        return (f"writes {cost.fresh_bytes / 2 ** 20:,.1f} MiB into pages of a temp "
                "allocation that is mapped fresh each run (32 MiB or more): page faults, "
                f"at {fresh_bw / g:.1f} GB/s")
    slow = slow_conv_rate(cost, device)
    if slow is not None and cost.conv_path == "grouped":
        return (f"a grouped (depthwise) convolution: XLA:CPU runs it at {slow / g:.2g} "
                f"GFLOP/s, not the matmul rate of {device.matmul_rate(cost.dtype) / g:.0f}")
    if slow is not None:
        return ("a convolution whose dimensions are not in the library's order "
                "(b01f_01io->b01f): XLA:CPU runs it as generated loops, at the vector rate "
                f"of one thread ({slow / g:.0f} GFLOP/s)")
    if cost.trig and device.trig_flops > device.transcendental_flops:
        return (f"{cost.trig:,.0f} sines/cosines at {device.trig_flops:.0f} flops each "
                f"(a tanh: {device.transcendental_flops:.0f})")
    return ""


def _measured_value(t: KernelTiming, stat: str) -> float:
    return t.stat(stat)


def compare(pred: Sequence[float], meas: Sequence[float]) -> dict[str, float]:
    return M.all_metrics(pred, meas)


def noise_floor_of(timings: Sequence[KernelTiming], stat: str = "median") -> dict[str, float]:
    """Metrics between the two halves of the measurements (see KernelTiming.halves)."""
    a, b = [], []
    for t in timings:
        h = t.halves(stat)
        if h is not None:
            a.append(h[0])
            b.append(h[1])
    if len(a) < 2:
        return {}
    return M.noise_floor(a, b)


def runtime_report(dump: Dump, modules: Sequence[str] | None = None,
                   traces: Sequence[TraceSource | str] | None = None,
                   model=None, device: DeviceProfile | str | None = None,
                   stat: str = "median", auto_model: bool = True,
                   fit_to_trace: bool = True) -> RuntimeReport:
    """Per-kernel measured and predicted runtimes of a dump's module(s).

    ``modules``: ids or names; default the modules the trace has events for, else the
    main module. ``traces``: None -> the traces inside the dump. ``model``: a
    :class:`compiler_bridge.perf.model_base.CostModel` or a path to one; None with
    ``auto_model`` -> the saved model for this device kind if there is one, else the
    roofline. ``device``: a DeviceProfile or name (default: from the dump's platform,
    the calibrated profile of this machine for CPU dumps).

    A trace problem never raises: the report carries ``trace_error`` and predictions only.

    ``fit_to_trace``: with a trace, correct the predictor for the machine that made it
    (``trace_fit``): every kernel's ``predicted_us`` is the corrected time (its own in
    ``uncalibrated_us``), ``metrics`` are held-out metrics of the correction and
    ``metrics_uncalibrated`` those of the predictor alone.

    The report's ``key`` hashes what it was computed from: the dump's key, each reported
    module's id and ``HloModule.key``, the traces (``TraceSource.key``; the dump's own
    when none are given), the predictor (``LearnedModel.key`` or the roofline), the
    device profile's key and the statistic.
    """
    if stat not in STATS:
        raise ValueError(f"stat must be one of {', '.join(STATS)}")
    notes: list[str] = []
    measured: Measured | None = None
    trace_error: str | None = None
    try:
        measured = measure(dump, traces)
    except TraceError as e:
        trace_error = str(e)
    if modules:
        chosen = [dump.module(m) for m in modules]
    elif measured is not None and measured.modules:
        chosen = [dump.module(mid) for mid in measured.modules]
    else:
        chosen = [dump.main] if dump.main is not None else []
    if isinstance(device, str):
        device = device_profile(device)
    chosen_device = device is not None
    if device is None:
        device = profile_for_module(dump, chosen[0]) if chosen else profile_for_platform("cpu")
        unread = target_note(dump, chosen[0]) if chosen else ""
        if unread:          # a file that should name the device does not: say what stands in
            notes.append(f"{unread}: predictions use the {device.name} profile")
    learned = _resolve_model(model, device, auto_model, notes)
    from .calibrate import outdated
    if learned is not None and not chosen_device and device.kind == "cpu" \
            and (not device.measured or outdated(device)):
        # a learned model's features are times on this machine's profile: measure it
        from .calibrate import ensure_calibrated
        device, note = ensure_calibrated()
        if note:
            notes.append(note)
    rows: list[KernelRow] = []
    reported = []
    module_keys = []
    estimates: list[Agreement] = []
    for mod in chosen:
        try:
            hlo = module_with_pages(dump, mod)
        except (KeyError, ValueError) as e:     # a KeyError's str() is its message quoted
            why = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            notes.append(f"module {mod.label}: {str(why).splitlines()[0]}")
            continue
        reported.append((mod.id, mod.name))
        module_keys.append((mod.id, hlo.key))
        mod_rows = _module_rows(mod, hlo, measured, device, learned, stat)
        found = _xla_estimates(dump, mod, mod_rows, device)
        if found is not None:
            estimates.append(found)
        rows += mod_rows
    if measured is not None:
        notes += measured.notes
        for mid, _name in reported:
            if measured.module(mid) is None:
                notes.append(f"module {mid} has no events in the trace: nothing measured "
                             "for it (not run while profiling)")
    mrows = [r for r in rows if r.measured_us is not None]
    report = RuntimeReport(
        dump.name, reported, device, "learned" if learned is not None else "roofline",
        learned.describe() if learned is not None else f"roofline on {device.name}",
        stat, rows, measured, notes=notes, trace_error=trace_error,
        key=_report_key(dump, module_keys, traces, learned, device, stat, fit_to_trace),
        xla_estimates=estimates,
        target=module_target(dump, chosen[0]).to_json() if chosen else {})
    if len(mrows) >= 2:
        # (a row is measured when it has a timing: both filters keep every row of mrows)
        meas = [r.measured_us for r in mrows if r.measured_us is not None]
        report.metrics = compare([r.predicted_us for r in mrows], meas)
        # with no learned model the prediction is the roofline: the same numbers
        report.roofline_metrics = report.metrics if learned is None else \
            compare([r.roofline_us for r in mrows], meas)
        report.noise_floor = noise_floor_of([r.timing for r in mrows if r.timing is not None],
                                            stat)
        if fit_to_trace:
            _fit_to_trace(report, mrows, meas)
    return report


def _xla_estimates(dump: Dump, mod: DumpModule, rows: list[KernelRow],
                   device: DeviceProfile) -> Agreement | None:
    """XLA's own estimates of the module beside its rows' rooflines (each row gets its
    kernel's estimate in µs at the profile's clock); None when the dump holds none."""
    cycles = module_cycles(dump, mod)
    if device.clock_hz > 0:
        for r in rows:
            if r.instruction in cycles:
                r.xla_estimate_us = cycles_to_us(cycles[r.instruction], device.clock_hz)
    return agreement(mod.id, rows, cycles, device.clock_hz, optimal_seconds(dump, mod))


def _fit_to_trace(report: RuntimeReport, mrows: list[KernelRow], meas: list[float]) -> None:
    """Correct every row's prediction with the fit to the measured rows (trace_fit);
    metrics on held-out kernels."""
    names = [f"{r.module_id}/{r.instruction}" for r in mrows]
    cal = calibrate_to_trace(names, [r.predicted_us for r in mrows], meas,
                             [kernel_class(r.cost, r.bound) for r in mrows],
                             weights=[r.runs for r in mrows])
    if cal is None:
        report.fit_note = (f"{len(mrows)} measured kernels: no correction fitted to the "
                           f"trace and scored on held-out kernels: {why_no_fit(names)}; "
                           "the prediction is the predictor's alone")
        return
    report.metrics_uncalibrated = report.metrics
    report.metrics = compare(cal.held_out, meas)
    report.fit = cal.describe()
    for r, held in zip(mrows, cal.held_out):
        r.held_out_us = held
    for r in report.rows:
        cls = kernel_class(r.cost, r.bound)
        r.uncalibrated_us = r.predicted_us
        r.predicted_us = cal.correction.apply(r.predicted_us, cls)
        r.smearing = cal.correction.smearing(cls)


def _report_key(dump: Dump, module_keys: list[tuple[str, str]],
                traces: Sequence[TraceSource | str] | None, learned,
                device: DeviceProfile, stat: str, fit_to_trace: bool = True) -> str:
    trace_keys = None if traces is None else [
        t.key if isinstance(t, TraceSource) else TraceSource(os.fspath(t), "", os.fspath(t),
                                                             "file").key
        for t in traces]
    inputs = {"dump": dump.key, "modules": module_keys, "traces": trace_keys,
              "predictor": learned.key if learned is not None else "roofline",
              "device": device.key, "stat": stat, "fit_to_trace": fit_to_trace}
    text = json.dumps(inputs, sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _resolve_model(model, device: DeviceProfile, auto: bool, notes: list[str]):
    """The model to predict with: the one given; else (``auto``) the user's saved model
    for this device kind, else the default model shipped for it, else None (the
    roofline). A model found on its own that is stale or broken: the roofline, and a
    note saying why."""
    if model is None and not auto:
        return None
    if model is None:
        path, which = model_loader.default_model_path(device.kind), "saved"
        if not os.path.exists(path):
            path, which = model_loader.shipped_model_path(device.kind), "default"
            if not os.path.exists(path):
                return None
        found, why = model_loader.try_load_model(path, which)
        if found is None:
            notes.append(why)
        return found
    if isinstance(model, (str, os.PathLike)):
        return model_loader.load_model(os.fspath(model))
    return model


def _measure_row(row: KernelRow, t: KernelTiming, timings, stat: str) -> None:
    row.measured_us = _measured_value(t, stat)
    row.share = timings.share(row.instruction)
    row.per_step_us = timings.per_step_us(row.instruction)
    row.executions_per_run = timings.executions_per_step(row.instruction)
    row.overlap = t.overlap


def _module_rows(mod: DumpModule, hlo: HloModule, measured: Measured | None,
                 device: DeviceProfile, learned, stat: str) -> list[KernelRow]:
    timings = measured.module(mod.id) if measured is not None else None
    insts = kernels(hlo)
    costs = costs_of(hlo, insts)
    roof = [roofline_us(c, device) for c in costs]
    if learned is not None:
        pred = learned.predict(hlo, insts, costs, device)
    else:
        pred = roof
    runs = runs_per_step(hlo)
    rows = []
    for inst, c, r, p in zip(insts, costs, roof, pred):
        t = timings.kernels.get(inst.name) if timings is not None else None
        row = KernelRow(mod.id, mod.name, inst.name, c.computation, inst.opcode,
                        inst.fusion_kind or "", c, float(r), float(p), bound(c, device), t)
        row.runs_per_step, row.runs_known = runs.get(c.computation, (1.0, False))
        if t is not None and timings is not None:
            _measure_row(row, t, timings, stat)
        rows.append(row)
    if timings is not None:
        # timed instructions that the kernel list does not hold (should not happen)
        known = {i.name for i in insts}
        for name, t in timings.kernels.items():
            if name in known:
                continue
            timed = hlo.find(name)
            if timed is None:
                continue
            c = kernel_cost(timed, hlo)
            r = roofline_us(c, device)
            p = float(learned.predict(hlo, [timed], [c], device)[0]) if learned is not None else r
            row = KernelRow(mod.id, mod.name, name, c.computation, timed.opcode,
                            timed.fusion_kind or "", c, r, p, bound(c, device), t)
            _measure_row(row, t, timings, stat)
            rows.append(row)
    return rows
