"""Measured runtimes: JAX profiler traces of the sample programs mapped onto their HLO."""

from __future__ import annotations

import glob
import gzip
import json
import os
import shutil

import numpy as np
import pytest

from compiler_bridge import open_dump
from compiler_bridge.perf import runtime_report
from compiler_bridge.perf import (
    TraceError,
    TraceSource,
    measure,
    percentile,
    read_trace,
    read_trace_file,
    uploaded,
)

from conftest import sample


def trace_file(name: str, pattern: str = "perfetto_trace.json.gz") -> str:
    hits = glob.glob(os.path.join(sample(name), "trace", "plugins", "profile", "*", pattern))
    assert hits, f"{name}: no {pattern}"
    return hits[0]


def raw_op_events(path: str) -> list[dict]:
    doc = json.loads(gzip.decompress(open(path, "rb").read()))
    return [e for e in doc["traceEvents"]
            if e.get("ph") == "X" and "hlo_op" in (e.get("args") or {})]


@pytest.mark.parametrize("name", ["transformer", "scan_while"])
def test_every_per_op_event_maps_to_an_instruction(name):
    dump = open_dump(sample(name))
    events = raw_op_events(trace_file(name))
    m = measure(dump)
    assert m.unmatched_events == 0 and m.unmatched == []
    assert m.matched_events == len(events) > 0
    hlo = dump.stage(dump.main, "after_optimizations")
    timings = m.module(dump.main.id)
    assert timings is not None and m.modules_without_events == []
    assert {e["args"]["hlo_op"] for e in events} == set(timings.kernels)
    for name_, k in timings.kernels.items():
        inst = hlo.find(name_)
        assert inst is not None and inst.opcode == k.opcode


def test_xplane_carries_program_id_and_the_same_events():
    dump = open_dump(sample("transformer"))
    xplane = read_trace_file(trace_file("transformer", "*.xplane.pb"))
    assert xplane.format == "xplane"
    assert {e.program_id for e in xplane.events} == {0}   # module_0000
    m = measure(dump, [trace_file("transformer", "*.xplane.pb")])
    assert m.matched_events == len(raw_op_events(trace_file("transformer")))
    assert m.unmatched_events == 0


def test_while_self_time_is_its_duration_minus_its_body_events():
    path = trace_file("scan_while")
    events = raw_op_events(path)
    whiles = [e for e in events if e["name"].startswith("while")]
    assert len(whiles) == 6   # two loops x 3 runs
    trace = read_trace_file(path)
    ours = {(e.thread.split("/")[-1], round(e.start_us, 3)): e for e in trace.events}
    for w in whiles:
        start, end = w["ts"], w["ts"] + w["dur"]
        inside = [e for e in events if e is not w and e["tid"] == w["tid"]
                  and e["ts"] >= start and e["ts"] + e["dur"] <= end]
        assert inside, "the loop's body and condition ops nest inside it"
        expected = w["dur"] - sum(e["dur"] for e in inside)
        got = ours[(str(w["tid"]), round(w["ts"], 3))]
        assert got.self_us == pytest.approx(expected, abs=1e-6)
        assert 0 < got.self_us < w["dur"]
    # and the aggregated timing of while.12 holds those self times
    m = measure(open_dump(sample("scan_while")))
    t = m.kernel("0000", "while.12")
    assert t.count == 3 and t.runs == 3
    assert sorted(t.samples) == pytest.approx(sorted(
        e.self_us for e in trace.events if e.op == "while.12"))


def test_ops_outside_loops_keep_their_whole_duration():
    trace = read_trace_file(trace_file("transformer"))
    assert all(e.parent == -1 and e.self_us == e.dur_us for e in trace.events)


def test_per_instruction_statistics_over_runs():
    m = measure(open_dump(sample("scan_while")))
    mod = m.module("0000")
    assert len(mod.runs) == 3 and all(v > 0 for v in mod.step_us.values())
    k = mod.kernels["ynn_fusion"]           # in the scan's body: 16 iterations per run
    xs = np.array(k.samples)
    assert k.count == 48 and k.runs == 3 and k.executions_per_run == 16
    assert k.median_us == pytest.approx(np.median(xs))
    assert k.p10_us == pytest.approx(np.percentile(xs, 10))
    assert k.p90_us == pytest.approx(np.percentile(xs, 90))
    assert k.min_us == pytest.approx(xs.min())
    assert mod.share("ynn_fusion") == pytest.approx(xs.sum() / sum(mod.step_us.values()))
    a, b = k.halves()
    assert a > 0 and b > 0


def test_percentile_matches_numpy():
    xs = [5.0, 1.0, 3.0, 2.0, 8.0]
    for q in (0, 10, 50, 90, 100):
        assert percentile(xs, q) == pytest.approx(np.percentile(xs, q))


# --------------------------------------------------------------------------- bad input

def test_truncated_gzip_is_a_trace_error_naming_the_file(tmp_path):
    data = open(trace_file("transformer"), "rb").read()
    bad = tmp_path / "perfetto_trace.json.gz"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceError) as e:
        read_trace_file(str(bad))
    assert str(e.value).startswith(str(bad)) and "truncated gzip" in str(e.value)


def test_corrupt_gzip_is_a_trace_error(tmp_path):
    data = bytearray(open(trace_file("transformer"), "rb").read())
    for i in range(200, 400):
        data[i] ^= 0x5A
    with pytest.raises(TraceError) as e:
        read_trace(bytes(data), "upload.trace.json.gz")
    assert str(e.value).startswith("upload.trace.json.gz: not a readable trace")


def test_corrupt_xplane_is_a_trace_error():
    data = open(trace_file("transformer", "*.xplane.pb"), "rb").read()
    with pytest.raises(TraceError) as e:
        read_trace(data[:1000], "vm.xplane.pb")
    assert "vm.xplane.pb" in str(e.value) and "xplane" in str(e.value)


def test_json_that_is_not_a_trace(tmp_path):
    with pytest.raises(TraceError, match="traceEvents"):
        read_trace(b'{"hello": 1}', "x.json")
    with pytest.raises(TraceError, match="invalid JSON|truncated JSON"):
        read_trace(b'{"traceEvents": [', "x.json")


def test_a_trace_of_another_program_matches_nothing():
    dump = open_dump(sample("transformer"))
    with pytest.raises(TraceError) as e:
        measure(dump, [trace_file("scan_while")])
    msg = str(e.value)
    assert "0 of 819 per-op events match this dump" in msg and "another program" in msg
    assert msg.startswith(trace_file("scan_while"))


def test_a_trace_without_per_op_events(tmp_path):
    """What JAX 0.4.30 on CPU writes: runtime and Python events, no HLO ops."""
    doc = json.loads(gzip.decompress(open(trace_file("transformer"), "rb").read()))
    doc["traceEvents"] = [e for e in doc["traceEvents"]
                          if "hlo_op" not in (e.get("args") or {})]
    path = tmp_path / "perfetto_trace.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    with pytest.raises(TraceError) as e:
        measure(open_dump(sample("transformer")), [str(path)])
    assert "no per-op events" in str(e.value) and str(path) in str(e.value)


def test_a_dump_without_traces_says_so():
    with pytest.raises(TraceError, match="no profiler trace in this dump"):
        measure(open_dump(sample("mlp_train")))


def test_a_bad_trace_leaves_predictions_working():
    dump = open_dump(sample("scan_while"))
    report = runtime_report(dump, traces=[uploaded("bad.json.gz", b"\x1f\x8b\x08garbage")],
                            device="cpu", auto_model=False)
    assert report.measured is None and "bad.json.gz" in report.trace_error
    assert report.rows and all(r.measured_us is None for r in report.rows)
    assert all(r.predicted_us > 0 for r in report.rows)
    assert report.metrics == {}      # never zeros for what was not measured


def test_modules_without_events_are_listed(tmp_path):
    """Two modules in one dump, a trace of one of them: the other is named, not zeroed."""
    for f in glob.glob(os.path.join(sample("transformer"), "module_0000.*")):
        if os.path.isfile(f):
            shutil.copy(f, tmp_path)
    for f in glob.glob(os.path.join(sample("scan_while"), "module_0000.*")):
        if os.path.isfile(f):
            shutil.copy(f, tmp_path / os.path.basename(f).replace("module_0000", "module_0002"))
    dump = open_dump(tmp_path)
    m = measure(dump, [trace_file("transformer")])
    assert m.modules_without_events == [("0002", "jit_step")]
    assert any("have no events" in n for n in m.notes)
    report = runtime_report(dump, modules=["0002"], traces=[trace_file("transformer")],
                            device="cpu", auto_model=False)
    assert all(r.measured_us is None for r in report.rows)
    assert any("0002 has no events" in n for n in report.notes)


def test_an_uploaded_trace_is_read_from_bytes():
    data = open(trace_file("scan_while"), "rb").read()
    m = measure(open_dump(sample("scan_while")), [uploaded("my.trace.json.gz", data)])
    assert m.matched_events == 819 and m.sources == ["my.trace.json.gz"]
    assert isinstance(uploaded("a", b""), TraceSource)


def test_noise_floor_halves_split_by_profiling_session(tmp_path):
    """With several sessions, the halves are alternate sessions (the spread between
    sessions minutes apart), not alternate runs inside them: two sessions holding the same
    trace's timings give identical halves, while alternate runs of one session differ.
    (The second copy's runs get other run ids: the same runs twice are read once.)"""
    src = glob.glob(os.path.join(sample("scan_while"), "trace", "plugins", "profile", "*",
                                 "perfetto_trace.json.gz"))[0]
    copies = []
    for k, session in enumerate(("2026_01_01_00_00_00", "2026_01_01_00_05_00")):
        os.makedirs(tmp_path / session)
        trace = json.loads(gzip.decompress(open(src, "rb").read()))
        for e in trace["traceEvents"]:
            if "run_id" in e.get("args", {}):
                e["args"]["run_id"] = str(int(e["args"]["run_id"]) + 1000 * k)
        copies.append(str(tmp_path / session / "perfetto_trace.json.gz"))
        with open(copies[-1], "wb") as f:
            f.write(gzip.compress(json.dumps(trace).encode()))
    dump = open_dump(sample("scan_while"))
    one = measure(dump, [copies[0]]).module("0000").kernels["ynn_fusion"]
    two = measure(dump, copies).module("0000").kernels["ynn_fusion"]
    assert two.runs == 2 * one.runs and two.count == 2 * one.count
    a, b = two.halves()
    assert a == b == one.median_us
    a1, b1 = one.halves()
    assert a1 != b1     # alternate runs of one session: real spread


def test_a_gzip_that_unpacks_past_the_cap_is_refused(monkeypatch):
    """Issue 17: a 2 MB trace that unpacked to 2 GiB took the server to 4.4 GB. Unpacking
    stops at the cap (shrunk here to 1 MB: the bomb is 4 MB of zeros, 4 KB packed)."""
    import gzip

    monkeypatch.setenv("HLOLENS_MAX_TRACE_BYTES", str(1 << 20))
    bomb = gzip.compress(b" " * (4 << 20))   # white space: JSON so far, read to the cap
    assert len(bomb) < 10_000
    with pytest.raises(TraceError) as e:
        read_trace(bomb, "bomb.json.gz")
    assert str(e.value).startswith("bomb.json.gz") and "trace size cap" in str(e.value)
    # a real trace followed by a second (empty) gzip member still reads, as gzip allows
    real = open(trace_file("transformer"), "rb").read()
    assert read_trace(real + gzip.compress(b""), "two.json.gz").events


# A child process reads the trace and says its peak memory (VmHWM, MB) and event count.
PEAK_CHILD = """
import sys
from compiler_bridge.perf import read_trace_file
n = len(read_trace_file(sys.argv[1]).events)
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM"))
print(n, peak // 1024)
"""


def test_a_trace_of_a_million_events_is_read_in_bounded_memory(tmp_path):
    """Issue 33: a 533 MB trace of 5.3M events took `runtimes` to 5.7 GB (``json.loads``
    of the whole text). Read as a stream, memory is the op events kept: for 1M events
    (150 MB of JSON, 147k op events) 120 MB here, where json.loads took 900 MB."""
    import subprocess
    import sys

    from tests.support.big_trace import write_big_trace

    path = str(tmp_path / "perfetto_trace.json.gz")
    ops = write_big_trace(path, 1_000_000)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", PEAK_CHILD, path], capture_output=True,
                         text=True, cwd=root, env={**os.environ, "PYTHONPATH": root},
                         timeout=300)
    assert out.returncode == 0, out.stderr
    events, peak_mb = map(int, out.stdout.split())
    assert events == ops == 147_400
    assert peak_mb < 300, f"reading the trace peaked at {peak_mb} MB"


def test_a_trace_over_the_event_cap_is_refused_by_name(monkeypatch):
    """The op events kept are capped (HLOLENS_MAX_TRACE_EVENTS), so that no trace, however
    many events it holds, takes the server's memory; the message names the cap."""
    data = open(trace_file("transformer"), "rb").read()
    whole = read_trace(data, "big.json.gz")
    kept = len(whole.events) + sum(len(m) for m in whole.markers.values())
    assert len(whole.events) == 430 and kept > 430      # XLA:CPU marks completions too
    monkeypatch.setenv("HLOLENS_MAX_TRACE_EVENTS", str(kept - 1))
    with pytest.raises(TraceError) as e:
        read_trace(data, "big.json.gz")
    assert str(e.value).startswith(f"big.json.gz: holds more than {kept - 1:,} per-op events")
    assert "HLOLENS_MAX_TRACE_EVENTS" in str(e.value)
    monkeypatch.setenv("HLOLENS_MAX_TRACE_EVENTS", str(kept))
    assert len(read_trace(data, "big.json.gz").events) == 430


def test_streamed_json_errors_name_line_and_column():
    """What json.loads said of a broken document, the stream says too."""
    for text in (b'{"traceEvents": [{"ph": "X"},\n {"ph": }]}', b'{"traceEvents": [1 2]}',
                 b'{"traceEvents": [{}], "x": 1} extra', b'[{"a": "\\u00e9"}, tru]'):
        try:
            json.loads(text)
        except json.JSONDecodeError as err:
            expected = f"line {err.lineno} column {err.colno}"
        with pytest.raises(TraceError, match=expected):
            read_trace(text, "x.json")
    with pytest.raises(TraceError, match="not a Chrome trace: expected a JSON object"):
        read_trace(b"12", "x.json")
    with pytest.raises(TraceError, match="'traceEvents' is not a list"):
        read_trace(b'{"traceEvents": {}}', "x.json")
    with pytest.raises(TraceError, match="not UTF-8"):
        read_trace(b'{"traceEvents": ["\xff"]}', "x.json")
    assert read_trace(b'{"metadata": {"a": [1, 2]}, "traceEvents": [ ] }', "x.json").events == []
