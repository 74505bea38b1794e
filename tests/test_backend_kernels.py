"""What XLA:GPU decided per kernel, on a program compiled here that no sample holds: a scan
over sharded layers (FSDP: each layer's weights all-gathered inside the while loop), whose
thunk sequence nests collectives and dynamic-slice fusions in the loops' bodies."""

from __future__ import annotations

import re

import pytest

from compiler_bridge import open_dump
from compiler_bridge.kernels import module_kernels
from tests.support.backend_fresh import SCAN_FSDP, compile_for


@pytest.fixture(scope="module")
def gpu_scan(tmp_path_factory):
    dump, facts = compile_for("h100", tmp_path_factory.mktemp("scan"), SCAN_FSDP)
    assert "memory_analysis" in facts["scan_fsdp"], facts
    return open_dump(str(dump))


def test_every_kernel_in_a_loop_body_has_its_thunk(gpu_scan):
    """XLA:GPU runs an all-gather in line (``is_sync``) in each loop body and a
    ``dynamic_slice_fusion`` custom fusion as a ``kDynamicSliceFusion`` thunk. Before, both
    were listed without a thunk: a sync collective took only a thunk at the top level (not
    one nested in a ``kWhile``), and the fusion's thunk names no kernel."""
    d = gpu_scan
    m = d.main
    seq = d.read_text(m.first("thunk_sequence").path)
    kinds = {int(n): k for n, k in re.findall(r"^\s*(\d+): (\w+)", seq, re.M)}
    assert "kDynamicSliceFusion" in kinds.values()
    rows = module_kernels(d, m).to_json()["kernels"]
    slices = [r for r in rows if r["emitter"] == "custom fusion (dynamic_slice_fusion)"]
    assert len(slices) == list(kinds.values()).count("kDynamicSliceFusion")
    for r in rows:
        if r["name"].split(".")[0].endswith("-done") and r["thunk"] is None:
            start = r["name"].replace("-done", "-start")
            assert next(x for x in rows if x["name"] == start)["thunk"]["kind"] != \
                "kAsyncStart", r["name"]        # the done of an in-line collective
            continue
        assert r["thunk"] is not None, r["name"]
        assert kinds[r["thunk"]["number"]] == r["thunk"]["kind"], r["name"]
    in_line = [r for r in rows if r["name"].startswith("all-gather-start")
               and r["thunk"]["kind"] == "kAllGather"]
    assert len(in_line) == list(kinds.values()).count("kAllGather") - sum(
        1 for r in rows if r["name"].startswith("all-gather-start")
        and r["thunk"]["kind"] == "kAsyncStart")
