"""Memory on every target: the totals and the peak equal what XLA's
``compiled.memory_analysis()`` said of the very compile each sample holds (CPU:
``sample_dumps/memory_analysis.json``; GPU and TPU: each ``xla_facts.json``), the bytes per
memory space equal XLA's memory-usage report, and a TPU compile that ran out of memory is
explained from its dump and error text. Every expected number comes from XLA."""

from __future__ import annotations

import json
import os
import re

import pytest

from compiler_bridge.dumps import open_dump
from compiler_bridge.memory import module_memory, parse_usage_report
from conftest import SAMPLES, sample
from tests.support.cli import run as run_cli

FACTS = "xla_facts.json"
BACKENDS = sorted(n for n in os.listdir(SAMPLES)
                  if os.path.isfile(os.path.join(SAMPLES, n, FACTS)))


def _facts(name: str) -> dict:
    with open(os.path.join(SAMPLES, name, FACTS), encoding="utf-8") as f:
        return json.load(f)


with open(os.path.join(SAMPLES, "memory_analysis.json"), encoding="utf-8") as f:
    CPU = json.load(f)

# (sample, how to find the module, memory_analysis(), devices)
CASES = [(name, m["files"], m["memory_analysis"], m["devices"])
         for name in BACKENDS for m in _facts(name)["modules"] if "memory_analysis" in m]
CASES += [(name, v["module"], v["memory_analysis"], 1) for name, v in sorted(CPU.items())]


def _module(name: str, key: str):
    """The module a fact names: by its files' prefix (GPU/TPU facts), else the first module
    of that name (the CPU samples' first compile is the one recorded)."""
    d = open_dump(sample(name))
    hits = [m for m in d.modules if key.startswith(f"module_{m.id}.")] or \
        [m for m in d.modules if m.name == key]
    assert hits, (name, key)
    return d, hits[0]


def _id(case) -> str:
    return f"{case[0]}-{case[1].split('.')[1] if case[1].startswith('module_') else case[1]}"


def test_every_target_has_cases():
    assert {c[0] for c in CASES} >= {"gpu_h100", "tpu_v5e", "tpu_v6e", "mlp_train"}
    assert len(CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_totals_and_peak_equal_memory_analysis(case):
    name, key, want, _ = case
    d, mod = _module(name, key)
    t = module_memory(d, mod).totals()
    assert t.argument_bytes == want["argument_size_in_bytes"]
    assert t.output_bytes == want["output_size_in_bytes"]
    assert t.alias_bytes == want["alias_size_in_bytes"]
    assert t.temp_bytes == want["temp_size_in_bytes"]
    if "peak_memory_in_bytes" in want:           # JAX 0.4.30 reports no peak
        assert t.peak_bytes == want["peak_memory_in_bytes"]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_bytes_per_space_are_xla_reports(case):
    """Each memory space's bytes equal the 'Total bytes' of XLA's memory-usage report for
    that color (where XLA wrote one) and add up to every allocation."""
    name, key, _, _ = case
    d, mod = _module(name, key)
    mem = module_memory(d, mod)
    t = mem.totals()
    assert sum(t.spaces.values()) == t.total_bytes
    report = next((f for f in mod.files if f.kind == "memory_usage_report"), None)
    if report is None:
        return
    spaces = parse_usage_report(d.read_text(report.path), report.path).spaces
    assert len(spaces) == len(t.spaces)
    by_color = {a.color for a in mem.allocations}
    assert {s.color for s in spaces} == by_color
    assert sorted(s.total_bytes for s in spaces) == sorted(t.spaces.values())


@pytest.mark.parametrize("name", [n for n in BACKENDS if n.startswith("tpu_v")
                                  and "oom" not in n])
def test_tpu_temp_is_zero_because_temporaries_live_in_vmem(name):
    """XLA:TPU reports temp 0 with a peak of many MiB: its temporaries are in VMEM (S(1),
    color 1); its HBM temp allocation holds only tuple index tables."""
    for m in _facts(name)["modules"]:
        d, mod = _module(name, m["files"])
        mem = module_memory(d, mod)
        t = mem.totals()
        assert m["memory_analysis"]["temp_size_in_bytes"] == 0 == t.temp_bytes
        assert t.spaces["VMEM"] > 0 and t.spaces["HBM"] > 0
        hbm_temp = [v for a in mem.allocations if a.color == 0 and a.is_temp for v in a.values]
        assert hbm_temp and all(v.shape.startswith("(") for v in hbm_temp)
        x = t.xla
        assert x is not None and x.heap_colors == (0, 1)
        assert m["memory_analysis"]["peak_memory_in_bytes"] == x.whole_run_bytes + x.heap_peak_bytes


def test_sharded_module_is_per_device_with_a_total_over_devices():
    for name in ("gpu_h100", "tpu_v5e", "tpu_v6e"):
        sharded = [m for m in _facts(name)["modules"] if m["devices"] > 1]
        assert sharded
        for m in sharded:
            p = run_cli("memory", sample(name), "--module", m["files"].split(".")[0][7:],
                        "--json")
            assert p.returncode == 0, p.stderr
            data = json.loads(p.stdout)
            devices = data["devices"]
            assert devices["per_device"] is True and devices["count"] == m["devices"]
            assert data["peak_bytes"] == m["memory_analysis"]["peak_memory_in_bytes"]
            assert devices["peak_bytes_all_devices"] == data["peak_bytes"] * m["devices"]
            text = run_cli("memory", sample(name), "--module", m["files"].split(".")[0][7:])
            assert f"runs on {m['devices']} devices" in text.stdout


# -- the compile that ran out of memory

OOM = "tpu_v5e_oom"


def _error() -> str:
    return _facts(OOM)["modules"][0]["error"]


def _gib(text: str, label: str) -> float:
    """'required for HLO temporaries (39.81G)' -> 39.81: the figure the error prints."""
    m = re.search(label + r"[^(]*\(([\d.]+)G\)", text)
    assert m, text
    return float(m.group(1))


def test_oom_required_and_available_come_from_the_dump_and_the_error():
    p = run_cli("memory", sample(OOM), "--json", "--error", _error())
    assert p.returncode == 0, p.stderr
    oom = json.loads(p.stdout)["oom"]
    required = _gib(_error(), "required") * (1 << 30)
    assert abs(oom["required_bytes"] - required) / required < 0.001   # printed to 0.01G
    assert oom["available_bytes"] == int(_gib(_error(), "available") * (1 << 30))
    assert oom["available_from"] == "the error text"
    # the required bytes are the HBM space's bytes of XLA's own memory-usage report
    d = open_dump(sample(OOM))
    report = next(f for f in d.main.files if f.kind == "memory_usage_report")
    hbm = next(s for s in parse_usage_report(d.read_text(report.path)).spaces if s.color == 0)
    assert oom["required_bytes"] == hbm.total_bytes


def test_oom_without_the_error_text_is_found_from_the_chip():
    p = run_cli("memory", sample(OOM), "--json")
    assert p.returncode == 0, p.stderr
    oom = json.loads(p.stdout)["oom"]
    assert oom is not None and "datasheet" in oom["available_from"]
    assert oom["available_bytes"] == 16 << 30             # TPU v5e: 16 GiB HBM
    assert oom["required_bytes"] > oom["available_bytes"]


def test_oom_largest_buffers_name_instruction_source_and_tile_padding():
    p = run_cli("memory", sample(OOM), "--json", "--error", _error())
    largest = json.loads(p.stdout)["oom"]["largest"]
    assert [b["bytes"] for b in largest] == sorted((b["bytes"] for b in largest), reverse=True)
    d = open_dump(sample(OOM))
    hlo = d.stage(d.main)
    for b in largest:
        assert set(b) >= {"buffer", "bytes", "instruction", "source"}
        assert hlo.find(b["instruction"]) is not None
    top = largest[0]
    assert top["source"] and top["source"].endswith(".py:112") and top["scope"]
    # f32[3,3,32,64] tiled T(8,128): the minor dimension 64 padded to 128
    conv = next(b for b in largest if b["shape"].startswith("f32[3,3,32,64]"))
    assert conv["padding_bytes"] == conv["bytes"] - 3 * 3 * 32 * 64 * 4 == 3 * 3 * 32 * 64 * 4


def test_error_text_without_figures_and_bad_error_file(tmp_path):
    p = run_cli("memory", sample("mlp_train"), "--json", "--error", "INTERNAL: something")
    assert p.returncode == 0 and json.loads(p.stdout)["oom"] is None
    p = run_cli("memory", sample("mlp_train"), "--error-file", str(tmp_path / "nope.txt"))
    assert p.returncode == 2 and "cannot read the error file" in p.stderr


# -- the Memory page

def _page(name: str, monkeypatch, module: str):
    from tests.support.apptest import app, open_tab
    return open_tab(app(sample(name), monkeypatch, {"module": module}), "Memory")


def test_memory_page_peak_is_xlas_on_gpu_and_tpu(monkeypatch):
    from tests.support.apptest import plain, texts
    from viz import panels as P
    for name in ("gpu_h100", "tpu_v6e"):
        m = _facts(name)["modules"][0]
        at = _page(name, monkeypatch, m["files"].split(".")[0][7:])
        labels = {x.label: x.value for x in at.metric}
        want = m["memory_analysis"]
        assert labels["Peak (XLA)"] == P.human_bytes(want["peak_memory_in_bytes"])
        assert labels["Temp"] == P.human_bytes(want["temp_size_in_bytes"])
        page = plain(texts(at))
        assert "peak_memory_in_bytes" in page
    assert "XLA:TPU reports temp 0: its temporaries live in VMEM" in page
    assert "HBM" in page and "VMEM" in page


def test_memory_page_says_a_sharded_module_is_per_device(monkeypatch):
    from tests.support.apptest import plain, texts
    m = next(m for m in _facts("tpu_v5e")["modules"] if m["devices"] > 1)
    at = _page("tpu_v5e", monkeypatch, m["files"].split(".")[0][7:])
    page = plain(texts(at))
    assert f"what one of {m['devices']} devices runs" in page.replace("**", "")


def test_memory_page_explains_the_out_of_memory_compile(monkeypatch):
    from tests.support.apptest import ok
    at = _page(OOM, monkeypatch, "0000")
    assert any("Ran out of memory" in e.value and "datasheet" in e.value for e in at.error)
    oom = next(d.value for d in at.dataframe if "tile padding" in d.value.columns)
    assert list(oom["bytes"]) == sorted(oom["bytes"], reverse=True)
    assert str(oom["source"].iloc[0]).endswith(".py:112")     # the conv the user wrote
    at.text_area(key="mem-oom-error:0000").input(_error()).run()
    ok(at)
    box = next(e.value for e in at.error if "Ran out of memory" in e.value)
    assert "the error text" in box and "15.8 GiB available" in box


def test_memory_axis_is_in_binary_units():
    from viz import memory as MV
    d, mod = _module("gpu_h100", _facts("gpu_h100")["modules"][0]["files"])
    fig = MV.timeline_figure(module_memory(d, mod))
    assert fig.layout.yaxis.title.text == "live MiB" and fig.layout.yaxis.ticksuffix == " MiB"
    top = max(max(t.y) for t in fig.data if t.y is not None and len(t.y) > 1)
    assert top == pytest.approx(max(module_memory(d, mod).curve) / (1 << 20))


# -- programs compiled here, now: XLA:CPU's own numbers for programs no sample holds

_LIVE = r'''
import json, os, sys
out = sys.argv[1]
os.environ["XLA_FLAGS"] = f"--xla_dump_to={out} --xla_dump_hlo_as_text"
os.environ["JAX_PLATFORMS"] = "cpu"
from functools import partial
import jax, jax.numpy as jnp

def loss(params, x):
    for w in params:
        x = jnp.tanh(x @ w)
    return x.sum()

@partial(jax.jit, donate_argnums=(0,))
def sgd(params, x):
    return [p - 0.1 * g for p, g in zip(params, jax.grad(loss)(params, x))]

@jax.jit
def scan_rnn(h, xs, w):
    return jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x),) * 2, h, xs)

@jax.jit
def conv(x, k):
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y).mean(axis=(1, 2))

params = [jnp.ones((64, 128)), jnp.ones((128, 128)), jnp.ones((128, 32))]
res = {}
for f, args in ((sgd, (params, jnp.ones((16, 64)))),
                (scan_rnn, (jnp.ones((8, 64)), jnp.ones((12, 8, 64)), jnp.ones((64, 64)))),
                (conv, (jnp.ones((4, 16, 16, 8)), jnp.ones((3, 3, 8, 16))))):
    m = f.lower(*args).compile().memory_analysis()
    res["jit_" + f.__name__] = {k: getattr(m, k) for k in dir(m) if k.endswith("_in_bytes")}
with open(os.path.join(out, "memory_analysis.json"), "w") as f:
    json.dump(res, f)
'''


def test_programs_compiled_now_match_memory_analysis(tmp_path):
    """A donated train step (alias), a scan and a convolution compiled in a child process
    with --xla_dump_to: the dump's totals and peak equal memory_analysis() of each."""
    import subprocess
    import sys
    out = tmp_path / "dump"
    p = subprocess.run([sys.executable, "-c", _LIVE, str(out)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    want = json.loads((out / "memory_analysis.json").read_text())
    d = open_dump(str(out))
    assert set(want) == {"jit_sgd", "jit_scan_rnn", "jit_conv"}
    assert want["jit_sgd"]["alias_size_in_bytes"] > 0
    for name, ma in want.items():
        mod = next(m for m in d.modules if m.name == name)
        t = module_memory(d, mod).totals()
        assert (t.argument_bytes, t.output_bytes, t.alias_bytes, t.temp_bytes, t.peak_bytes) \
            == (ma["argument_size_in_bytes"], ma["output_size_in_bytes"],
                ma["alias_size_in_bytes"], ma["temp_size_in_bytes"],
                ma["peak_memory_in_bytes"]), name


def test_occupied_peak_property():
    """The bytes the temporaries cover at their peak (XLA:GPU's heap term), found by
    pruning on the sum, equal a byte-by-byte count at every position."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from compiler_bridge.memory import (Allocation, BufferAssignment, LiveRange,
                                        LogicalValue, build_memory)
    from compiler_bridge.memory.xla_stats import heap_peak

    value = st.tuples(st.integers(0, 40), st.integers(1, 24), st.integers(0, 30),
                      st.integers(0, 8), st.sampled_from(["f32[]", "(f32[], f32[])"]))

    @settings(max_examples=200, deadline=None)
    @given(st.lists(value, min_size=1, max_size=30), st.integers(1, 40))
    def check(values, end):
        alloc = Allocation(0, 64, ("preallocated-temp",))
        ranges = {}
        for i, (offset, size, start, length, shape) in enumerate(values):
            alloc.values.append(LogicalValue(i, f"v{i}", (), False, False, 0, size, offset,
                                             shape, 0, 0))
            ranges[(f"v{i}", ())] = (min(start, end), min(start + length, end))
        lr = LiveRange("<synthetic>", end, [f"v{i}" for i in range(end)], ranges)
        mem = build_memory("m", BufferAssignment("<synthetic>", [alloc]), lr, None)
        want = [len({b for i, (o, s, _, _, shape) in enumerate(values)
                     if not shape.startswith("(") and ranges[(f"v{i}", ())][0] <= t
                     <= ranges[(f"v{i}", ())][1] for b in range(o, o + s)})
                for t in range(end + 1)]
        got, at = heap_peak(mem, 0, occupied=True)
        assert got == max(want)
        assert at is None or want[at] == got

    check()
