"""The inspector shows what the backend decided for the selected instruction (Streamlit's
AppTest): on the H100 sample a Triton GEMM's emitter, tile config, thunk and stream, and the
reused kernel it runs; on the TPU v5e sample the after-codegen stage with XLA:TPU's estimated
cycles, window config, tiled layout, padding and memory space. Expected values are read from
XLA's files here, not from HLO Lens's readers."""

from __future__ import annotations

import glob
import os
import re

from conftest import SAMPLES, read, sample
from tests.support.apptest import app, open_popover, texts


def line_of(pattern: str, name: str) -> str:
    path = glob.glob(os.path.join(SAMPLES, pattern))[0]
    return re.search(rf"^\s*%?{re.escape(name)} = .*$", read(path), re.M).group(0)


def test_inspector_shows_a_triton_gemms_tiles_and_its_reused_kernel(monkeypatch):
    name = "gemm_fusion_dot.42"
    line = line_of("gpu_h100/module_0001.*sm_9.0a_gpu_after_optimizations.txt", name)
    assert '"kind":"__triton_nested_gemm_fusion"' in line
    warps = re.search(r'"num_warps":"(\d+)"', line).group(1)
    tile = "x".join(re.findall(r'"(\d+)"', re.search(r'"output_tiles":\[(.*?)\]', line).group(1)))
    thunks = read(glob.glob(os.path.join(SAMPLES, "gpu_h100", "module_0001.*thunk_sequence.txt"))[0])
    second = re.findall(r"^(\d+): kCustomKernel .*\] gemm_fusion_dot_40 ", thunks, re.M)[1]
    at = app(sample("gpu_h100"), monkeypatch, {"module": "0001", "selected": name})
    page = texts(at)
    assert "Backend · XLA:GPU sm_9.0a" in page
    assert "emitter: **Triton GEMM**" in page
    assert f"Triton tile {tile}, {warps} warps" in page
    assert f"thunk {second} (`kCustomKernel`)" in page and "`compute` stream" in page
    assert "runs kernel `gemm_fusion_dot_40`" in page


def test_inspector_shows_xla_tpus_estimate_window_and_tiling(monkeypatch):
    name = "fusion.40"
    line = line_of("tpu_v5e/module_0058.*after_codegen.txt", name)
    cycles = int(re.search(r'"estimated_cycles":"(\d+)"', line).group(1))
    bounds = [int(x) for x in re.findall(r'"(\d+)"', re.search(
        r'"output_window_bounds":\[(.*?)\]', line).group(1))]
    shape = re.match(r"\s*%?\S+ = (\S+) ", line).group(1)
    tiles = re.search(r":(T\(.*?\)+)S\(1\)\}$", shape).group(1)
    at = app(sample("tpu_v5e"), monkeypatch,
             {"module": "0058", "stage": "after_codegen", "selected": name})
    page = texts(at)
    assert "Backend · XLA:TPU v5e" in page
    assert f"**{cycles:,} cycles** = **{cycles / 1.5e3:.2f} µs** at 1.5 GHz" in page
    assert f"window config: output {bounds}" in page
    assert f"tiles `{tiles}`" in page and "in VMEM (`S(1)`)" in page


def test_inspector_shows_the_kernels_ptx_once(monkeypatch):
    """wrapped_convert.1 runs kernel wrapped_convert_1, whose ``.entry`` the .ptx file holds:
    one PTX expander shows it (the inspector's Kernel expander; the backend's own is for
    reused kernels, which bear another instruction's name)."""
    path = glob.glob(os.path.join(SAMPLES, "gpu_h100", "module_0001.*.1.ptx"))[0]
    entry = re.search(r"^\.visible \.entry (\w+)\(", read(path), re.M).group(1)
    name = "wrapped_convert.1"
    assert name.replace(".", "_") == entry
    at = app(sample("gpu_h100"), monkeypatch, {"module": "0001", "selected": name})
    assert [e.label for e in at.expander if "PTX" in e.label] == ["Kernel · PTX"]
    open_popover(at, f"kernel:{name}")
    assert any(f".entry {entry}(" in c.value for c in at.code)
