"""The Memory tab, the memory overlay and the stepper line through Streamlit's AppTest."""

from __future__ import annotations

import json
import os

from compiler_bridge.dumps import open_dump
from compiler_bridge.memory import module_memory
from conftest import SAMPLES, sample
from tests.support.apptest import app, open_tab, plain, query, select_point, select_row, texts
from viz import panels as P

with open(os.path.join(SAMPLES, "memory_analysis.json"), encoding="utf-8") as f:
    RECORDED = json.load(f)


def _xla_temp(name: str) -> str:
    """XLA's temp size of the sample's compile (``memory_analysis()``), as the page writes
    bytes (binary units, one decimal)."""
    with open(os.path.join(SAMPLES, "memory_analysis.json")) as f:
        return f"{json.load(f)[name]['memory_analysis']['temp_size_in_bytes'] / 1024:.1f} KiB"


def _mem(name: str):
    d = open_dump(sample(name))
    return module_memory(d, d.main)


def test_memory_tab_shows_totals_peak_and_what_is_live_there(monkeypatch):
    at = open_tab(app(sample("transformer"), monkeypatch), "Memory")
    mem = _mem("transformer")
    t = mem.totals()
    labels = {m.label: m.value for m in at.metric}
    want = RECORDED["transformer"]["memory_analysis"]          # what XLA said
    assert labels["Temp"] == P.human_bytes(want["temp_size_in_bytes"]) == "402.2 KiB"
    assert labels["Peak (XLA)"] == P.human_bytes(want["peak_memory_in_bytes"])
    assert labels["Live-bytes peak"] == P.human_bytes(max(mem.curve))
    page = plain(texts(at))
    assert f"position {t.live_peak_index} of the schedule" in page
    assert len(at.get("plotly_chart")) == 1
    live = next(d.value for d in at.dataframe if "offset" in d.value.columns
                and "op_name" in d.value.columns)
    assert len(live) == len(mem.live_at(t.live_peak_index))
    assert int(live["bytes"].sum()) == max(mem.curve)
    scopes = next(d.value for d in at.dataframe if "scope" in d.value.columns)
    assert int(scopes["bytes"].sum()) == max(mem.curve)


def test_a_row_at_the_peak_selects_its_instruction(monkeypatch):
    at = open_tab(app(sample("transformer"), monkeypatch), "Memory")
    mem = _mem("transformer")
    biggest = mem.live_at(mem.peak_index)[0].value.instruction
    select_row(at, "mem-peak:", 0)
    assert query(at)["selected"] == biggest
    assert "in allocation" in texts(at)               # the inspector's memory lines


def test_a_chart_point_selects_its_instruction(monkeypatch):
    at = open_tab(app(sample("scan_while"), monkeypatch), "Memory")
    select_point(at, "mem-chart:", "dot.1")
    q = query(at)
    assert q["selected"] == "dot.1"
    assert q.get("computation")                        # dot.1 is inside a while body


def test_legacy_dump_has_its_curve_from_the_assignment_file(monkeypatch):
    at = open_tab(app(sample("legacy_jax0430"), monkeypatch), "Memory")
    labels = {m.label: m.value for m in at.metric}
    want = RECORDED["legacy_jax0430"]["memory_analysis"]
    assert labels["Temp"] == P.human_bytes(want["temp_size_in_bytes"])
    mem = _mem("legacy_jax0430")
    assert labels["Live-bytes peak"] == P.human_bytes(max(mem.curve))
    assert len(at.get("plotly_chart")) == 1
    assert f"position {mem.curve.index(max(mem.curve))} of the schedule" in plain(texts(at))


def test_memory_overlay_colours_the_graph_and_is_in_the_url(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"memory": "defined"})
    assert query(at)["memory"] == "defined"
    assert "bytes each instruction defines" in texts(at)


def test_stepper_says_why_a_pass_step_has_no_temp(monkeypatch):
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0010"})
    assert "XLA assigns buffers once, after its last pass" in plain(texts(at))
    at = app(sample("mlp_train"), monkeypatch)
    assert "After optimizations: temp 4 B" in plain(texts(at))


def test_an_unreadable_memory_report_stays_on_the_memory_tab(monkeypatch, tmp_path):
    """A broken companion of the buffer assignment costs only itself: the Memory tab says
    so, and no page-wide banner names it however many modules are visited (issue 32)."""
    import shutil
    folder = tmp_path / "transformer"
    shutil.copytree(sample("transformer"), folder, ignore=shutil.ignore_patterns("trace"))
    f = next(folder.glob("*-memory-usage-report.txt"))
    lines = f.read_text().split("\n")
    lines[4] = "    64.0KiB( 10%);    64.0KiB;   zero;  7; f32[64]"
    f.write_text("\n".join(lines))
    at = open_tab(app(str(folder), monkeypatch), "Memory")
    at.run()
    assert "memory-usage report cannot be read" in texts(at), texts(at)[:3000]
    assert not [e.value for e in at.error if "could not be read" in e.value]
