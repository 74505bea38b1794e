"""The candidates for a local correction on top of the trace fit (issue 34,
``bench/accuracy/trace_fit_local.py``): their baseline is the shipped fit, and a held-out
kernel's local term reads the fitting folds alone. On the sample transformer's real trace."""

from __future__ import annotations

import pytest

from bench.accuracy import trace_fit_bench as B
from bench.accuracy import trace_fit_local as L
from compiler_bridge.perf import trace_fit as F
from tests.support.samples import sample


@pytest.fixture(scope="module")
def transformer():
    got = B.measure_program(sample("transformer"), auto_model=False)
    assert got is not None
    return L.program_data(got)


def test_the_candidates_baseline_is_the_shipped_fit(transformer):
    """'global' (no local term) gives every kernel the held-out fitted and expected time
    of ``trace_fit.calibrate_to_trace``: the candidates are scored against the product."""
    d = transformer
    cal = F.calibrate_to_trace(d["names"], d["pred"], d["meas"], d["cls"], weights=d["runs"])
    got = L.held_out(d, L.CANDIDATES["global"], L.name_folds(d))
    assert cal is not None and got is not None
    assert got[0] == pytest.approx(cal.held_out, rel=1e-9)
    assert got[1] == pytest.approx(cal.held_out_expected, rel=1e-9)


def _twins(d: dict) -> tuple[int, int]:
    """A kernel and its one exact twin (one shape, no third), in another fold: a leak of
    its own measurement would move a median or the nearest few as much as a mean."""
    folds, sig = L.name_folds(d), L.shapes(d)
    return next((i, j) for i in range(len(sig)) for j in range(len(sig))
                if i != j and sig[i] == sig[j] and folds[i] != folds[j]
                and sig.count(sig[i]) == 2)


def _held(d: dict, loc: L.Local, moved_kernel: int, kernel: int,
          factor: float = 10.0) -> float:
    """``kernel``'s held-out fitted time with ``moved_kernel`` measured ``factor`` times
    slower."""
    moved = dict(d, meas=[m * factor if n == moved_kernel else m
                          for n, m in enumerate(d["meas"])])
    got = L.held_out(moved, loc, L.name_folds(d))
    assert got is not None
    return got[0][kernel]


@pytest.mark.parametrize("name", [n for n in L.CANDIDATES if n != "global"])
def test_a_held_out_kernels_local_term_never_reads_its_own_measurement(transformer, name):
    """A kernel with an exact twin in another fold, measured 10x slower or faster: its own
    held-out prediction stays put under every candidate."""
    i, _ = _twins(transformer)
    loc = L.CANDIDATES[name]
    before = _held(transformer, loc, -1, i)
    for factor in (10.0, 0.1):
        assert _held(transformer, loc, i, i, factor) == pytest.approx(before, rel=1e-12)


def test_a_held_out_kernels_local_term_reads_its_twins(transformer):
    """The same kernel's twin measured 10x slower moves it (the term is live)."""
    i, j = _twins(transformer)
    loc = L.CANDIDATES["twins_mean"]
    assert _held(transformer, loc, j, i) > _held(transformer, loc, -1, i) * 1.2
