"""How well predicted kernel runtimes match measured ones.

* ``kendall_tau``: Kendall's tau-b (ties in either vector handled as scipy does);
* ``spearman``: Pearson correlation of average ranks;
* ``median_ape``: median over kernels of ``|pred - meas| / meas``;
* ``time_weighted_ape``: ``sum |pred - meas| / sum meas`` (the APE weighted by measured
  time, so slow kernels count most);
* ``top10_recall``: share of the 10 slowest measured kernels that are among the 10
  slowest predicted (``k = min(10, n)``).

The *noise floor* of a metric is its value between two halves of the measurements
(alternate profiling sessions when a trace has several, else odd and even runs): a prediction cannot be expected to agree with the measurement better than
the measurement agrees with itself.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

METRICS = ("kendall_tau", "spearman", "median_ape", "time_weighted_ape", "top10_recall")
# Which direction is better, for reports.
# What every metric takes: a list of floats or a 1-D numpy array (read as float64).
Vector = Sequence[float] | np.ndarray

HIGHER_IS_BETTER = {"kendall_tau": True, "spearman": True, "median_ape": False,
                    "time_weighted_ape": False, "top10_recall": True}


def _arrays(pred: Vector, meas: Vector) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(pred, dtype=np.float64)
    m = np.asarray(meas, dtype=np.float64)
    if p.shape != m.shape or p.ndim != 1:
        raise ValueError(f"expected two vectors of one length, got {p.shape} and {m.shape}")
    return p, m


def kendall_tau(x: Vector, y: Vector) -> float:
    """Kendall's tau-b; NaN for fewer than 2 items or a constant vector."""
    a, b = _arrays(x, y)
    n = len(a)
    if n < 2:
        return math.nan
    concordant_minus_discordant = 0.0
    ties_a = ties_b = 0.0   # pairs tied in a (resp. b), including pairs tied in both
    block = max(1, 4_000_000 // n)
    for start in range(0, n, block):
        sa = np.sign(a[start:start + block, None] - a[None, :])
        sb = np.sign(b[start:start + block, None] - b[None, :])
        concordant_minus_discordant += float(np.sum(sa * sb))
        ties_a += float(np.sum(sa == 0))
        ties_b += float(np.sum(sb == 0))
    # each unordered pair counted twice; the diagonal (n self-pairs) is a tie in both
    pairs = n * (n - 1) / 2
    s = concordant_minus_discordant / 2
    ta = (ties_a - n) / 2
    tb = (ties_b - n) / 2
    denom = math.sqrt((pairs - ta) * (pairs - tb))
    return s / denom if denom > 0 else math.nan


def _ranks(v: np.ndarray) -> np.ndarray:
    """Average ranks (1-based), ties share the mean rank."""
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v), dtype=np.float64)
    sv = v[order]
    i = 0
    n = len(v)
    while i < n:
        j = i
        while j + 1 < n and sv[j + 1] == sv[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x: Vector, y: Vector) -> float:
    a, b = _arrays(x, y)
    if len(a) < 2:
        return math.nan
    ra, rb = _ranks(a), _ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    denom = math.sqrt(float(np.sum(ra * ra)) * float(np.sum(rb * rb)))
    return float(np.sum(ra * rb)) / denom if denom > 0 else math.nan


def median_ape(pred: Vector, meas: Vector) -> float:
    p, m = _arrays(pred, meas)
    ok = m > 0
    if not ok.any():
        return math.nan
    return float(np.median(np.abs(p[ok] - m[ok]) / m[ok]))


def time_weighted_ape(pred: Vector, meas: Vector) -> float:
    p, m = _arrays(pred, meas)
    total = float(np.sum(m))
    if total <= 0:
        return math.nan
    return float(np.sum(np.abs(p - m))) / total


def top_k_recall(pred: Vector, meas: Vector, k: int = 10) -> float:
    """Share of the k slowest measured kernels among the k slowest predicted ones.

    Ties at the cut are broken by position (stable sort), for both vectors alike."""
    p, m = _arrays(pred, meas)
    n = len(m)
    if n == 0:
        return math.nan
    k = min(k, n)
    top_m = set(np.argsort(-m, kind="stable")[:k].tolist())
    top_p = set(np.argsort(-p, kind="stable")[:k].tolist())
    return len(top_m & top_p) / k


def top10_recall(pred: Vector, meas: Vector) -> float:
    return top_k_recall(pred, meas, 10)


def all_metrics(pred: Vector, meas: Vector) -> dict[str, float]:
    """Every metric of METRICS, NaN where undefined."""
    return {"kendall_tau": kendall_tau(pred, meas), "spearman": spearman(pred, meas),
            "median_ape": median_ape(pred, meas),
            "time_weighted_ape": time_weighted_ape(pred, meas),
            "top10_recall": top10_recall(pred, meas)}


def noise_floor(half_a: Vector, half_b: Vector) -> dict[str, float]:
    """The metrics between two halves of the measurements (half A taken as the
    "prediction" of half B): the best agreement the measurements themselves support."""
    return all_metrics(half_a, half_b)


def clean(values: dict[str, float]) -> dict[str, float | None]:
    """NaN -> None, for JSON."""
    return {k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else v)
            for k, v in values.items()}
