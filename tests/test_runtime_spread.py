"""The runtime panel's numbers agree with each other (issue 32, items 9 and 11): the
roofline chart's flop rate of an asynchronous dot counts its work to its completion, and
the kernel table names which statistic each column is and shows the spread of runs."""

from __future__ import annotations

import gzip
import glob
import json
import os
import statistics
from collections import defaultdict

import pytest

from compiler_bridge import open_dump, runtime_report
from tests.support.samples import ASYNC, sample
from viz import runtime as V


@pytest.fixture(scope="module")
def async_report():
    return runtime_report(open_dump(ASYNC), auto_model=False, device="cpu")


def test_an_async_dots_flop_rate_counts_its_work_to_completion(async_report):
    """attn_async's dots run on the thread pool after their events, while their thread
    runs other ops: their own time stops there, their work does not. The chart's rate is
    flops over the median start-to-completion of the trace's slices, never over the own
    time alone."""
    r = async_report
    mt = r.measured.module("0000")
    fig = V.roofline_figure(r)
    plotted = {cd[0]: y for tr in fig.data if tr.customdata is not None
               for cd, y in zip(tr.customdata, tr.y)}
    longer = 0
    for row in r.measured_rows:
        if row.opcode != "dot":
            continue
        spans = [s.done_us - s.start_us for run in mt.slices.values() for s in run
                 if s.instruction == row.instruction]
        work = statistics.median(spans)
        assert plotted[row.instruction] == pytest.approx(row.cost.flops / (work * 1e-6))
        if work > 1.2 * row.measured_us:
            longer += 1
            assert plotted[row.instruction] < row.cost.flops / (row.measured_us * 1e-6)
    assert longer >= 2          # dot.18 and dot.19 wait well past their own time


def _durations_by_run(dump: str) -> dict[str, dict[int, float]]:
    """Each op's event durations summed per run, read from the raw Chrome trace."""
    path = glob.glob(os.path.join(dump, "trace/plugins/profile/*/perfetto_trace.json.gz"))[0]
    with gzip.open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    out: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for e in events:
        args = e.get("args", {})
        if args.get("hlo_op"):
            out[args["hlo_op"]][args["run_id"]] += e["dur"]
    return out


def test_the_kernel_table_shows_outlier_runs_and_the_slowest_execution():
    """transformer's kernels run once per step at the top level (their own time is their
    event): a run over 3x the median run is an outlier, counted from the raw trace."""
    r = runtime_report(open_dump(sample("transformer")), auto_model=False, device="cpu")
    raw = _durations_by_run(sample("transformer"))
    rows = {x["instruction"]: x for x in V.kernel_rows(r)}
    with_outliers = 0
    for name, row in rows.items():
        if row["opcode"].startswith("fusion") and name in raw:
            per_run = list(raw[name].values())
            mid = statistics.median(per_run)
            want = sum(1 for t in per_run if t > 3 * mid)
            assert row["outlier_runs"] == want, name
            assert row["max_us"] == pytest.approx(max(per_run), abs=1e-3)
            with_outliers += want > 0
    assert with_outliers >= 3
    text = V.report_rows(r)[0]
    assert {"measured (median per execution)", "per step (mean)", "spread (p10–p90, max)",
            "outlier runs"} <= set(text)
