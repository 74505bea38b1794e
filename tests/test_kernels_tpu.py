"""What XLA:TPU decided per kernel (``python -m compiler_bridge kernels --json`` on the v5e
and v6e samples): every window config and estimated cycles of the after-codegen module, the
padded size of every tiled buffer (as XLA:TPU's buffer assignment sizes it), the memory
space of each kernel's output, the after-codegen module as a stage, module names as the
program's. Expected values come from XLA's files, read here with regular expressions or
XLA's own parser, never from HLO Lens's readers."""

from __future__ import annotations

import glob
import json
import os
import re

import pytest

from compiler_bridge import open_dump, parse_hlo, pass_timeline
from compiler_bridge.hlo import parse_shape
from compiler_bridge.targets import BUILTIN, tiling

from conftest import SAMPLES, missing, read
from tests.support.cli import run

TPUS = ("tpu_v5e", "tpu_v6e")
CODEGEN = sorted(p for t in TPUS for p in glob.glob(os.path.join(SAMPLES, t, "*after_codegen.txt")))
CYCLES = re.compile(r'^\s*%?(\S+) = .*"window_config":\{.*?"estimated_cycles":"(\d+)"', re.M)
# the generation each sample's facts name (XLA's device_kind) -> the clock the µs use
GENERATION = {"TPU v5 lite": "v5e", "TPU v6 lite": "v6e"}


@pytest.fixture(scope="module", params=TPUS)
def listed(request) -> tuple[str, dict[str, dict]]:
    proc = run("kernels", os.path.join(SAMPLES, request.param), "--json")
    assert proc.returncode == 0, proc.stderr
    return request.param, {m["id"]: m for m in json.loads(proc.stdout)["modules"]}


def codegen_of(name: str, mid: str) -> str:
    hits = glob.glob(os.path.join(SAMPLES, name, f"module_{mid}.*after_codegen.txt"))
    assert len(hits) == 1
    return hits[0]


def test_every_window_config_and_its_estimated_cycles_are_listed(listed):
    name, modules = listed
    with open(os.path.join(SAMPLES, name, "xla_facts.json"), encoding="utf-8") as f:
        generation = GENERATION[json.load(f)["device_kind"]]
    assert modules
    for mid, m in modules.items():
        expected = {n: int(c) for n, c in CYCLES.findall(read(codegen_of(name, mid)))}
        assert expected
        got = {k["name"]: k["estimated_cycles"] for k in m["kernels"]
               if k["estimated_cycles"] is not None}
        assert got == expected
        assert m["target"] == f"XLA:TPU {generation}" and m["stage"] == "after_codegen"
        assert m["clock_hz"] == BUILTIN[f"tpu_{generation}"].clock_hz and m["clock_source"]
        for k in m["kernels"]:
            if k["estimated_cycles"] is not None:
                assert k["xla_estimate_us"] == pytest.approx(
                    k["estimated_cycles"] / m["clock_hz"] * 1e6, abs=1e-4)
                assert k["window_config"]["output_window_bounds"]
            assert k["ptx"] is None and k["thunk"] is None


def test_window_bounds_as_written(listed):
    name, modules = listed
    mid, m = next(iter(modules.items()))
    text = read(codegen_of(name, mid))
    for k in m["kernels"]:
        if k["window_config"] is None:
            continue
        line = re.search(rf'^\s*%?{re.escape(k["name"])} = .*$', text, re.M).group(0)
        bounds = re.search(r'"output_window_bounds":\[(.*?)\]', line).group(1)
        assert k["window_config"]["output_window_bounds"] == \
            [int(x) for x in re.findall(r'"(\d+)"', bounds)]


def test_memory_space_of_each_kernel_is_its_layouts(listed):
    name, modules = listed
    names = {"0": "HBM", "1": "VMEM", "2": "SMEM"}
    for mid, m in modules.items():
        text = read(codegen_of(name, mid))
        for k in m["kernels"]:
            shape = re.search(rf'^\s*%?{re.escape(k["name"])} = (\S+) ', text, re.M).group(1)
            if shape.startswith("("):
                continue
            space = re.search(r"S\((\d+)\)\}$", shape)
            assert k["memory_space"] == names[space.group(1) if space else "0"]


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(SAMPLES, "tpu_*", "*buffer-assignment.txt"))),
                         ids=lambda p: os.path.relpath(p, SAMPLES))
def test_padded_size_of_every_tiled_buffer_is_xlas(path):
    """Each value of XLA:TPU's buffer assignment: ``(size=N,...)`` is the padded size of its
    tiled shape (``f32[]{:T(128)}`` takes 512 bytes, ``s32[8,129]{1,0:T(8,128)}`` 8,192)."""
    values = re.findall(r"^ value: <\d+ \S+ @\d+> \(size=(\d+),offset=\d+\): (.+)$", read(path),
                        re.M)
    tiled = 0
    for size, text in values:
        shape = parse_shape(text)
        t = tiling(shape) if shape.is_array else None
        if t is None:
            continue
        tiled += 1
        assert t.padded_bytes == int(size), text
        assert t.wasted_bytes == int(size) - shape.byte_size
    assert tiled > 10


@pytest.mark.parametrize("path", CODEGEN, ids=lambda p: os.path.relpath(p, SAMPLES))
def test_after_codegen_is_the_last_stage(path):
    name = os.path.basename(os.path.dirname(path))
    dump = open_dump(os.path.join(SAMPLES, name))
    mod = next(m for m in dump.modules if os.path.basename(path).startswith(f"module_{m.id}."))
    steps = pass_timeline(dump, mod).steps
    assert [s.kind for s in steps][-2:] == ["after_optimizations", "after_codegen"]
    try:
        from jaxlib import _hlo as hlo
    except ImportError:
        missing("jaxlib._hlo (XLA's own parser) is not importable")
    theirs = sum(len(list(c.instructions()))
                 for c in hlo.hlo_module_from_text(read(path)).computations())
    assert steps[-1].instructions == theirs
    assert dump.stage(mod, "after_codegen").instruction_count == theirs


def test_module_names_are_the_programs(listed):
    """XLA:TPU's file names end the module's name with ``.cl_<N>``; the program is named
    without it, as its HLO header says."""
    name, modules = listed
    for mid, m in modules.items():
        path = codegen_of(name, mid)
        assert ".cl_" in os.path.basename(path)
        header = re.match(r"HloModule (\S+?),", read(path)).group(1)
        assert m["name"] == header == parse_hlo(read(path), path).name
        assert ".cl_" not in m["name"]
