"""Predictions fitted to a trace of the machine that ran them (``compiler_bridge.perf.
trace_fit``), on traced programs: every number computed on kernels the fit did not see.

Three predictions per program, each against the program's own trace (kernel medians):

* **profile alone**: the predictor (the roofline on this machine's calibrated profile, or
  the shipped default model) as a dump without a trace gets it;
* **fitted to its own trace**: the correction fitted to the program's measured kernels,
  5-fold over kernels, each kernel predicted by the fit of the other folds (what the
  ``runtimes`` panel reports as ``metrics`` when a trace is present);
* **transfer**: the correction fitted to *another* program's trace of this machine (one
  trace of a new machine, then predict the rest): each program predicted with the fit of
  every other program in turn, the median over those.

Beside them the noise floor: the same metrics between two halves of the program's own
measurements (alternate profiling sessions), what the measurement reaches against
itself. Programs: ``generated/traced/*`` (``make traced``; any subset) and the traced
sample dumps. The shipped default model was trained on the traced corpus of another day
and machine (its own JSON names them), so for it these programs are not unseen, only their
traces are; the roofline learned nothing from any of them.

    .venv/bin/python -m bench.accuracy.trace_fit_bench [--no-write] [DUMP ...]
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import statistics
import sys
import time

from bench.common import ROOT, command, machine, publish
from compiler_bridge import open_dump, runtime_report
from compiler_bridge.perf import metrics as M
from compiler_bridge.perf import trace_fit as F

SAMPLES = ("transformer", "scan_while", "flags_default", "flags_no_fusion_emitters")
PREDICTORS = {"roofline": False, "default model": True}   # name -> auto_model


def programs(args: list[str]) -> list[str]:
    if args:
        return args
    found = sorted(d for d in glob.glob(os.path.join(ROOT, "generated", "traced", "*"))
                   if os.path.isdir(os.path.join(d, "trace")))
    return found + [os.path.join(ROOT, "sample_dumps", s) for s in SAMPLES]


def measure_program(path: str, auto_model: bool):
    """(names, prediction alone, measured, classes, noise floor, step alone, measured
    step) of a program's main measured module, or None when too little was measured."""
    r = runtime_report(open_dump(path), auto_model=auto_model, fit_to_trace=False)
    rows = r.measured_rows
    if len(rows) < F.MIN_KERNELS:
        return None
    mid = r.modules[0][0]
    step = r.step_time(mid)
    return ([f"{x.module_id}/{x.instruction}" for x in rows], [x.predicted_us for x in rows],
            [x.measured_us for x in rows], [F.kernel_class(x.cost, x.bound) for x in rows],
            r.noise_floor, rows, step)


def _step_ratio(rows, predicted: list[float], step) -> float | None:
    """Predicted step (each measured kernel's prediction times its executions) over the
    measured median step."""
    if step is None or not step.measured_us:
        return None
    return sum(p * x.runs for p, x in zip(predicted, rows)) / step.measured_us


def evaluate(paths: list[str], auto_model: bool) -> list[dict]:
    data = {}
    for p in paths:
        if _program(p).get("config", "default") != "default":
            continue        # a configuration of a program: in the ranking below
        got = measure_program(p, auto_model)
        if got is not None:
            data[os.path.basename(p.rstrip("/"))] = got
    fits = {name: F.fit(d[1], d[2], d[3]) for name, d in data.items()}
    out = []
    for name, (names, pred, meas, cls, floor, rows, step) in data.items():
        cal = F.calibrate_to_trace(names, pred, meas, cls)
        if cal is None:
            continue
        alone = M.all_metrics(pred, meas)
        held = M.all_metrics(cal.held_out, meas)
        transfer = [M.all_metrics([fits[o].apply(p, c) for p, c in zip(pred, cls)], meas)
                    for o in fits if o != name]
        out.append({
            "program": name, "kernels": len(names), "alone": alone, "fitted": held,
            "transfer": {k: statistics.median(t[k] for t in transfer) for k in M.METRICS}
            if transfer else {}, "floor": floor,
            "step_kernels": _step_ratio(rows, meas, step),
            "step_alone": _step_ratio(rows, pred, step),
            "step_fitted": _step_ratio(rows, cal.held_out, step)})
    return out


def _f(x, pct=False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.0%}" if pct else f"{x:.2f}"


def table(name: str, rows: list[dict]) -> list[str]:
    lines = [f"**{name}** ({len(rows)} programs): Kendall tau and median APE per program, "
             "each on the program's own trace; *fitted*: held-out kernels (5-fold); "
             "*transfer*: fitted to another program's trace (median over the others); "
             "*floor*: the measurement's two halves against each other; *step*: predicted "
             "step (measured kernels x executions) / measured median step; *step "
             "measured*: the same sum of the kernels' measured medians (how far summing "
             "kernels alone is off).", "",
             "| program | kernels | tau alone | tau fitted | tau transfer | tau floor | "
             "APE alone | APE fitted | APE transfer | APE floor | step measured | "
             "step alone | step fitted |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        a, f, t, nf = r["alone"], r["fitted"], r["transfer"], r["floor"]
        lines.append(
            f"| {r['program']} | {r['kernels']} | {_f(a['kendall_tau'])} | "
            f"{_f(f['kendall_tau'])} | {_f(t.get('kendall_tau'))} | "
            f"{_f(nf.get('kendall_tau'))} | {_f(a['median_ape'], True)} | "
            f"{_f(f['median_ape'], True)} | {_f(t.get('median_ape'), True)} | "
            f"{_f(nf.get('median_ape'), True)} | {_f(r['step_kernels'])} | "
            f"{_f(r['step_alone'])} | "
            f"{_f(r['step_fitted'])} |")

    def mean(key: str, metric: str) -> float:
        xs = [r[key].get(metric) for r in rows]
        return statistics.mean(x for x in xs if x is not None and not math.isnan(x))

    def within(key: str) -> int:
        return sum(1 for r in rows if r[key].get("median_ape", math.inf) <= 0.40)

    def far(key: str) -> int:
        return sum(1 for r in rows if r[key] is not None and max(r[key], 1 / r[key]) > 2)
    lines += ["", f"Summary over {len(rows)} programs (goal, issue 34: fitted median APE per "
              "program <= 40% and mean Kendall tau >= 0.80 on held-out kernels):", "",
              "| | mean tau | programs with median APE <= 40% | median of median APE | "
              "steps > 2x off |", "|---|---:|---:|---:|---:|"]
    for key, label in (("alone", "profile alone"), ("fitted", "fitted (held out)"),
                       ("transfer", "transfer (another program's fit)"),
                       ("floor", "noise floor")):
        apes = [r[key].get("median_ape") for r in rows if r[key]]
        apes = [x for x in apes if x is not None and not math.isnan(x)]
        step = {"alone": far("step_alone"), "fitted": far("step_fitted"),
                "floor": far("step_kernels")}.get(key)
        lines.append(f"| {label} | {mean(key, 'kendall_tau'):.3f} | {within(key)} of "
                     f"{len(rows)} | {statistics.median(apes):.0%} | "
                     f"{'–' if step is None else step} |")
    tau, ok = mean("fitted", "kendall_tau"), within("fitted")
    lines += ["", f"Goal, fitted and held out: mean tau {tau:.3f} "
              f"({'met' if tau >= 0.80 else 'not met'}: >= 0.80), median APE <= 40% on "
              f"{ok} of {len(rows)} programs "
              f"({'met' if ok == len(rows) else 'not met on ' + str(len(rows) - ok)})."]
    return lines


def _steps(path: str) -> tuple[float, tuple[float, float]] | None:
    """The interleaved wall-clock step time of a traced program and its two halves."""
    try:
        with open(os.path.join(path, "step_times.json"), encoding="utf-8") as f:
            rec = json.load(f)
        return float(rec["median_us"]), (float(rec["halves_us"][0]),
                                         float(rec["halves_us"][1]))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def _program(path: str) -> dict:
    try:
        with open(os.path.join(path, "program.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def config_ranking(paths: list[str]) -> list[dict]:
    """Per base program with 3+ traced configurations: Kendall tau of predicted against
    measured (interleaved wall-clock) step times, for the default model on the profile
    alone, fitted to the base program's trace (one trace, the configurations predicted
    before they run) and each fitted to its own trace; the floor: the measurement's two
    halves against each other."""
    bases: dict[str, list[str]] = {}
    for p in paths:
        info = _program(p)
        if info.get("base") and _steps(p) is not None:
            bases.setdefault(info["base"], []).append(p)
    out = []
    for base, members in sorted(bases.items()):
        if len(members) < 3:
            continue
        reports = {p: runtime_report(open_dump(p), fit_to_trace=False) for p in members}
        base_path = next((p for p in members if _program(p).get("config") == "default"), None)
        if base_path is None:
            continue
        b = reports[base_path].measured_rows
        shared = F.fit([x.predicted_us for x in b], [x.measured_us for x in b],
                       [F.kernel_class(x.cost, x.bound) for x in b])
        alone, from_base, own, meas, halves = [], [], [], [], []
        for p in members:
            r = reports[p]
            rows = [x for x in r.rows if x.module_id == r.modules[0][0]]
            alone.append(sum(x.predicted_us * x.runs for x in rows))
            from_base.append(sum(shared.apply(x.predicted_us, F.kernel_class(x.cost, x.bound))
                                 * x.runs for x in rows))
            m = r.measured_rows
            mine = F.fit([x.predicted_us for x in m], [x.measured_us for x in m],
                         [F.kernel_class(x.cost, x.bound) for x in m])
            own.append(sum(mine.apply(x.predicted_us, F.kernel_class(x.cost, x.bound))
                           * x.runs for x in rows))
            st = _steps(p)
            assert st is not None
            meas.append(st[0])
            halves.append(st[1])
        out.append({"base": base, "configs": len(members),
                    "alone": M.kendall_tau(alone, meas),
                    "from_base": M.kendall_tau(from_base, meas),
                    "own": M.kendall_tau(own, meas),
                    "floor": M.kendall_tau([h[0] for h in halves], [h[1] for h in halves])})
    return out


def ranking_table(rows: list[dict]) -> list[str]:
    if not rows:
        return ["No base program has 3 or more traced configurations with step times here "
                "(`make traced` makes them): configuration ranking not measured."]
    lines = ["**Configuration ranking** (default model): Kendall tau of predicted step time "
             "against the interleaved wall-clock step time over a program's configurations "
             "(XLA options, `bench/corpus/traced_programs.py`); *fitted to the base's trace*: "
             "the correction from the default configuration's trace applied to every "
             "configuration (one trace, the others predicted before they run); *each fitted "
             "to its own trace*; *floor*: the measurement's two runs against each other. "
             "Goal: within 0.1 of the floor.", "",
             "| base | configurations | profile alone | fitted to the base's trace | "
             "each fitted to its own trace | floor |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['base']} | {r['configs']} | {_f(r['alone'])} | "
                     f"{_f(r['from_base'])} | {_f(r['own'])} | {_f(r['floor'])} |")

    def mean(k: str) -> float:
        return statistics.mean(r[k] for r in rows if not math.isnan(r[k]))
    lines.append(f"| mean | | {mean('alone'):.2f} | {mean('from_base'):.2f} | "
                 f"{mean('own'):.2f} | {mean('floor'):.2f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", nargs="*", help="traced dump folders (default: the traced "
                    "corpus here and the traced samples)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    paths = programs(args.dumps)
    lines = ["## Calibrated from the trace: predictions for the machine that made it "
             "(issue 34)", "",
             f"Command: {command()} — {machine()}; "
             f"{len(paths)} traced dumps (`generated/traced/*` made here today with "
             "`make traced`-style runs of 2 sessions each, and the traced samples). Device "
             "profile: this machine's calibrated one. Correction: "
             "log(measured) = offset + slope x log(predicted) + an offset per kind of kernel "
             f"(ridge {F.RIDGE_SLOPE:g} on the slope, {F.RIDGE_CLASS:g} on class offsets; "
             "set before these runs, not tuned on them).", ""]
    last: list[dict] = []
    for name, auto in PREDICTORS.items():
        last = evaluate(paths, auto)
        lines += table(name, last) + [""]
    lines += ranking_table(config_ranking(paths)) + [""]
    sums = sorted(r["step_kernels"] for r in last if r["step_kernels"] is not None)
    if sums:
        lines += [f"Why a step is predicted 2x off (issue 32, item 10): the measured kernels' "
                  f"medians times their executions sum to {sums[0]:.2f}-{sums[-1]:.2f} of the "
                  f"measured step (median {statistics.median(sums):.2f}; *step measured*), "
                  "so neither the executions per step nor kernels overlapping on two "
                  "threads double the sum (below 1: time between kernels, and means above "
                  "medians); the predictions per kernel are off, by one factor for the "
                  "whole machine (exp of the fit's offset) and one per kind of kernel: this "
                  "machine against the one the profile or the model learned from. The fit "
                  "to the trace takes both out.", ""]
    lines += ["Reading: the fit removes the machine's overall speed and the bias per kind of "
              "kernel (median APE falls, steps come within 2x), but cannot reorder kernels "
              "of one kind, so tau stays the predictor's; held out over folds it loses "
              "0.01-0.03, since kernels the predictor ties (or nearly) are ordered by "
              "which fold's fit predicted them. Transfer (one program's trace of this "
              "machine, then every other program) keeps most of the gain in median APE. "
              "Ranking configurations: a correction from the base's trace moves every "
              "configuration's step alike, so it ranks them as the profile alone does; "
              "each configuration fitted to its own trace ranks them by its profiled "
              "kernels, which the wall clock without the profiler orders otherwise. Both "
              "stay further than 0.1 below the floor: that goal is not met.",
              "", f"{time.perf_counter() - t0:.0f} s in all."]
    publish("trace_fit_bench", lines, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
