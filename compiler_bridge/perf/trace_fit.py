"""Predictions for the machine that made the trace: a small correction of the predictor,
fitted to the trace's own measured kernels, scored on kernels the fit did not see.

A device profile is measured on one machine at one time, a learned model was trained on
another; a user's trace comes from their machine, whose rates differ by 1.2-2x (BENCHMARKS.md,
transfer). The correction is fitted in log space:

    log(measured) = a + s * log(predicted) + b[class]

one offset ``a`` (the machine's overall speed), a slope ``s`` (how far time grows with
the prediction on it) and an offset per kind of kernel (:func:`kernel_class`: matmuls,
control flow, compute-, memory- and overhead-bound), with a ridge that pulls ``s`` towards
1 and each ``b`` towards 0, so a class with few kernels moves little.

The fit is a median regression (least absolute deviations in log space, by iteratively
reweighted least squares), not least squares: on a CPU a few kernels of a kind run 5-10x
longer than their like (an execution's time is bimodal, e.g. 5 µs or 50 µs for one
elementwise fusion, and its median lands in the slow mode); squared residuals let those
few pull the whole class's offset up, so the many others come out too slow (attn_m: the
median residual was -0.27 in every class while the mean was 0). The median regression
puts the typical kernel on its measurement, which is what a median APE scores
(BENCHMARKS.md, trace fit: how it was chosen).

A sum of kernels (a step, a group's total) is not a sum of typical kernels: the slow ones
count, and exp(fitted median of log time) undershoots the mean of a right-skewed time.
So each kernel also has an *expected* time for sums: its fitted time times a smearing
factor, the mean of exp(residual) over the kernels the fit used, each weighted by its
fitted time per step (fitted time x executions): measured over fitted time, both summed
over the step's executions, a ratio estimator. Duan's smearing (the unweighted mean, per
kind or over all) overshot the roofline's steps (BENCHMARKS.md, trace fit: how a sum is
estimated): its largest residuals are on its smallest kernels, which count little in a
step. Per-kernel predictions and their metrics stay the median fit's.

Honest scoring: every metric of a calibrated prediction is computed on held-out
kernels: the measured kernels are split into ``FOLDS`` folds (by a hash of the
instruction's name, so the split does not depend on the order of rows), each fold
predicted by the correction fitted on the others. The prediction shown for every kernel
is the one fitted on all measured kernels.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from .costs import KernelCost
from .execution import CONTROL_FLOW

FOLDS = 5
MIN_KERNELS = 8          # fewer measured kernels: no correction (too little to fit and score)
RIDGE_SLOPE = 4.0        # pull of the slope towards 1 (in units of kernels)
RIDGE_CLASS = 4.0        # pull of each class offset towards 0
CLASSES = ("matmul", "control", "compute", "memory", "overhead")
FLOOR_US = 0.01          # times are logged: never below this
LAD_ITERATIONS = 30      # reweightings of the median regression (converged well before)
LAD_EPS = 1e-3           # a residual (log) below this weighs as this: no division by 0
LOSSES = ("absolute", "squared")
SMEAR_MIN_KERNELS = 20   # 'kind': a kind's own smearing factor from this many kernels
# how a sum's factor is estimated (``fit``'s ``smearing``): the ratio of measured to
# fitted time summed over executions (chosen), Duan's per kind, Duan's over all kernels
SMEARINGS = ("time", "kind", "all")
THREADS = "threads"      # the offset of kernels split over threads (kernel_class's mark)
THREADS_OFFSET = False   # whether kernel_class marks them (a candidate, BENCHMARKS.md)


def kernel_class(cost: KernelCost, bound: str, threads: bool | None = None) -> str:
    """The kind of kernel a class offset is fitted for; with ``threads`` (default
    THREADS_OFFSET) a kernel XLA:CPU splits over threads (``outer_dimension_partitions``)
    is marked ``kind+threads``: one more offset, for every kind, for how the machine's
    thread pool runs a split kernel."""
    if cost.matmul or cost.opcode in ("dot", "convolution"):
        kind = "matmul"
    elif cost.opcode in CONTROL_FLOW:
        kind = "control"
    else:
        kind = bound if bound in CLASSES else "compute"
    split = THREADS_OFFSET if threads is None else threads
    return f"{kind}+{THREADS}" if split and cost.partitions > 1 else kind


def _kind(cls: str) -> tuple[str, bool]:
    """A class's kind, and whether it is marked split over threads."""
    kind, _, mark = cls.partition("+")
    return kind, mark == THREADS


@dataclass(frozen=True)
class Correction:
    """``log(t) = a + s log(predicted) + b[class]``, fitted to one trace; ``smear``:
    the smearing factor of the kinds that have their own, ``smear_all`` the others'."""

    a: float
    s: float
    b: dict[str, float] = field(default_factory=dict)
    kernels: int = 0
    smear: dict[str, float] = field(default_factory=dict)
    smear_all: float = 1.0

    def apply(self, predicted: float, cls: str) -> float:
        """The fitted (median) time of a kernel: what each kernel is predicted."""
        x = math.log(max(predicted, FLOOR_US))
        kind, split = _kind(cls)
        return math.exp(self.a + self.s * x + self.b.get(kind, 0.0)
                        + (self.b.get(THREADS, 0.0) if split else 0.0))

    def smearing(self, cls: str) -> float:
        """Expected over fitted time for a kernel of this kind (the smearing factor)."""
        return self.smear.get(_kind(cls)[0], self.smear_all)

    def expected(self, predicted: float, cls: str) -> float:
        """The expected (mean) time of a kernel: what a sum of kernels adds up."""
        return self.apply(predicted, cls) * self.smearing(cls)

    def to_json(self) -> dict:
        return {"offset": self.a, "slope": self.s, "class_offsets": dict(self.b),
                "kernels": self.kernels, "smearing": dict(self.smear),
                "smearing_all": self.smear_all}


def fit(predicted: Sequence[float], measured: Sequence[float],
        classes: Sequence[str], loss: str = "absolute", smearing: str = "time",
        weights: Sequence[float] | None = None) -> Correction:
    """The median regression (with a ridge) of :class:`Correction` to measured
    kernels; ``loss='squared'``: least squares (the fit before, kept for the benchmark's
    comparison). ``smearing`` (one of SMEARINGS) with ``weights`` (each kernel's
    executions per step; 'time' alone reads them): the factor for sums."""
    if loss not in LOSSES:
        raise ValueError(f"loss: expected one of {LOSSES}, got {loss!r}")
    if smearing not in SMEARINGS:
        raise ValueError(f"smearing: expected one of {SMEARINGS}, got {smearing!r}")
    p = np.log(np.maximum(np.asarray(predicted, dtype=np.float64), FLOOR_US))
    m = np.log(np.maximum(np.asarray(measured, dtype=np.float64), FLOOR_US))
    n = len(p)
    parts = [_kind(c) for c in classes]
    kinds = [k for k, _ in parts]
    used = [c for c in CLASSES if c in set(kinds)] + \
        ([THREADS] if any(split for _, split in parts) else [])
    # columns: intercept, log p - mean, one per class (and one for kernels split over
    # threads); the slope is fitted as (s - 1) so the ridge pulls it towards 1 (a pure
    # speed factor)
    x = np.zeros((n, 2 + len(used)))
    x[:, 0] = 1.0
    x[:, 1] = p
    for j, c in enumerate(used):
        x[:, 2 + j] = [1.0 if (split if c == THREADS else k == c) else 0.0
                       for k, split in parts]
    y = m - p
    pen = np.diag([0.0, RIDGE_SLOPE] + [RIDGE_CLASS] * len(used))
    # least absolute deviations: weighted least squares with weights 1/|residual|,
    # scaled to a mean of 1 so the ridge keeps its meaning in units of kernels
    w = np.ones(n)
    for _ in range(LAD_ITERATIONS if loss == "absolute" else 1):
        xw = x.T * w
        coef = np.linalg.solve(xw @ x + pen, xw @ y)
        w = 1.0 / np.maximum(np.abs(y - x @ coef), LAD_EPS)
        w /= w.mean()
    # the smearing factor: mean of exp(residual) over the fitted kernels, weighted by
    # fitted time per step ('time'), or not (Duan's: per kind with enough, or over all)
    ratio = np.exp(y - x @ coef)
    kind_of = np.asarray(kinds)
    smear = {c: float(ratio[kind_of == c].mean()) for c in used
             if int((kind_of == c).sum()) >= SMEAR_MIN_KERNELS} if smearing == "kind" else {}
    every = float(ratio.mean())
    if smearing == "time":
        fitted = np.exp(x @ coef + p) * (np.ones(n) if weights is None
                                         else np.asarray(weights, dtype=np.float64))
        every = float((fitted * ratio).sum() / fitted.sum())
    return Correction(float(coef[0]), 1.0 + float(coef[1]),
                      {c: float(coef[2 + j]) for j, c in enumerate(used)}, n,
                      smear, every)


def fold_of(name: str, folds: int = FOLDS) -> int:
    """The fold a kernel is held out in: a hash of its name (stable across runs)."""
    h = hashlib.blake2b(name.encode(), digest_size=4).digest()
    return int.from_bytes(h, "big") % folds


def splits(fold: Sequence[int], folds: int = FOLDS) -> Iterator[tuple[list[int], list[int]]]:
    """(held-out kernels, fitting kernels) of each fold that holds any: positions in
    ``fold``, each kernel's fold."""
    for f in range(folds):
        test = [i for i, k in enumerate(fold) if k == f]
        if test:
            yield test, [i for i, k in enumerate(fold) if k != f]


@dataclass(frozen=True)
class Calibrated:
    """A correction fitted on all measured kernels, and each measured kernel's held-out
    prediction (from the correction fitted without its fold), fitted and expected (the
    smearing factor from the fitting folds alone)."""

    correction: Correction
    held_out: list[float]
    folds: int
    held_out_expected: list[float] = field(default_factory=list)

    def describe(self) -> dict:
        """``metrics.fit`` of ``runtimes --json``."""
        return {"method": "log(measured) = offset + slope * log(predicted) + class offset, "
                          "median regression (least absolute deviations, with a ridge) "
                          "on this trace's measured kernels",
                "loss": "absolute deviation of log time",
                "sums": "each kernel's fitted time times the smearing factor, measured "
                        "over fitted time summed over the fitted kernels' executions "
                        "(the mean of exp(residual) weighted by fitted time per step), so "
                        "a step is an expected sum",
                "scored_on": "held-out kernels", "split": "kernels",
                "folds": self.folds, "classes": list(CLASSES),
                **self.correction.to_json()}


def why_no_fit(names: Sequence[str], folds: int = FOLDS) -> str:
    """Why :func:`calibrate_to_trace` (folds by kernel) fits nothing to these kernels."""
    if len(names) < MIN_KERNELS:
        return f"too few ({MIN_KERNELS} needed)"
    fold = [fold_of(k, folds) for k in names]
    largest = max(fold.count(f) for f in range(folds))
    return (f"held out {folds}-fold by name, one fold holds {largest} of them and would leave "
            f"{len(names) - largest} to fit ({MIN_KERNELS // 2} needed)")


def calibrate_to_trace(names: Sequence[str], predicted: Sequence[float],
                       measured: Sequence[float], classes: Sequence[str],
                       folds: int = FOLDS, by: str = "kernels",
                       loss: str = "absolute", smearing: str = "time",
                       weights: Sequence[float] | None = None) -> Calibrated | None:
    """Fit to the measured kernels (``names`` distinct per kernel); None with fewer than
    MIN_KERNELS or a fold that would leave too few to fit. ``by``: 'kernels' (folds by
    name) or 'classes' (each kind of kernel held out whole); ``smearing``, ``weights``:
    as :func:`fit`."""
    w = list(weights) if weights is not None else [1.0] * len(names)
    n = len(names)
    if n < MIN_KERNELS:
        return None
    if by == "classes":
        fold = [CLASSES.index(_kind(c)[0]) for c in classes]
        folds = len(CLASSES)
    else:
        fold = [fold_of(k, folds) for k in names]
    held, held_exp = [0.0] * n, [0.0] * n
    for test, train in splits(fold, folds):
        if len(train) < MIN_KERNELS // 2:
            return None
        c = fit([predicted[i] for i in train], [measured[i] for i in train],
                [classes[i] for i in train], loss, smearing, [w[i] for i in train])
        for i in test:
            held[i] = c.apply(predicted[i], classes[i])
            held_exp[i] = c.expected(predicted[i], classes[i])
    return Calibrated(fit(predicted, measured, classes, loss, smearing, w), held, folds,
                      held_exp)
