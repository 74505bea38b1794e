"""Runtime panel views built from the sample traces: scatter, table, roofline, overlay."""

from __future__ import annotations

import pytest

from compiler_bridge import open_dump
from compiler_bridge.perf import runtime_report
from viz import runtime as V
from viz import GraphOptions, build_graph

from conftest import sample


@pytest.fixture(scope="module")
def report():
    return runtime_report(open_dump(sample("transformer")), device="cpu", auto_model=False)


@pytest.fixture(scope="module")
def loops():
    return runtime_report(open_dump(sample("scan_while")), device="cpu", auto_model=False)


def test_scatter_has_one_point_per_measured_kernel(report):
    fig = V.scatter_figure(report, selected="dot.20")
    points = [cd for tr in fig.data if tr.customdata is not None for cd in tr.customdata]
    assert len(points) == len(report.measured_rows) == 86
    assert sorted(p[0] for p in points) == sorted(r.instruction for r in report.measured_rows)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert V.selectable([{"customdata": ["dot.20", "0000"]}]) == "dot.20"


def test_scatter_without_measurements_says_why():
    r = runtime_report(open_dump(sample("mlp_train")), device="cpu", auto_model=False)
    fig = V.scatter_figure(r)
    assert "no profiler trace" in fig.layout.annotations[0].text


def test_metrics_rows_carry_the_noise_floor(report):
    rows = V.metrics_rows(report)
    assert [r["key"] for r in rows] == ["kendall_tau", "spearman", "median_ape",
                                        "time_weighted_ape", "top10_recall"]
    assert all(r["value"] is not None and r["noise_floor"] is not None for r in rows)


def test_kernel_rows_sorted_by_measured_share(report):
    rows = V.kernel_rows(report)
    shares = [r["share"] for r in rows if r["share"] is not None]
    assert shares == sorted(shares, reverse=True) and len(shares) == 86
    assert rows[0]["predicted_us"] > 0 and rows[0]["measured_us"] > 0


def test_roofline_chart_has_the_roofs_and_kernels(report):
    fig = V.roofline_figure(report)
    names = [t.name for t in fig.data]
    assert any(n.startswith("matmul ") for n in names)
    assert any(n.startswith("vector ") for n in names)
    kernels = [cd[0] for t in fig.data if t.customdata is not None for cd in t.customdata]
    assert "dot.20" in kernels
    # flop/s in SI prefixes ('100G'): plotly's default writes 1e11 as '100B' (billion),
    # which on a roofline reads as bytes
    assert fig.layout.yaxis.exponentformat == "SI"


@pytest.mark.parametrize("mode", V.MODES)
def test_overlay_colours_every_measured_kernel(report, mode):
    hlo = open_dump(sample("transformer")).stage("0000", "after_optimizations")
    view = build_graph(hlo)
    ov = V.overlay(report, mode, view)
    for r in report.measured_rows:
        d = ov.decorations[r.instruction]
        assert d["fillcolor"].startswith("#") and d["label"]
    groups = [g for g in ov.decorations if g in view.groups]
    assert groups, "groups show totals"
    assert len(ov.stops) == 5
    # the decorations draw: the DOT text carries a value label
    dot = build_graph(hlo, options=GraphOptions(decorations=ov.decorations)).dot
    assert ov.decorations["dot.20"]["label"].split("\n")[0] in dot


def test_group_totals_are_sums_per_step(loops):
    hlo = open_dump(sample("scan_while")).stage("0000", "after_optimizations")
    body = build_graph(hlo, "region_0.4", GraphOptions(grouping="layers"))
    ov = V.overlay(loops, "measured", body)
    timed = [r for r in loops.measured_rows if r.computation == "region_0.4"]
    per_step = sum(r.measured_us * r.executions_per_run for r in timed)
    top = "L:jit(step)/while/body"     # holds every instruction of the body
    assert body.groups[top].parent == ""
    assert ov.values[top] == pytest.approx(per_step)
    assert ov.decorations[top]["label"].startswith("Σ ")
    inner = "L:jit(step)/while/body/closed_call"     # ynn_fusion, ynn_fusion.1, add_tanh
    assert ov.values[inner] == pytest.approx(sum(
        r.measured_us * r.executions_per_run for r in timed
        if r.instruction in ("ynn_fusion", "ynn_fusion.1", "add_tanh_fusion")))
    # loop body kernels show how often they run
    assert "×16" in ov.decorations["ynn_fusion"]["label"]


def test_overlay_without_measurements_explains(report):
    r = runtime_report(open_dump(sample("mlp_train")), device="cpu", auto_model=False)
    ov = V.overlay(r, "measured")
    assert ov.decorations == {} and "nothing measured" in ov.note
    assert V.overlay(r, "predicted").decorations
    assert "nothing measured" in V.legend_html(ov)
