"""The latency candidate for kernels split over threads (issue 34, not kept,
``bench/accuracy/trace_fit_latency.py``): without the latency it is the shipped fit, and
the latency moves split kernels alone, each by the same time, read from the fitting folds.
On the sample transformer's real trace."""

from __future__ import annotations

import pytest

from bench.accuracy import trace_fit_bench as B
from bench.accuracy import trace_fit_latency as L
from compiler_bridge.perf import trace_fit as F
from tests.support.samples import sample


@pytest.fixture(scope="module")
def transformer():
    got = B.measure_program(sample("transformer"), auto_model=False)
    assert got is not None
    names, pred, meas, cls, _floor, rows, _step = got
    return names, pred, meas, cls, [x.cost.partitions > 1 for x in rows], \
        [x.runs for x in rows]


def test_without_the_latency_it_is_the_shipped_fit(transformer):
    names, pred, meas, cls, split, runs = transformer
    cal = F.calibrate_to_trace(names, pred, meas, cls, weights=runs)
    assert cal is not None
    held, held_exp = L.held_out(names, pred, meas, cls, split, runs, False)
    assert held == pytest.approx(cal.held_out, rel=1e-9)
    assert held_exp == pytest.approx(cal.held_out_expected, rel=1e-9)


def test_the_latency_moves_split_kernels_alone_by_a_time_read_from_the_fitting_folds(
        transformer):
    names, pred, meas, cls, _split, runs = transformer
    # every third kernel marked split (the sample has one split kernel, too few to fit)
    split = [i % 3 == 0 for i in range(len(names))]
    plain, _ = L.held_out(names, pred, meas, cls, split, runs, False)
    slow = [m + 50.0 if s else m for m, s in zip(meas, split)]   # +50 us when split
    base, _ = L.held_out(names, pred, slow, cls, [False] * len(names), runs, False)
    got, _ = L.held_out(names, pred, slow, cls, split, runs, True)
    moved = [g - b for g, b in zip(got, base)]
    assert all(d == pytest.approx(0.0, abs=1e-9) for d, s in zip(moved, split) if not s)
    by_fold: dict[int, set[float]] = {}
    for n, d, s in zip(names, moved, split):
        if s:
            by_fold.setdefault(F.fold_of(n), set()).add(round(d, 6))
    assert all(len(v) == 1 for v in by_fold.values())      # one time per fold's fit
    assert all(d > 10.0 for d, s in zip(moved, split) if s)
    assert got != pytest.approx(plain)
