"""Candidates for a *local* correction on top of the trace fit (issue 34: held-out median APE
per program <= 40% on programs never seen), scored by the protocol of DEVELOPERS.md
("evaluate models honestly"): the candidates and their constants below were fixed before
any was scored; they are scored on the *selection* half of the traced programs
(``trace_fit_bench.halves``: odd places in name order) and chosen there; only the chosen
one and the current method are then scored on the *report* half, once.

The global fit (``trace_fit.fit``, a median regression of log time with one offset per
kind of kernel) leaves a residual per kernel, ``r = log(measured) - log(fitted)``. A local
term predicts a held-out kernel's residual from the residuals of the fitting folds'
kernels near it, in features fixed in advance (natural logs): the predictor's time,
bytes moved, flops; the distance is

    d^2 = sum over features of (difference / h)^2 + P * [kinds of kernel differ]

with h = ln 2 (kernels within 2x in every feature are near), P = 4 (another kind counts
as two bandwidths away), and each fitting kernel weighs ``exp(-d^2 / 2)``. The candidates:

* ``global``: no local term (the current method);
* ``mean``: the weighted mean of the neighbours' residuals with a pseudo-weight w0 = 1 at
  0 (``sum w r / (w0 + sum w)``: one exact twin moves a kernel half its residual);
* ``median``: the weighted median of the neighbours' residuals and a 0 of weight w0 = 1;
* ``knn``: the nearest (at most k = 5) fitting kernels within d <= 2, their mean
  residual times n / (n + 2) (n: how many there are);
* ``median_wide``: ``median`` with h = ln 4;
* ``median_same_kind``: ``median`` over kernels of the same kind alone (P infinite).

Round 2, fixed after round 1 had been scored on the selection half alone (every round-1
local term took the default model's mean tau below 0.80 there):

* ``median_no_twins``: ``median`` without the kernels of the query's own shape (bytes,
  flops, opcode, fusion kind): a smooth term by size, what a new shape would get;
* ``median_tight``, ``mean_tight``: ``median``, ``mean`` with h = ln 2 / 2;
* ``mean_strong_prior``: ``mean`` with w0 = 3.

Round 3, fixed after round 2 had been scored on the selection half alone (again each
took the default model's mean tau below 0.80; with folds by shape the local terms gain
nothing, so what they gain is the exact twins', and the other neighbours add noise):

* ``twins_median``: the weighted median of the residuals of the fitting kernels of the
  query's own shape and a 0 of weight w0 = 1 (no other neighbours);
* ``twins_mean``: their mean residual times n / (n + 1).

Round 4, fixed after round 3 had been scored on the selection half alone (twins_median
moved the default model's mean tau to 0.7987, just below 0.80; a small local term is mostly
the twins' noise and reverses their order, a large one is the machine's real behaviour for
that shape, e.g. mobilenet's 2.5-3.5x):

* ``twins_soft``, ``twins_soft_2``: ``twins_median`` soft-thresholded, moved towards 0 by
  ln 1.5 (resp. ln 2) and 0 within it (a Laplace prior on the local effect: only a twin
  group's deviation above the noise between twins moves a kernel).

Chosen on the selection half by the rule: ``twins_soft_2`` (the one candidate of the 14
that passes the constraints and puts more programs within 40% than ``global``). Written
before the report half was scored: it and ``global`` are scored there once; it goes into
the product unless there it puts fewer programs within 40% (pooled) than ``global`` or
the default model's mean tau over all programs falls below 0.80.

Scored there once (BENCHMARKS.md): it moved no program across 40% with either predictor
(roofline 9 of 17 both, mean tau 0.619 to 0.627; default model 15 of 17 and 0.843 both),
so by the rule it would ship. The lead did not put it into the product, overriding the
rule, which asked only "not worse": the default model, what the panel and ``runtimes``
use, gains nothing on either half (32 of 34 both, mean tau 0.823 to 0.822), the sample
transformer gets worse (median APE 26.0% to 28.3%: three transposes whose twins by the
key are other transposes of one size), and the code it needs (a twin key and a term in
every fit, fold and smearing factor) buys one roofline program. A negative result: no
local term here brings mobilenet_s_f32_infer or unet_s_f32_infer under 40%.

Held-out honesty: a held-out fold's local term uses only the fitting folds' kernels and
their residuals from the global fit trained on those folds. Sums: the smearing factor
('time', trace_fit) is computed on the fitting kernels' residuals after the local term,
each fitting kernel's local term computed without itself (leave one out).

Choice, fixed before scoring: pooled over both predictors (roofline and default model) on
the selection half, most programs with held-out median APE <= 40%, then mean Kendall tau,
then median of median APE; a candidate must keep the default model's mean tau >= 0.80 and
not add steps more than 2x off. Diagnostic (not a criterion): the same with folds by a
hash of the kernel's shape (bytes, flops, opcode, fusion kind) instead of its name, so a
kernel's exact twins are held out with it: what the local term gains without twins.

    .venv/bin/python -m bench.accuracy.trace_fit_local [--no-write]
        (every candidate on the selection half: its BENCHMARKS.md section)
    .venv/bin/python -m bench.accuracy.trace_fit_local --half selection|report
        [--candidates NAME ...] [--shape-folds]      (printed, nothing written)
"""

from __future__ import annotations

import argparse
import hashlib
import math
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

from bench.accuracy import trace_fit_bench as B
from bench.common import command, machine, publish
from compiler_bridge.perf import metrics as M
from compiler_bridge.perf import trace_fit as F


@dataclass(frozen=True)
class Local:
    how: str                  # 'none', 'mean', 'median', 'knn'
    h: float = math.log(2.0)  # bandwidth, natural log units
    penalty: float = 4.0      # added to d^2 when the kinds of kernel differ (inf: same only)
    w0: float = 1.0           # pseudo-weight at a residual of 0
    k: int = 5                # knn: at most this many
    radius: float = 2.0       # knn: within this distance
    k0: float = 2.0           # knn: shrinkage n / (n + k0)
    twins: bool = True        # False: kernels of the query's own shape are not neighbours
    only_twins: bool = False  # True: the kernels of the query's own shape alone
    threshold: float = 0.0    # the term moved this far towards 0 (0 within it)


CANDIDATES = {
    "global": Local("none"),
    "mean": Local("mean"),
    "median": Local("median"),
    "knn": Local("knn"),
    "median_wide": Local("median", h=math.log(4.0)),
    "median_same_kind": Local("median", penalty=math.inf),
    # round 2, fixed after round 1 was scored on the selection half (every local term
    # there cost the default model's mean tau, 0.803 to 0.786-0.789, below the 0.80 kept:
    # most in small programs, where far neighbours add noise; and exact twins predicted
    # from each other come out in the reverse of their measured order)
    "median_no_twins": Local("median", twins=False),
    "median_tight": Local("median", h=math.log(2.0) / 2),
    "mean_tight": Local("mean", h=math.log(2.0) / 2),
    "mean_strong_prior": Local("mean", w0=3.0),
    # round 3, fixed after round 2 was scored on the selection half (the same: below 0.80)
    "twins_median": Local("median", only_twins=True),
    "twins_mean": Local("mean", only_twins=True),
    # round 4, fixed after round 3 was scored on the selection half (twins_median: 0.7987)
    "twins_soft": Local("median", only_twins=True, threshold=math.log(1.5)),
    "twins_soft_2": Local("median", only_twins=True, threshold=math.log(2.0)),
}


def features(d: dict) -> np.ndarray:
    """log predicted time, log bytes, log flops per kernel."""
    return np.column_stack([np.log(np.maximum(d["pred"], F.FLOOR_US)),
                            np.log(np.maximum(d["bytes"], 1.0)),
                            np.log(np.maximum(d["flops"], 1.0))])


def _wmedian(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values, kind="mergesort")
    v, w = values[order], weights[order]
    cum = np.cumsum(w)
    half = cum[-1] / 2
    i = int(np.searchsorted(cum, half - 1e-12))
    if abs(cum[i] - half) < 1e-12 and i + 1 < len(v):
        return float((v[i] + v[i + 1]) / 2)
    return float(v[i])


def local_terms(loc: Local, z_fit: np.ndarray, r_fit: np.ndarray, c_fit: np.ndarray,
                z_q: np.ndarray, c_q: np.ndarray, skip_self: bool = False,
                s_fit: list | None = None, s_q: list | None = None) -> np.ndarray:
    """Each query kernel's local term from the fitting kernels' residuals; ``skip_self``:
    the queries are the fitting kernels, each without itself; ``s_fit``, ``s_q``: the
    kernels' shapes (``loc.twins`` False: one of the query's shape is no neighbour)."""
    out = np.zeros(len(z_q))
    if loc.how == "none" or len(z_fit) == 0:
        return out
    for i in range(len(z_q)):
        d2 = (((z_fit - z_q[i]) / loc.h) ** 2).sum(axis=1)
        other = c_fit != c_q[i]
        d2 = d2 + np.where(other, loc.penalty if math.isfinite(loc.penalty) else 0.0, 0.0)
        keep = ~other if not math.isfinite(loc.penalty) else np.ones(len(d2), bool)
        if skip_self:
            keep = keep & (np.arange(len(d2)) != i)
        if (loc.only_twins or not loc.twins) and s_fit is not None and s_q is not None:
            same = np.array([s == s_q[i] for s in s_fit], bool)
            keep = keep & (same if loc.only_twins else ~same)
        d2, r = d2[keep], r_fit[keep]
        if len(r) == 0:
            continue
        if loc.how == "knn":
            near = np.argsort(d2, kind="mergesort")[:loc.k]
            near = near[d2[near] <= loc.radius ** 2]
            n = len(near)
            out[i] = float(r[near].mean()) * n / (n + loc.k0) if n else 0.0
            continue
        w = np.exp(-d2 / 2)
        if loc.how == "mean":
            out[i] = float((w * r).sum() / (loc.w0 + w.sum()))
        else:
            out[i] = _wmedian(np.append(r, 0.0), np.append(w, loc.w0))
    return np.sign(out) * np.maximum(np.abs(out) - loc.threshold, 0.0)


def held_out(d: dict, loc: Local, fold: list[int]) -> tuple[list[float], list[float]] | None:
    """Held-out fitted and expected times of every kernel of a program (5 folds)."""
    pred, meas, cls, runs = d["pred"], d["meas"], d["cls"], d["runs"]
    z, c = features(d), np.asarray(cls)
    sig = shapes(d)
    n = len(pred)
    if n < F.MIN_KERNELS:
        return None
    held, held_exp = [0.0] * n, [0.0] * n
    for test, train in F.splits(fold):
        if len(train) < F.MIN_KERNELS // 2:
            return None
        g = F.fit([pred[i] for i in train], [meas[i] for i in train],
                  [cls[i] for i in train], weights=[runs[i] for i in train])
        gt = np.array([g.apply(pred[i], cls[i]) for i in train])
        r = np.log(np.maximum([meas[i] for i in train], F.FLOOR_US)) - np.log(gt)
        st = [sig[i] for i in train]
        own = local_terms(loc, z[train], r, c[train], z[train], c[train], True, st, st)
        # the smearing factor on the residuals after the local term ('time')
        fitted = gt * np.exp(own) * np.asarray([runs[i] for i in train], dtype=np.float64)
        smear = float((fitted * np.exp(r - own)).sum() / fitted.sum())
        lq = local_terms(loc, z[train], r, c[train], z[test], c[test], False, st,
                         [sig[i] for i in test])
        for j, i in enumerate(test):
            held[i] = g.apply(pred[i], cls[i]) * math.exp(lq[j])
            held_exp[i] = held[i] * smear
    return held, held_exp


def name_folds(d: dict) -> list[int]:
    return [F.fold_of(k) for k in d["names"]]


def shapes(d: dict) -> list[tuple]:
    """A kernel's shape as this script tells twins: bytes, flops, opcode, fusion kind."""
    return list(zip(d["bytes"], d["flops"], d["opcode"], d["fk"]))


def shape_folds(d: dict) -> list[int]:
    """Folds by a hash of the kernel's shape: exact twins held out together."""
    return [int.from_bytes(hashlib.blake2b(repr(s).encode(), digest_size=4).digest(),
                           "big") % F.FOLDS for s in shapes(d)]


def program_data(got: tuple) -> dict:
    """One program's measured kernels (``trace_fit_bench.measure_program``'s answer) as
    the candidates read them."""
    names, pred, meas, cls, _floor, rows, step = got
    return {"names": names, "pred": pred, "meas": meas, "cls": cls,
            "runs": [x.runs for x in rows], "bytes": [x.cost.bytes for x in rows],
            "flops": [x.cost.flops for x in rows], "opcode": [x.cost.opcode for x in rows],
            "fk": [x.cost.fusion_kind for x in rows],
            "step": step.measured_us if step is not None else None}


def load() -> dict[str, dict[str, dict]]:
    """Per predictor, per program: the measured kernels' data."""
    paths = B.programs([])
    return {name: {prog: program_data(got) for prog, got in B.measure_all(paths, auto).items()}
            for name, auto in B.PREDICTORS.items()}


def score(data: dict[str, dict[str, dict]], keep: set[str], loc: Local,
          shape: bool = False) -> dict[str, dict]:
    """Per predictor: programs, mean tau, programs <= 40%, median of median APE, steps
    more than 2x off, held out, over the programs in ``keep``."""
    out = {}
    for pname, progs in data.items():
        taus, apes, far = [], [], 0
        for prog, d in progs.items():
            if prog not in keep:
                continue
            got = held_out(d, loc, shape_folds(d) if shape else name_folds(d))
            if got is None:
                continue
            m = M.all_metrics(got[0], d["meas"])
            taus.append(m["kendall_tau"])
            apes.append(m["median_ape"])
            if d["step"]:
                ratio = sum(e * w for e, w in zip(got[1], d["runs"])) / d["step"]
                far += max(ratio, 1 / ratio) > 2
        out[pname] = {"programs": len(apes), "tau": statistics.mean(taus),
                      "within": sum(a <= 0.40 for a in apes),
                      "median_ape": statistics.median(apes), "far": far,
                      "apes": apes}
    return out


def rows(name: str, got: dict[str, dict]) -> list[str]:
    """A candidate's table rows: each predictor, then both pooled."""
    out = [f"| {name} | {p} | {s['programs']} | {s['tau']:.3f} | {s['within']} of "
           f"{s['programs']} | {s['median_ape']:.1%} | {s['far']} |" for p, s in got.items()]
    tau = statistics.mean(s["tau"] for s in got.values())
    ape = statistics.median(a for s in got.values() for a in s["apes"])
    n = sum(s["programs"] for s in got.values())
    out.append(f"| {name} | pooled | {n} | {tau:.3f} | "
               f"{sum(s['within'] for s in got.values())} of {n} | {ape:.1%} | "
               f"{sum(s['far'] for s in got.values())} |")
    return out


HEADER = ["| candidate | predictor | programs | mean tau | programs with median APE <= 40% "
          "| median of median APE | steps > 2x off |", "|---|---|---:|---:|---:|---:|---:|"]
DIAGNOSED = ("global", "median", "twins_median")     # scored with folds by shape too


def passes(got: dict[str, dict], now: dict[str, dict]) -> bool:
    """The constraints fixed with the candidates: the default model's mean tau >= 0.80,
    no more steps more than 2x off than the current method (``now``)."""
    return got["default model"]["tau"] >= 0.80 and \
        sum(s["far"] for s in got.values()) <= sum(s["far"] for s in now.values())


def twin_pairs(progs: dict[str, dict], keep: set[str], loc: Local) -> tuple[int, int]:
    """Pairs of exact twins (one shape) predicted in their measured order and in the
    reverse, held out, over the programs in ``keep``."""
    right = wrong = 0
    for prog, d in progs.items():
        got = held_out(d, loc, name_folds(d)) if prog in keep else None
        if got is None:
            continue
        p, m, sig = np.asarray(got[0]), np.asarray(d["meas"]), shapes(d)
        same = np.array([[a == b for b in sig] for a in sig]) & \
            np.triu(np.ones((len(sig), len(sig)), bool), 1)
        agree = np.sign(p[:, None] - p[None, :]) * np.sign(m[:, None] - m[None, :])
        right += int((agree[same] > 0).sum())
        wrong += int((agree[same] < 0).sum())
    return right, wrong


def key(got: dict[str, dict]) -> tuple:
    """The choice, pooled over both predictors: most programs <= 40%, then mean tau,
    then the lower median of median APE."""
    return (sum(s["within"] for s in got.values()),
            statistics.mean(s["tau"] for s in got.values()),
            -statistics.median(a for s in got.values() for a in s["apes"]))


def section(data: dict[str, dict[str, dict]]) -> list[str]:
    """The BENCHMARKS.md section: every candidate on the selection half, the choice, the
    diagnostic with folds by shape, and how it was run."""
    sel, _ = B.halves(list(next(iter(data.values()))))
    scored = {name: score(data, sel, loc) for name, loc in CANDIDATES.items()}
    ok = [n for n, g in scored.items() if passes(g, scored["global"])]
    best = max(ok, key=lambda n: key(scored[n]))
    near = max((n for n in scored if n != "global"), key=lambda n: key(scored[n]))
    g, b = scored["global"], scored[near]
    pairs = {n: twin_pairs(data["default model"], sel, CANDIDATES[n]) for n in ("global", near)}
    lines = ["## Calibrated from the trace: a local correction on top of the fit "
             "(issue 34, candidates)", "",
             f"Command: {command()} — {machine()}; the programs of `trace_fit_bench` "
             f"(same predictors, same held-out folds), the selection half alone "
             f"({len(sel)} programs: odd places in name order). What was tried: each "
             "kernel's residual from the global fit (log measured - log fitted) "
             "predicted from the residuals of the fitting folds' kernels near it (the "
             "predictor's time, bytes and flops within 2x, a kernel's exact twins: the "
             "same bytes, flops, opcode and fusion kind), shrunk towards 0; the candidates "
             "and every constant are in `bench/accuracy/trace_fit_local.py`, fixed before "
             "each round was scored and committed before it ran (three rounds, all on the "
             "selection half: round 2 and 3 after the one before had failed the tau "
             "constraint). Held out: a fold's local term reads only the fitting folds' "
             "kernels and their residuals from the fit trained on them; the smearing "
             "factor for sums is computed on the residuals after the local term (each "
             "fitting kernel's own term left out). Choice, fixed first: pooled over both "
             "predictors, most programs with median APE <= 40%, then mean tau, then "
             "median of median APE; kept only with the default model's mean tau >= 0.80 "
             "and no step more than 2x off.", ""] + HEADER
    for name, got in scored.items():
        lines += rows(name + ("" if name in ok else " (fails a constraint)"), got)
    lines += ["", "The same with folds by a hash of the kernel's shape instead of its name "
              "(a kernel's exact twins held out with it; a diagnostic, not a criterion):",
              ""] + HEADER
    for name in DIAGNOSED:
        lines += rows(name, score(data, sel, CANDIDATES[name], shape=True))
    lines += ["", f"Chosen: **{best}**" + (
        " (the current method: no local term passed the constraints)" if best == "global"
        else "") + f". The closest, *{near}*, lifts the roofline from "
        f"{g['roofline']['within']} to {b['roofline']['within']} of "
        f"{g['roofline']['programs']} programs within 40% (mean tau "
        f"{g['roofline']['tau']:.3f} to {b['roofline']['tau']:.3f}) and leaves the default "
        f"model at {b['default model']['within']} of {b['default model']['programs']}, "
        f"median of median APE {g['default model']['median_ape']:.1%} to "
        f"{b['default model']['median_ape']:.1%}, but its mean tau falls from "
        f"{g['default model']['tau']:.4f} to {b['default model']['tau']:.4f}. What every "
        "local term exploits is a kernel's exact twins (programs repeat layers, and folds "
        "by name put twins in other folds): with folds by shape none gains anything, and "
        "near kernels that are not twins add noise (most in small programs, whose mean "
        "tau counts as much as a big one's). What it costs is order: twins predicted "
        "from each other's measurements come out in the reverse of their measured "
        "order (the one measured slower is predicted from the faster), where the "
        "default model's own predictions order them better than chance (twin pairs in "
        f"their measured order and in the reverse, default model: "
        f"{pairs['global'][0]:,} and {pairs['global'][1]:,} with the fit alone, "
        f"{pairs[near][0]:,} and {pairs[near][1]:,} with *{near}*). The report half "
        "was not scored with any local term, so it stays unseen for a later round; "
        "the current method's numbers on it are those of the section above."]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--half", choices=("selection", "report"), default=None,
                    help="print the named candidates on one half (the report half: once, "
                    "for the chosen one and the current method) instead of writing the "
                    "selection-half section")
    ap.add_argument("--candidates", nargs="*", default=list(CANDIDATES),
                    choices=list(CANDIDATES))
    ap.add_argument("--shape-folds", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    data = load()
    if args.half is None:
        lines = section(data)
        publish("trace_fit_local", lines + ["", f"{time.perf_counter() - t0:.0f} s in all."],
                write=not args.no_write)
        return 0
    sel, rep = B.halves(list(next(iter(data.values()))))
    keep = sel if args.half == "selection" else rep
    print(f"{args.half} half ({len(keep)} programs), folds by "
          f"{'shape' if args.shape_folds else 'name'}")
    print("\n".join(HEADER))
    for name in args.candidates:
        print("\n".join(rows(name, score(data, keep, CANDIDATES[name], args.shape_folds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
