"""The honest evaluation of a cost model: ``leave_out`` trains on every program outside a
group (a program, or its whole family) and predicts the group, reporting the roofline's
and the model's agreement metrics per held-out program beside the measurement's own noise
floor; ``summarize`` averages them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import metrics as M
from .dataset import Dataset
from .model_base import CostModel

def _metrics(pred: np.ndarray, meas: np.ndarray) -> dict[str, float]:
    return M.all_metrics(pred, meas)


def noise_floor(ds: Dataset) -> dict[str, float]:
    ok = ~(np.isnan(ds.half_a) | np.isnan(ds.half_b))
    if ok.sum() < 2:
        return {k: math.nan for k in M.METRICS}
    return M.noise_floor(ds.half_a[ok], ds.half_b[ok])


@dataclass
class FoldResult:
    program: str
    kernels: int
    roofline: dict[str, float]
    learned: dict[str, float]
    noise_floor: dict[str, float]
    ratio: float = math.nan            # median predicted / measured, learned
    roofline_ratio: float = math.nan   # the same for the roofline
    # the same between the two halves of the measured runs: how close the measurement
    # itself comes to its own program-level ratio
    noise_ratio: float = math.nan


def median_ratio(pred: np.ndarray, meas: np.ndarray) -> float:
    ok = np.asarray(meas) > 0
    return float(np.median(np.asarray(pred)[ok] / np.asarray(meas)[ok])) if ok.any() else math.nan


def halves_ratio(ds: Dataset) -> float:
    """Median over kernels of one half of the runs' time over the other's."""
    ok = ~(np.isnan(ds.half_a) | np.isnan(ds.half_b))
    return median_ratio(ds.half_a[ok], ds.half_b[ok]) if ok.sum() >= 2 else math.nan


def leave_out(ds: Dataset, fit, group_of: dict[str, str] | None = None,
              log=None, keep: dict[str, np.ndarray] | None = None) -> list[FoldResult]:
    """For each program: ``fit`` (Dataset -> model) on every program outside its group
    (``group_of``: program -> group, e.g. its family; default: the program alone), predict
    it; metrics per held-out program for the roofline the dataset was built with and the
    model, with the noise floor. One model per group. ``keep``: filled with each
    program's predictions (µs per kernel, in dataset order)."""
    out = []
    models: dict[str, CostModel] = {}
    group_of = group_of or {}
    for prog in ds.programs:
        held = np.array([p == prog for p in ds.program])
        test = ds.subset(held)
        if len(test) < 2:
            continue
        group = group_of.get(prog, prog)
        model = models.get(group)
        if model is None:
            out_of_group = np.array([group_of.get(p, p) != group for p in ds.program])
            model = models[group] = fit(ds.subset(out_of_group))
        pred = model.predict_dataset(test)
        if keep is not None:
            keep[prog] = pred
        res = FoldResult(prog, len(test), _metrics(test.roofline_us, test.label_us),
                         _metrics(pred, test.label_us), noise_floor(test),
                         median_ratio(pred, test.label_us),
                         median_ratio(test.roofline_us, test.label_us),
                         halves_ratio(test))
        if log is not None:
            log(f"{prog}: {len(test)} kernels, tau roofline {res.roofline['kendall_tau']:.2f} "
                f"learned {res.learned['kendall_tau']:.2f} (floor "
                f"{res.noise_floor['kendall_tau']:.2f}), median APE "
                f"{res.roofline['median_ape']:.0%} / {res.learned['median_ape']:.0%}")
        out.append(res)
    return out


def summarize(folds: Sequence[FoldResult]) -> dict[str, dict[str, float]]:
    """Mean over held-out programs of each metric, for roofline, learned and noise floor."""
    out: dict[str, dict[str, float]] = {}
    for which in ("roofline", "learned", "noise_floor"):
        out[which] = {}
        for k in M.METRICS:
            vals = [getattr(f, which)[k] for f in folds]
            vals = [v for v in vals if not math.isnan(v)]
            out[which][k] = float(np.mean(vals)) if vals else math.nan
    return out
