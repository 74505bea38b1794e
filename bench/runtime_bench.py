"""Accuracy of predicted kernel runtimes: calibrated roofline vs learned cost model.

Leave-one-program-out over every traced program (the two sample traces and the programs
``bench/make_traced_programs.py`` writes into ``generated/traced/``): for each program,
the learned model is trained on all the others and predicts it; the roofline uses this
machine's profile, measured by ``calibrate`` at the start of the run. Per program:
Kendall tau, Spearman, median APE, time-weighted APE and top-10 recall of each predictor
against the measured median per execution, and the noise floor (the same metrics between
two halves of the measurements: alternate profiling sessions). The summary is the mean
over programs.

    .venv/bin/python bench/make_traced_programs.py      # once (~6 min)
    .venv/bin/python bench/runtime_bench.py [--seeds 3] [--no-write]
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import ROOT, command, machine, write_section  # noqa: E402
from compiler_bridge.perf import learned as L  # noqa: E402
from compiler_bridge.perf import HIGHER_IS_BETTER, METRICS  # noqa: E402

SHOWN = ("kendall_tau", "median_ape", "top10_recall")
GOALS = {"kendall_tau": 0.8, "median_ape": 0.25}


def programs() -> list[str]:
    out = [os.path.join(ROOT, "sample_dumps", s) for s in ("transformer", "scan_while")]
    gen = sorted(p for p in glob.glob(os.path.join(ROOT, "generated", "traced", "*"))
                 if os.path.isdir(p))
    if not gen:
        print("generated/traced/ is empty: run bench/make_traced_programs.py first",
              file=sys.stderr)
    return out + gen


def family_of(names: list[str]) -> dict[str, str]:
    """Program -> family (the builder in make_traced_programs; the transformer sample is a
    transformer, the scan/while sample a family of its own)."""
    from bench.make_traced_programs import PROGRAMS
    out = {"transformer": "transformer"}
    for n in names:
        if n in PROGRAMS:
            out[n] = PROGRAMS[n][1]
    return out


def _f(x: float, pct: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.1%}" if pct else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=None, help="models averaged per fold")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--stat", default="median", choices=("median", "p10", "min", "mean"))
    ap.add_argument("--profile", help="a device profile JSON instead of calibrating now")
    ap.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    if args.profile:
        from compiler_bridge.perf import load_profile
        device = load_profile(args.profile)
    else:
        from compiler_bridge.perf import calibrate
        device = calibrate(log=print)
    paths = programs()
    ds = L.dataset_from_dumps(paths, device, args.stat, log=print)
    cfg = L.TrainConfig()
    if args.seeds:
        cfg.seeds = args.seeds
    if args.steps:
        cfg.steps = args.steps
    folds = L.leave_one_program_out(ds, device, cfg, log=print)
    summary = L.summarize(folds)
    families = family_of(ds.programs)
    strict = L.summarize(L.leave_one_program_out(ds, device, cfg, group_of=families))
    secs = time.perf_counter() - t0

    lines = ["## Runtime prediction accuracy: calibrated roofline vs learned model", ""]
    lines.append(f"Command: {command()} — {machine()}; {len(folds)} programs, {len(ds)} "
                 f"measured kernels, {secs:.0f} s in all. Measured value: the {args.stat} "
                 "self time per execution over all traced runs (each generated program ran "
                 "in 4 profiling sessions of 8 steps, taken in rounds over all programs "
                 "about a minute apart; the two samples' traces are one session each, of 3 "
                 "and 5 runs). "
                 "Leave-one-program-out: the learned "
                 f"model ({cfg.hidden} hidden units, {cfg.embed}-d opcode embeddings, "
                 f"{cfg.steps} Adam steps, {cfg.seeds} seeds averaged, squared log error + "
                 f"pairwise ranking loss weight {cfg.rank_weight}) is trained on all other "
                 "programs. Roofline: this machine's `calibrate` profile "
                 f"(matmul {device.matmul_rate('f32') / 1e9:.0f} GFLOP/s, vector "
                 f"{device.vector_flops / 1e9:.0f} GFLOP/s, bandwidth "
                 f"{min(b for _, b in device.bandwidth_curve) / 1e9:.0f}–"
                 f"{max(b for _, b in device.bandwidth_curve) / 1e9:.0f} GB/s by working "
                 f"set, {device.output_bandwidth / 1e9:.1f} GB/s into program outputs, "
                 f"{device.launch_overhead_us:.2f} µs per kernel)."
                 if device.bandwidth_curve else
                 f"Command: {command()} — {machine()}; {len(folds)} programs.")
    lines.append("")
    lines.append("Noise floor: the same metric between two halves of the measurements "
                 "(sessions 1+3 vs 2+4; odd vs even runs for the one-session samples) — how "
                 "well the measurement agrees with itself; no predictor can be expected to "
                 "beat it. Programs share these 2 cores with other jobs, which is part of "
                 "the noise.")
    lines.append("")
    lines.append("**Mean over held-out programs**")
    lines.append("")
    lines.append("| metric | calibrated roofline | learned | noise floor | goal | learned ≥ roofline |")
    lines.append("|---|---:|---:|---:|---:|:---:|")
    for k in METRICS:
        pct = k in ("median_ape", "time_weighted_ape", "top10_recall")
        r, l_, n = summary["roofline"][k], summary["learned"][k], summary["noise_floor"][k]
        better = (l_ >= r) if HIGHER_IS_BETTER[k] else (l_ <= r)
        goal = GOALS.get(k)
        goal_txt = "–" if goal is None else (("≥ " if HIGHER_IS_BETTER[k] else "≤ ")
                                             + _f(goal, pct))
        lines.append(f"| {k} | {_f(r, pct)} | **{_f(l_, pct)}** | {_f(n, pct)} | {goal_txt} | "
                     f"{'yes' if better else 'no'} |")
    lines.append("")
    fams = sorted({families.get(p, p) for p in ds.programs})
    lines.append("Stricter: leave one *family* out (each program predicted by a model that "
                 f"saw no program of its family; {len(fams)} families: {', '.join(fams)}): "
                 "learned Kendall tau "
                 f"{_f(strict['learned']['kendall_tau'])}, median APE "
                 f"{_f(strict['learned']['median_ape'], True)}, top-10 recall "
                 f"{_f(strict['learned']['top10_recall'], True)} (roofline "
                 f"{_f(summary['roofline']['kendall_tau'])}, "
                 f"{_f(summary['roofline']['median_ape'], True)}, "
                 f"{_f(summary['roofline']['top10_recall'], True)}). This is how the model "
                 "does on a kind of program it was never trained on.")
    lines.append("")
    lines.append("**Per held-out program** (roofline / learned / noise floor)")
    lines.append("")
    lines.append("| program | kernels | Kendall tau | median APE | top-10 recall |")
    lines.append("|---|---:|---|---|---|")
    for f in folds:
        cells = []
        for k in SHOWN:
            pct = k != "kendall_tau"
            cells.append(f"{_f(f.roofline[k], pct)} / **{_f(f.learned[k], pct)}** / "
                         f"{_f(f.noise_floor[k], pct)}")
        lines.append(f"| {f.program} | {f.kernels} | " + " | ".join(cells) + " |")
    lines.append("")
    met = [k for k in GOALS if (summary["learned"][k] >= GOALS[k]) == HIGHER_IS_BETTER[k]]
    missed = [k for k in GOALS if k not in met]
    def exact(k: str) -> str:
        v = summary["learned"][k]
        return f"{v:.2%}" if k in ("median_ape",) else f"{v:.3f}"
    lines.append("Goals: " + (", ".join(f"{k} met ({exact(k)})" for k in met) or "none met")
                 + ("; " + ", ".join(f"{k} missed ({exact(k)})" for k in missed)
                    if missed else "") + ".")
    body = "\n".join(lines)
    print("\n" + body)
    if not args.no_write:
        write_section("runtime_bench", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
