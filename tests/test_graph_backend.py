"""Badges of what the backend decided on the graph's kernel nodes (``viz.render.graph_for``,
the app's and ``viz render``'s one path): the emitter of each XLA:GPU fusion, XLA:TPU's
estimated cycles and memory space after codegen. Expected values from XLA's files."""

from __future__ import annotations

import glob
import os
import re

from compiler_bridge import open_dump
from viz import ViewState
from viz.render import graph_for

from conftest import SAMPLES, read, sample


def labels(dot: str) -> dict[str, str]:
    """Instruction node id -> its label, from the DOT text."""
    return {m.group(1): m.group(2).replace("\\n", "\n")
            for m in re.finditer(r'id="node:([^"]+)".*?label="((?:[^"\\]|\\.)*)"', dot)}


def test_triton_gemm_fusions_carry_their_emitter_and_tile():
    text = read(glob.glob(os.path.join(SAMPLES, "gpu_h100",
                                       "module_0001.*sm_9.0a_gpu_after_optimizations.txt"))[0])
    entry = text.split("\nENTRY ", 1)[1]
    gemms = dict(re.findall(r'^\s*%?(\S+) = .*"kind":"__triton_nested_gemm_fusion".*?'
                            r'"output_tiles":\[\{"sizes":\[(.*?)\]', entry, re.M))
    assert gemms
    view = graph_for(open_dump(sample("gpu_h100")), ViewState(module="0001", grouping="flat"),
                     budget=5000)
    drawn = labels(view.dot)
    for name, sizes in gemms.items():
        tile = "x".join(re.findall(r'"(\d+)"', sizes))
        assert f"⚙ Triton GEMM {tile}" in drawn[name], name


def test_tpu_kernels_carry_xlas_estimated_cycles_after_codegen():
    path = glob.glob(os.path.join(SAMPLES, "tpu_v5e", "module_0058.*after_codegen.txt"))[0]
    entry = read(path).split("\nENTRY ", 1)[1]
    cycles = dict(re.findall(r'^\s*%?(\S+) = .*"estimated_cycles":"(\d+)"', entry, re.M))
    assert cycles
    dump = open_dump(sample("tpu_v5e"))
    view = graph_for(dump, ViewState(module="0058", stage="after_codegen", grouping="flat"),
                     budget=5000)
    drawn = labels(view.dot)
    for name, n in cycles.items():
        assert f"est. {int(n):,} cycles" in drawn[name], name
    before = graph_for(dump, ViewState(module="0058", stage="before_optimizations",
                                       grouping="flat"), budget=5000)
    assert re.search(r"est\. [\d,]+ cycles", before.dot) is None
