"""The runtime panel and graph overlay in the page (AppTest): the overlay in the URL, the
graph coloured by runtime with totals on boxes and loops, the Runtimes tab (predictor,
metrics with noise floor, kernels, scatter) selecting through the URL, traces uploaded
beside a stored dump and shown to anyone with the link, and bad traces refused with
the reason while the graph keeps working.

Samples: ``transformer`` and ``scan_while`` carry real JAX 0.10 CPU traces;
``legacy_jax0430`` a real JAX 0.4.30 CPU trace, which has no per-op events.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
import shutil

import pytest
from conftest import sample
from streamlit.testing.v1 import AppTest

from tests.support.apptest import (APP, app, exported_html, node_svg, node_text, ok,
                                   open_tab, plain,
                                   query, select_point, select_row, svg_of, texts)

from compiler_bridge import open_dump
from compiler_bridge.perf import runtime_report
from viz import runtime as V
from viz import html_report


# --------------------------------------------------------------------------- helpers

def warnings(at: AppTest) -> str:
    return plain("\n".join(w.value for w in at.warning))


def errors(at: AppTest) -> str:
    return plain("\n".join(e.value for e in at.error))


def trace_path(name: str, pattern: str = "perfetto_trace.json.gz") -> str:
    return glob.glob(os.path.join(sample(name), "trace/plugins/profile/*", pattern))[0]


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    box = next(u for u in at.get("file_uploader") if u.key.startswith("rt-upload"))
    box.upload(name, data).run()
    ok(at)
    return at


@pytest.fixture(autouse=True)
def _no_saved_model(monkeypatch, tmp_path):
    """No learned model or calibrated profile of this machine leaks in: the roofline on
    the generic CPU profile predicts."""
    import compiler_bridge.perf.model_loader as model_loader
    from compiler_bridge.perf import devices
    from ui import traces
    path = str(tmp_path / "cost-model-cpu.npz")
    monkeypatch.setattr(model_loader, "default_model_path", lambda kind="cpu": path)
    monkeypatch.setattr(traces, "default_model_path", lambda kind="cpu": path)
    monkeypatch.setattr(devices, "load_calibrated", lambda *a, **k: None)
    # nor the default model shipped with HLO Lens (test_the_default_model_... uses it)
    none = str(tmp_path / "no-default-cpu.npz")
    monkeypatch.setattr(model_loader, "shipped_model_path", lambda kind="cpu": none)
    monkeypatch.setattr(traces, "shipped_model_path", lambda kind="cpu": none)


@pytest.fixture
def untraced(tmp_path) -> str:
    """The transformer sample without its trace folder (traces come by upload)."""
    out = tmp_path / "transformer"
    shutil.copytree(sample("transformer"), out, ignore=shutil.ignore_patterns("trace"))
    return str(out)


@pytest.fixture(scope="module")
def transformer_report():
    return runtime_report(open_dump(sample("transformer")), device="cpu", auto_model=False)


# --------------------------------------------------------------------------- overlay

def test_overlay_picker_writes_the_url_and_colours_the_graph(monkeypatch, transformer_report):
    at = app(sample("transformer"), monkeypatch)
    assert "◷" not in svg_of(at)
    at.button_group(key="pick-overlay").set_value("measured").run()
    ok(at)
    assert query(at)["overlay"] == "measured"
    svg = svg_of(at)
    top = max(transformer_report.measured_rows, key=lambda r: r.measured_us)
    assert "◷ " + V._fmt_us(top.measured_us) in node_text(svg, "node:" + top.instruction)
    legend = "\n".join(m.value for m in at.markdown if "hl-runtime-legend" in m.value)
    assert "measured µs per execution (median)" in legend
    # the fill is the runtime: the slowest kernel dark red, a parameter (no kernel) blank
    assert 'fill="#800026"' in node_svg(svg, "node:" + top.instruction)
    module = open_dump(sample("transformer")).stage("0000")
    param = next(i.name for i in module.entry.instructions if i.opcode == "parameter")
    assert 'fill="#ffffff"' in node_svg(svg, "node:" + param)
    at.button_group(key="pick-overlay").set_value("ratio").run()
    ok(at)
    assert query(at)["overlay"] == "ratio"
    assert "pred/meas ×" in svg_of(at)
    at.button_group(key="pick-overlay").set_value("").run()
    ok(at)
    assert "overlay" not in query(at) and "◷" not in svg_of(at)


def test_a_link_with_the_overlay_restores_it(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"overlay": "predicted"})
    assert at.button_group(key="pick-overlay").value == "predicted"
    assert "◷" in svg_of(at)
    # the sample has a trace: the roofline fitted to it
    assert "predicted µs per execution (roofline fitted to this trace)" in \
        "\n".join(m.value for m in at.markdown)


def test_closed_boxes_show_totals_per_step(monkeypatch, transformer_report):
    group = "L:jit(train_step)/jvp()"           # open by default: toggled, it is closed
    at = app(sample("transformer"), monkeypatch, {"overlay": "measured", "expanded": group})
    text = node_text(svg_of(at), "group:" + group)
    assert re.search(r"Σ [\d.]+ (µs|ms) per step", text), text


def test_a_while_loop_shows_its_body_too(monkeypatch):
    at = app(sample("scan_while"), monkeypatch, {"overlay": "measured"})
    svg = svg_of(at)
    assert "Σ with body" in node_text(svg, "node:while.12")
    body = node_text(svg, "node:while.17")
    assert "◷" in body and "Σ with body" in body


def test_the_overlay_belongs_to_after_optimizations(monkeypatch):
    at = app(sample("transformer"), monkeypatch,
             {"overlay": "measured", "stage": "before_optimizations"})
    assert "module **after optimizations**" in "\n".join(i.value for i in at.info)
    assert "◷" not in svg_of(at)
    at.button(key="rt-to-after").click().run()
    ok(at)
    assert "stage" not in query(at) and query(at)["overlay"] == "measured"
    assert "◷" in svg_of(at)


# --------------------------------------------------------------------------- panel

def test_panel_names_the_predictor_and_shows_metrics_with_their_noise_floor(monkeypatch,
                                                                            transformer_report):
    at = open_tab(app(sample("transformer"), monkeypatch))
    page = texts(at)
    assert "Predictor: roofline" in page and "no learned model for cpu" in page
    assert "trace/plugins/profile/" in page and "perfetto_trace.json.gz" in page
    assert "86 of 86 kernels measured" in page and "430 per-op events matched" in page
    step = transformer_report.step_time("0000")
    assert f"Step time: {V.fmt_us(step.predicted_us)} predicted" in page
    assert f"{V.fmt_us(step.measured_us)} measured (median step while profiling)" in page
    metrics = next(d.value for d in at.dataframe if "noise floor" in d.value.columns)
    assert list(metrics["metric"]) == ["Kendall tau", "Spearman", "median APE",
                                       "time-weighted APE", "top-10 recall"]
    # fitted to the trace (held-out kernels) beside the roofline on the profile alone
    tau = transformer_report.metrics["kendall_tau"]
    assert transformer_report.fit is not None
    assert metrics.loc[0, "roofline fitted to this trace (held-out kernels)"] == f"{tau:.2f}"
    alone = transformer_report.metrics_uncalibrated["kendall_tau"]
    assert metrics.loc[0, "roofline, profile alone"] == f"{alone:.2f}"
    # the goal is the noise floor: how far short of it each metric is
    floor = transformer_report.noise_floor["kendall_tau"]
    assert floor > tau and metrics.loc[0, "short of the floor"] == f"{floor - tau:.2f}"
    assert metrics.loc[0, "noise floor"] == f"{transformer_report.noise_floor['kendall_tau']:.2f}"
    kernels = next(d.value for d in at.dataframe if "instruction" in d.value.columns)
    assert len(kernels) == 86
    assert list(kernels["share"]) == sorted(kernels["share"], reverse=True)
    assert len(at.get("plotly_chart")) == 3          # scatter, roofline, trace timeline


def test_the_default_model_predicts_for_a_user_with_none_and_says_so(monkeypatch):
    """A new user: no model of their own, so the default model shipped with HLO Lens
    predicts, on this machine's profile (calibrated on first use: here once, up
    front, as the app would)."""
    import compiler_bridge.perf.model_loader as model_loader
    from compiler_bridge.perf import calibrate, devices
    from ui import traces
    real = os.path.join(model_loader.MODELS_DIR, "default-cpu.npz")
    monkeypatch.setattr(model_loader, "shipped_model_path", lambda kind="cpu": real)
    monkeypatch.setattr(traces, "shipped_model_path", lambda kind="cpu": real)
    profile = calibrate(quick=True)
    monkeypatch.setattr(devices, "load_calibrated", lambda *a, **k: profile)
    meta = json.loads(open(real[:-4] + ".json", encoding="utf-8").read())
    n, m = len(meta["programs"]), len(meta["families"])
    at = open_tab(app(sample("transformer"), monkeypatch))
    page = texts(at)
    assert f"Predictor: default model — trained on {n} programs of {m} families" in page
    assert "fine-tunes it on your traces" in page
    assert "Device profile: calibrated on this machine" in page
    metrics = next(d.value for d in at.dataframe if "noise floor" in d.value.columns)
    assert {"learned fitted to this trace (held-out kernels)", "learned, profile alone",
            "roofline, profile alone", "noise floor"} <= set(metrics.columns)
    report = runtime_report(open_dump(sample("transformer")), device=profile)
    assert metrics.loc[0, "learned fitted to this trace (held-out kernels)"] == \
        f"{report.metrics['kendall_tau']:.2f}"
    assert metrics.loc[0, "learned, profile alone"] == \
        f"{report.metrics_uncalibrated['kendall_tau']:.2f}"


def test_a_kernel_table_row_selects_the_kernel_in_the_graph(monkeypatch, transformer_report):
    at = open_tab(app(sample("transformer"), monkeypatch))
    top = V.kernel_rows(transformer_report)[0]["instruction"]
    select_row(at, "rt-kernels:", 0)
    assert query(at)["selected"] == top
    assert f"%{top} = " in texts(at)                      # the inspector shows it


def test_a_kernel_in_a_loop_body_opens_the_body(monkeypatch):
    """scan_while: the kernels run inside while bodies; picking one goes there."""
    at = open_tab(app(sample("scan_while"), monkeypatch))
    report = runtime_report(open_dump(sample("scan_while")), device="cpu", auto_model=False)
    rows = V.kernel_rows(report)
    k = next(i for i, r in enumerate(rows) if r["computation"] != "main.11")
    select_row(at, "rt-kernels:", k)
    q = query(at)
    assert q["selected"] == rows[k]["instruction"]
    assert q["computation"] == rows[k]["computation"]


def test_a_scatter_point_selects_the_kernel(monkeypatch, transformer_report):
    at = open_tab(app(sample("transformer"), monkeypatch))
    name = transformer_report.measured_rows[5].instruction
    select_point(at, "rt-scatter:", name)
    assert query(at)["selected"] == name
    assert f"%{name} = " in texts(at)


def test_a_kernel_picked_at_another_stage_goes_to_after_optimizations(monkeypatch,
                                                                     transformer_report):
    at = open_tab(app(sample("transformer"), monkeypatch, {"stage": "before_optimizations"}))
    assert "kernels of the module after optimizations" in texts(at)
    select_row(at, "rt-kernels:", 0)
    q = query(at)
    assert "stage" not in q and q["selected"] == V.kernel_rows(transformer_report)[0][
        "instruction"]


def test_the_inspector_shows_the_kernels_runtime(monkeypatch):
    at = app(sample("scan_while"), monkeypatch, {"selected": "while.12"})
    line = plain(next(m.value for m in at.markdown if "**Runtime**" in m.value))
    assert "measured **12 µs** median per execution (p10 12 µs · p90 15 µs, 3 executions)" \
        in line
    # the roofline fitted to the sample's trace, beside the profile alone's 39 µs
    assert re.search(r"predicted \*\*[\d.]+ µs\*\* \(roofline fitted to this trace, ×[\d.]+ "
                     r"of measured; 39 µs on the profile alone, ×3\.22\)", line), line
    assert "with body" in line and "of the mean step" in line


def test_a_selected_box_shows_its_kernels_per_step(monkeypatch):
    group = "L:jit(train_step)/jvp()"
    at = app(sample("transformer"), monkeypatch, {"expanded": group, "selected": group})
    line = plain(next(m.value for m in at.markdown if "**Runtime of its kernels**" in m.value))
    assert re.search(r"measured \*\*[\d.]+ (µs|ms)\*\* per step · predicted \*\*", line), line


def test_the_html_report_carries_the_kernel_table_and_overlay_legend(monkeypatch,
                                                                     transformer_report):
    """The Export popover's HTML report (built on click, outside the script's thread)."""
    page = exported_html(monkeypatch, lambda: app(sample("transformer"), monkeypatch,
                                                  {"overlay": "measured"}))
    top = V.kernel_rows(transformer_report)[0]
    assert "<h2>Kernels</h2>" in page and f"<td>{top['instruction']}</td>" in page
    assert "share of step" in page and "predicted / measured" in page
    assert "measured µs per execution (median): " in page          # the overlay's colours
    assert "◷ " in page                                             # values in the SVG
    plain_page = html_report(title="t", svg="<svg></svg>",
                             runtime_rows=V.report_rows(transformer_report))
    assert top["instruction"] in plain_page



def test_the_model_explorer_node_data_holds_measured_times_once_measured(monkeypatch,
                                                                          tmp_path):
    """The export's help says "output bytes per instruction (runtimes once measured)", and
    a dump with its profiled run exported output bytes all the same: the measured µs per
    execution the Runtimes tab shows are what it holds now; a pass step, which did not
    run, keeps its output bytes."""
    import jax
    import jax.numpy as jnp
    import hlolens
    from tests.support.apptest import exported
    f = jax.jit(lambda w, x: jax.nn.relu(x @ w).sum(axis=-1))
    dump = hlolens.write_dump(f, jnp.ones((64, 64)), jnp.ones((32, 64)),
                              out=str(tmp_path / "dump"), profile=True)
    d = open_dump(dump)
    measured = {r.instruction: r.measured_us for r in runtime_report(d).rows
                if r.module_id == d.main.id and r.measured_us}
    assert measured
    got = json.loads(exported(monkeypatch, lambda: app(dump, monkeypatch),
                              ".me-node-data.json"))
    values = {name: v["value"] for graph in got.values() for name, v in graph["results"].items()}
    assert values == measured
    before = json.loads(exported(monkeypatch, lambda: app(dump, monkeypatch, {
        "stage": "before_optimizations"}), ".me-node-data.json"))
    module = d.stage(d.main, "before_optimizations")
    assert {name: v["value"] for graph in before.values()
            for name, v in graph["results"].items()} == \
        {i.name: float(i.shape.byte_size) for i in module.instructions()}


# --------------------------------------------------------------------------- traces

def test_an_uploaded_trace_is_kept_with_the_dump_and_the_link_shows_it(monkeypatch, untraced):
    at = app(untraced, monkeypatch, {"overlay": "measured"})
    assert "No profiler trace for this dump" in warnings(at)
    open_tab(at)
    upload(at, "perfetto_trace.json.gz", read_bytes(trace_path("transformer")))
    assert not at.error, errors(at)
    assert any("430 per-op events matched 86 kernels" in s.value for s in at.success)
    q = query(at)
    assert len(q["trace"]) == 16 and q["overlay"] == "measured"
    assert "◷" in svg_of(at) and not warnings(at)
    assert "uploaded: perfetto_trace.json.gz" in texts(at)
    # another browser, no session, no upload: the link shows the same runtimes
    monkeypatch.delenv("HLOLENS_DUMP")
    other = AppTest.from_file(APP, default_timeout=90)
    for k, v in q.items():
        other.query_params[k] = v
    other.run()
    ok(other)
    assert "◷" in svg_of(other) and not warnings(other)
    assert "Uploaded trace" in texts(other)


def _corrupt(data: bytes) -> bytes:
    out = bytearray(data)
    for i in range(200, 400):
        out[i] ^= 0x5A
    return bytes(out)


def _without_ops(data: bytes) -> bytes:
    doc = json.loads(gzip.decompress(data))
    doc["traceEvents"] = [e for e in doc["traceEvents"] if "hlo_op" not in (e.get("args") or {})]
    return gzip.compress(json.dumps(doc).encode())


BAD = {
    "corrupt": (lambda: _corrupt(read_bytes(trace_path("transformer"))),
                "not a readable trace: corrupt gzip data"),
    "truncated": (lambda: read_bytes(trace_path("transformer"))[:5000],
                  "not a readable trace: truncated gzip data"),
    "another program": (lambda: read_bytes(trace_path("scan_while")),
                        "0 of 819 per-op events match this dump"),
    "no per-op events": (lambda: _without_ops(read_bytes(trace_path("transformer"))),
                         "the trace has no per-op events"),
    "JAX 0.4.30": (lambda: read_bytes(trace_path("legacy_jax0430")),
                   "JAX 0.4.30 on CPU records only the executable"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_upload_is_refused_with_the_reason_and_the_graph_still_works(monkeypatch,
                                                                           untraced, case):
    make, reason = BAD[case]
    at = open_tab(app(untraced, monkeypatch))
    upload(at, "bad.trace.json.gz", make())
    message = errors(at)
    assert "bad.trace.json.gz cannot be used" in message
    assert reason in message, message
    assert "trace" not in query(at)
    assert "<g id=\"node:" in svg_of(at)                     # the graph is still drawn
    at.button_group(key="pick-overlay").set_value("predicted").run()
    ok(at)
    assert "◷" in svg_of(at)                                   # and predictions work


def test_a_broken_session_beside_a_readable_one_is_a_warning_naming_it(monkeypatch, tmp_path):
    """Two profiling sessions, one truncated: the runtimes are the readable one's, and the
    tab warns naming each file it could not read (it was only in the collapsed notes)."""
    from tests.support.samples import with_broken_session
    out, bad = with_broken_session(tmp_path)
    at = open_tab(app(out, monkeypatch))
    message = warnings(at)
    assert "3 trace file(s) could not be read" in message, message
    for path in glob.glob(os.path.join(bad, "*")):
        assert os.path.relpath(path, out) in message
    assert "Nothing measured" not in message


def test_a_broken_trace_inside_the_dump_is_a_warning_naming_it(monkeypatch, tmp_path):
    out = tmp_path / "transformer"
    shutil.copytree(sample("transformer"), out)
    for path in glob.glob(str(out / "trace/plugins/profile/*/*")):
        with open(path, "r+b") as f:
            f.truncate(3000)
    at = app(str(out), monkeypatch, {"overlay": "measured"})
    message = warnings(at)
    assert "Nothing measured" in message
    assert "perfetto_trace.json.gz" in message and "truncated" in message
    assert "<g id=\"node:" in svg_of(at) and "◷" not in svg_of(at)
    open_tab(at)
    assert "Nothing measured" in warnings(at)
    assert not any("noise floor" in d.value.columns for d in at.dataframe)


def test_legacy_jax_says_its_trace_has_no_per_op_events(monkeypatch):
    at = app(sample("legacy_jax0430"), monkeypatch, {"overlay": "measured"})
    message = warnings(at)
    assert "no per-op events" in message and "JAX 0.4.30 on CPU" in message
    assert "<g id=\"node:" in svg_of(at) and "◷" not in svg_of(at)   # no zeros drawn
    open_tab(at)
    assert "no per-op events" in warnings(at)
    assert not at.get("plotly_chart")                           # no empty scatter
    kernels = next(d.value for d in at.dataframe if "instruction" in d.value.columns)
    assert "measured_us" not in kernels.columns or kernels["measured_us"].isna().all()
    assert "by predicted time" in texts(at)


def test_a_link_to_a_trace_that_is_gone_says_so(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"overlay": "measured",
                                                  "trace": "0123456789abcdef"})
    assert "is not stored with this dump" in warnings(at)
    assert "◷" in svg_of(at)                 # the dump's own trace is used instead
