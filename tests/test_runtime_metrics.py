"""Accuracy metrics on small vectors worked out by hand, cross-checked with scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from compiler_bridge.perf import metrics as M

PRED = [1.0, 2.0, 3.0, 4.0]
MEAS = [1.0, 3.0, 2.0, 4.0]


def test_kendall_tau_by_hand():
    # pairs: 5 concordant, 1 discordant (items 2 and 3 swap) -> (5 - 1) / 6
    assert M.kendall_tau(PRED, MEAS) == pytest.approx(4 / 6)
    assert M.kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_kendall_tau_b_with_ties_by_hand():
    # pred ties on the first pair: C = 2, D = 0, n0 = 3, ties in pred = 1
    assert M.kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(2 * 3))


def test_spearman_by_hand():
    # rank differences 0, 1, 1, 0: 1 - 6 * 2 / (4 * 15)
    assert M.spearman(PRED, MEAS) == pytest.approx(0.8)


def test_median_ape_by_hand():
    # |p - m| / m = 0, 1/3, 1/2, 0 -> median of (0, 0, 1/3, 1/2)
    assert M.median_ape(PRED, MEAS) == pytest.approx(1 / 6)


def test_time_weighted_ape_by_hand():
    assert M.time_weighted_ape(PRED, MEAS) == pytest.approx(2 / 10)


def test_top_k_recall_by_hand():
    assert M.top_k_recall(PRED, MEAS, 2) == pytest.approx(0.5)   # {3,1} vs {3,2}
    assert M.top10_recall(PRED, MEAS) == 1.0                    # k = min(10, n) = 4
    meas = list(range(20))
    pred = meas[:10] + [x + 100 for x in meas[10:15]] + [-x for x in meas[15:]]
    assert M.top10_recall(pred, meas) == pytest.approx(0.5)


def test_undefined_values_are_nan_not_zero():
    assert math.isnan(M.kendall_tau([1.0], [2.0]))
    assert math.isnan(M.kendall_tau([1, 1, 1], [1, 2, 3]))
    assert math.isnan(M.median_ape([1.0], [0.0]))
    assert M.clean({"a": float("nan"), "b": 1.0}) == {"a": None, "b": 1.0}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_scipy(seed):
    rng = np.random.RandomState(seed)
    meas = np.exp(rng.standard_normal(300))
    pred = meas * np.exp(0.5 * rng.standard_normal(300))
    pred[:20] = np.round(pred[:20], 0)   # some ties
    assert M.kendall_tau(pred, meas) == pytest.approx(stats.kendalltau(pred, meas)[0])
    assert M.spearman(pred, meas) == pytest.approx(stats.spearmanr(pred, meas)[0])


def test_noise_floor_of_identical_halves_is_perfect():
    a = [1.0, 5.0, 2.0, 9.0]
    nf = M.noise_floor(a, a)
    assert nf["kendall_tau"] == 1.0 and nf["median_ape"] == 0.0 and nf["top10_recall"] == 1.0
    assert set(nf) == set(M.METRICS)
