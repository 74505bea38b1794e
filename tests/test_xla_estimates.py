"""The roofline on GPU and TPU, beside XLA's own estimates (issue 30, item 5): the roofline
prices a module from the device the dump was compiled for, XLA:TPU's ``estimated_cycles``
(after_codegen.txt) and ``cost_analysis()["optimal_seconds"]`` (xla_facts.json) beside it, and
their agreement as Kendall's tau and ratio. All predictions: nothing here is measured.
"""

from __future__ import annotations

import glob
import json
import os

import pytest

from compiler_bridge import open_dump, parse_hlo, runtime_report
from compiler_bridge.perf import metrics as M
from compiler_bridge.targets import BUILTIN
from compiler_bridge.perf.xla_estimates import estimated_cycles, optimal_seconds
from conftest import sample
from tests.support.cli import run


def _facts(name: str) -> dict:
    with open(os.path.join(sample(name), "xla_facts.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("name", ["tpu_v5e", "tpu_v6e"])
def test_every_estimated_cycles_of_after_codegen_is_read(name):
    for path in glob.glob(os.path.join(sample(name), "*after_codegen.txt")):
        text = open(path, encoding="utf-8").read()
        cycles = estimated_cycles(parse_hlo(text, path))
        # one instruction per line of XLA's text: as many as the file says it has
        assert len(cycles) == text.count('"estimated_cycles"') > 0
        assert all(c > 0 for c in cycles.values())


@pytest.mark.parametrize("name", ["tpu_v5e", "tpu_v6e", "gpu_h100"])
def test_optimal_seconds_is_xlas_or_none(name):
    dump = open_dump(sample(name))
    for entry, mod in zip(_facts(name)["modules"], dump.modules):
        assert entry["files"].startswith(f"module_{mod.id}.")
        xla = (entry["cost_analysis"] or {}).get("optimal_seconds")
        # XLA writes a negative optimal_seconds where it does not know (v5e's transformer:
        # -3.0); GPU has no cost analysis
        want = xla if xla is not None and xla > 0 else None
        assert optimal_seconds(dump, mod) == want


def test_runtimes_json_sets_the_roofline_beside_xlas_estimates(tmp_path):
    facts = _facts("tpu_v6e")
    dump = open_dump(sample("tpu_v6e"))
    p = run("runtimes", sample("tpu_v6e"), "--json", "--roofline",
            *[a for m in dump.modules for a in ("--module", m.id)], tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["target"]["device_kind"] == facts["device_kind"]
    assert out["target"]["topology"] == facts["topology"]
    assert out["device"] == "TPU v6e" and out["predictor"] == "roofline"
    assert [e["module_id"] for e in out["xla_estimates"]] == [m.id for m in dump.modules]
    for est, entry, mod in zip(out["xla_estimates"], facts["modules"], dump.modules):
        path = os.path.join(sample("tpu_v6e"), entry["files"] + ".after_codegen.txt")
        cycles = estimated_cycles(parse_hlo(open(path, encoding="utf-8").read(), path))
        rows = [k for k in out["kernels"] if k["module_id"] == mod.id]
        priced = [k for k in rows if k["instruction"] in cycles]
        assert est["kernels"] == len(priced) > 0
        for k in priced:      # XLA's cycles at the chip's clock, apart from measured
            assert k["xla_estimate_us"] == pytest.approx(
                cycles[k["instruction"]] / est["clock_hz"] * 1e6)
            assert k["measured_us"] is None
        assert est["kendall_tau"] == pytest.approx(M.kendall_tau(
            [k["roofline_us"] for k in priced], [cycles[k["instruction"]] for k in priced]))
        assert est["ratio"] == pytest.approx(
            sum(k["roofline_us"] * k["runs_per_step"] for k in priced)
            / sum(k["xla_estimate_us"] * k["runs_per_step"] for k in priced))
        optimal = entry["cost_analysis"]["optimal_seconds"]
        assert est["optimal_seconds_us"] == pytest.approx(optimal * 1e6)
        assert est["optimal_ratio"] == pytest.approx(est["step_roofline_us"] / (optimal * 1e6))
        assert "not a measurement" in est["note"]


def test_the_roofline_and_xla_order_tpu_kernels_alike():
    """Both are cost models of one chip: they should rank its kernels alike and total within
    a small factor (the v5e's clock is derived from Google's figures, see targets.tpu)."""
    for name in ("tpu_v5e", "tpu_v6e"):
        dump = open_dump(sample(name))
        report = runtime_report(dump, [m.id for m in dump.modules], auto_model=False)
        assert len(report.xla_estimates) == 3
        for est in report.xla_estimates:
            assert est.kendall_tau is not None and est.kendall_tau > 0.2, (name, est)
            assert est.ratio is not None and 0.25 < est.ratio < 4, (name, est)


def test_a_gpu_dump_is_priced_on_its_own_device_and_has_no_xla_estimate():
    dump = open_dump(sample("gpu_h100"))
    report = runtime_report(dump, auto_model=False)
    assert report.device.name == _facts("gpu_h100")["device_kind"]
    assert report.xla_estimates == []       # XLA:GPU's cost_analysis() is None
    assert report.rows and all(r.xla_estimate_us is None for r in report.rows)


def test_the_runtimes_tab_sets_xlas_estimate_beside_the_roofline(monkeypatch):
    """The page (AppTest) on a TPU v6e dump: the roofline on the v6e's datasheet, XLA's
    estimate with tau and ratio said to be predictions, XLA's column in the kernel table."""
    from tests.support.apptest import app, open_tab, texts
    dump = open_dump(sample("tpu_v6e"))
    report = runtime_report(dump, [dump.main.id], auto_model=False)
    est = report.xla_estimates[0]
    at = open_tab(app(sample("tpu_v6e"), monkeypatch))
    page = texts(at)
    assert "Predictor: roofline** on TPU v6e" in page and "cloud.google.com/tpu/docs/v6e" in page
    assert f"Kendall tau **{est.kendall_tau:.2f}**" in page
    assert f"ratio **{est.ratio:.2f}** (roofline / XLA)" in page
    assert f"ratio **{est.optimal_ratio:.2f}**" in page
    assert "predictions (two cost models of the same chip), not measurements" in page
    table = next(d for d in at.dataframe if "xla_estimate_us" in d.value.columns)
    assert "xla_estimate_us" in table.proto.column_order
    assert table.value["xla_estimate_us"].notna().sum() == est.kernels


def test_runtimes_text_says_xlas_estimate_is_a_prediction(tmp_path):
    dump = open_dump(sample("tpu_v6e"))
    report = runtime_report(dump, ["0055"], auto_model=False)
    est = report.xla_estimates[0]
    p = run("runtimes", sample("tpu_v6e"), "--roofline", "--module", "0055",
            tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("XLA's estimate"))
    assert f"Kendall tau {est.kendall_tau:.2f} over {est.kernels} kernels" in line
    assert f"ratio {est.ratio:.2f} (roofline / XLA)" in line
    assert f"ratio {est.optimal_ratio:.2f} (roofline step / XLA)" in line
    assert line.endswith("(two predictions, not a measurement)")


def test_kernels_and_runtimes_price_xlas_cycles_at_one_clock(tmp_path):
    """The ``kernels`` command and the runtimes report turn XLA:TPU's estimated cycles
    into µs at the same clock: the TPU profile's (one table of clocks)."""
    dump = open_dump(sample("tpu_v6e"))
    mods = [a for m in dump.modules for a in ("--module", m.id)]
    p = run("runtimes", sample("tpu_v6e"), "--json", "--roofline", *mods,
            tmp_env=str(tmp_path))
    k = run("kernels", sample("tpu_v6e"), "--json")
    assert p.returncode == 0 and k.returncode == 0, p.stderr + k.stderr
    report = json.loads(p.stdout)
    kernels = {m["id"]: m for m in json.loads(k.stdout)["modules"]}
    assert {e["clock_hz"] for e in report["xla_estimates"]} \
        == {m["clock_hz"] for m in kernels.values()} == {BUILTIN["tpu_v6e"].clock_hz}
    compared = 0
    for row in report["kernels"]:
        listed = {x["name"]: x for x in kernels[row["module_id"]]["kernels"]}
        if row["xla_estimate_us"] is not None and row["instruction"] in listed:
            assert listed[row["instruction"]]["xla_estimate_us"] == pytest.approx(
                row["xla_estimate_us"], abs=1e-4)
            compared += 1
    assert compared > 0
