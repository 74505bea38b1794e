"""Does a cost model trained against one calibrated device profile predict with another?

The shipped default model was trained against the profile of the machine that ran
``runtime_bench.py --ship`` (its JSON records it); a user's machine predicts with its own
profile, measured on first use. Features and targets are times on the profile, so
a model should carry over as long as the profile describes the machine. This measures how
much accuracy a change of profile costs, on the traced corpus, leave-one-family-out as in
``runtime_bench.py``: boosted trees trained on features under profile A predict each
held-out family from its features under profile A (same profile) and under profile B.

    A: ``--train-profile`` (default: the shipped model's, from its JSON)
    B, C: ``--predict-profile`` (default: ``calibrate`` now, the full sizes, as a new user's
       first use runs it, and ``calibrate --quick``)

Both profiles are of this machine (one machine here), measured at different times and
loads, so B differs from A by what calibration noise and the quick sizes make of it, not
by another chip: a lower bound on what moving to another machine costs.

    .venv/bin/python -m bench.accuracy.transfer_bench [--predict-profile B.json] [--no-write]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np


from bench.common import ROOT, command, machine, publish
from bench.accuracy import runtime_bench as RB
from compiler_bridge.perf import boosted as B
from compiler_bridge.perf.dataset import Dataset
from compiler_bridge.perf.evaluation import median_ratio
from compiler_bridge.perf import metrics as M
from compiler_bridge.perf.devices import DeviceProfile, load_profile

SHOWN = ("kendall_tau", "median_ape", "top10_recall")


def family_means(pred: np.ndarray, ds: Dataset, family: dict[str, str],
                 variants: dict) -> dict[str, float]:
    """Metrics per program (variants excepted), averaged per family, then over families;
    plus the share of programs whose median predicted/measured is within 0.8-1.25."""
    prog = np.asarray(ds.program)
    per_fam: dict[str, list[dict[str, float]]] = {}
    ratios = []
    for p in ds.programs:
        m = prog == p
        if p in variants or m.sum() < 2:
            continue
        per_fam.setdefault(family[p], []).append(M.all_metrics(pred[m], ds.label_us[m]))
        ratios.append(median_ratio(pred[m], ds.label_us[m]))
    out = {k: float(np.mean([np.nanmean([r[k] for r in rows]) for rows in per_fam.values()]))
           for k in SHOWN}
    out["ratio_ok"] = RB.in_range_share(ratios)
    return out


def _describe(d: DeviceProfile) -> str:
    return (f"matmul {d.matmul_rate('f32') / 1e9:.0f} GFLOP/s, vector "
            f"{d.vector_flops / 1e9:.0f} GFLOP/s ×{d.threads:.2f} threads, bandwidth "
            f"{d.bandwidth / 1e9:.0f} GB/s, {d.launch_overhead_us:.2f} µs per kernel, "
            f"tanh {d.transcendental_flops:.0f} flops, sine {d.trig_flops:.0f} flops, "
            f"depthwise {d.grouped_conv_flops / 1e9:.2f} GFLOP/s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.path.join(ROOT, "generated", "traced"))
    ap.add_argument("--train-profile", help="profile JSON the models train against "
                                            "(default: the shipped default model's)")
    ap.add_argument("--predict-profile", action="append",
                    help="profile JSON predictions use (repeatable; default: calibrate now, "
                         "full sizes as first use runs, and quick sizes)")
    ap.add_argument("--family-folds", type=int, default=10)
    ap.add_argument("--cache", default=RB.CACHE)
    ap.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    if args.train_profile:
        a = load_profile(args.train_profile)
    else:
        a = RB.shipped_profile()
    if args.predict_profile:
        others = {f"B{i + 1}": load_profile(p) for i, p in enumerate(args.predict_profile)}
    else:
        from compiler_bridge.perf import calibrate
        from compiler_bridge.perf.calibrate import ROUNDS
        others = {"B": calibrate(rounds=ROUNDS), "C": calibrate(quick=True)}
    paths = RB.programs(args.corpus)
    family, variants = RB.describe_corpus(paths)
    ds_a = RB.dataset(paths, a, "median", args.cache)
    ds_of = {k: RB.dataset(paths, d, "median", args.cache) for k, d in others.items()}
    for ds in ds_of.values():
        if ds_a.program != ds.program or ds_a.instruction != ds.instruction:
            raise SystemExit("the profiles' datasets hold different kernels")
    print(f"{len(ds_a.programs)} programs, {len(ds_a)} kernels; datasets in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)

    group_of = RB.family_folds(family, args.family_folds)
    prog = np.asarray(ds_a.program)
    pred = {k: np.zeros(len(ds_a)) for k in ["A"] + list(ds_of)}
    cfg = B.BoostConfig()
    for g in sorted(set(group_of.values())):
        test = np.array([group_of[p] == g for p in prog])
        model = B.train(ds_a.subset(~test), a, cfg)
        pred["A"][test] = model.predict_dataset(ds_a.subset(test))
        for k, ds in ds_of.items():
            pred[k][test] = model.predict_dataset(ds.subset(test))
    rows = {"roofline on A": family_means(ds_a.roofline_us, ds_a, family, variants)}
    rows.update({f"roofline on {k}": family_means(ds.roofline_us, ds, family, variants)
                 for k, ds in ds_of.items()})
    rows.update({f"trees trained on A, predicting on {k}": family_means(v, ds_a, family,
                                                                        variants)
                 for k, v in pred.items()})
    total = time.perf_counter() - t0

    quick = {k for k, d in others.items() if d.details.get("quick")}
    lines = ["## Transfer: a model trained against one device profile, predicting with another",
             "",
             f"Command: {command()} — {machine()}; {total:.0f} s in all. Corpus: "
             f"{len(ds_a.programs)} programs, {len(ds_a)} measured kernels, leave one family "
             f"out ({args.family_folds} groups of families, as in the runtime benchmark); "
             f"boosted trees ({cfg.rounds} rounds) trained on features under profile A.",
             "",
             f"- A ({a.source}): {_describe(a)}"]
    lines += [f"- {k} ({d.source}): {_describe(d)}" for k, d in others.items()]
    lines += ["",
              "All are profiles of this one machine, measured at different times"
              + (f" ({', '.join(sorted(quick))} with the quick sizes)" if quick else "")
              + ": what a change of profile costs when the chip stays the same, a lower "
              "bound on moving to another machine.",
              "",
              "| predictor | Kendall tau | median APE | top-10 recall | programs with ratio in "
              "0.8–1.25 |",
              "|---|---:|---:|---:|---:|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['kendall_tau']:.2f} | {r['median_ape']:.1%} | "
                     f"{r['top10_recall']:.1%} | {r['ratio_ok']:.1%} |")
    lines.append("")
    for k in ds_of:
        shift = np.abs(np.log(pred[k] / pred["A"]))
        lines.append(f"Predictions on {k} move from those on A by a median factor of "
                     f"{math.exp(float(np.median(shift))):.2f} (90th percentile "
                     f"{math.exp(float(np.percentile(shift, 90))):.2f}).")
    publish("transfer_bench", lines, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
