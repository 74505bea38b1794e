"""What XLA:GPU decided per kernel (``python -m compiler_bridge kernels --json`` on the H100
sample): every Triton fusion's tile config, every thunk of the thunk sequence matched to one
instruction (reused kernels included), each PTX ``.entry`` to its fusion, the emitter of
Triton GEMMs and cuDNN calls. Expected values come from XLA's files, read here with regular
expressions, never from HLO Lens's readers."""

from __future__ import annotations

import glob
import json
import os
import re

import pytest

from compiler_bridge import open_dump, parse_hlo
from compiler_bridge.kernels import kernel_ptx, module_kernels
from compiler_bridge.targets import gpu_emitter, parse_thunk_sequence, tile_config

from conftest import SAMPLES, peer_file, read
from tests.support.cli import run

GPU = os.path.join(SAMPLES, "gpu_h100")
MODULES = sorted({os.path.basename(p).split(".")[0]
                  for p in glob.glob(os.path.join(GPU, "module_*after_optimizations.txt"))})
KERNEL_THUNK = re.compile(r"^\s*(\d+): (kCustomKernel|kKernel)\s+\[[^\]]*\]\s*(\S+) grid:", re.M)
COLLECTIVE_KINDS = ("kAllReduce", "kAllGather", "kReduceScatter", "kAllToAll",
                    "kCollectivePermute", "kAsyncStart", "kAsyncDone")
LIBRARY_THUNK = re.compile(r"^\s*(\d+): (kConvolution|kGemm|kCublasLtMatmul)\b", re.M)


def only(pattern: str) -> str:
    hits = glob.glob(os.path.join(GPU, pattern))
    assert len(hits) == 1, pattern
    return hits[0]


@pytest.fixture(scope="module")
def listed() -> dict[str, dict]:
    """``kernels --json`` of the sample: module id -> its entry."""
    proc = run("kernels", GPU, "--json")
    assert proc.returncode == 0, proc.stderr
    return {m["id"]: m for m in json.loads(proc.stdout)["modules"]}


def entry_lines(text: str) -> list[str]:
    """The instruction lines of the ENTRY computation, as XLA printed them."""
    body = text.split("\nENTRY ", 1)[1]
    return body.split("\n}\n", 1)[0].splitlines()[1:]


@pytest.mark.parametrize("mid", MODULES)
def test_every_triton_fusion_lists_its_tile_config(listed, mid):
    text = read(only(f"{mid}.*sm_9.0a_gpu_after_optimizations.txt"))
    expected = {}
    for line in entry_lines(text):
        m = re.match(r"\s*%?(\S+) = .* fusion\(", line)
        cfg = re.search(r'"block_level_fusion_config":\{"num_warps":"(\d+)",'
                        r'"output_tiles":\[(.*?)\],"num_ctas":(\d+),"num_stages":(\d+)', line)
        if m and cfg:
            tiles = [[int(x) for x in re.findall(r'"(\d+)"', t)]
                     for t in re.findall(r'\{"sizes":\[(.*?)\]\}', cfg.group(2))]
            expected[m.group(1)] = {"output_tiles": tiles, "num_warps": int(cfg.group(1)),
                                    "num_stages": int(cfg.group(4)),
                                    "num_ctas": int(cfg.group(3))}
    assert expected, "the sample has Triton fusions"
    kernels = listed[mid[7:]]["kernels"]
    got = {k["name"]: k["tile"] for k in kernels if k["tile"] is not None}
    assert got == expected
    gemms = {re.match(r"\s*%?(\S+) = ", x).group(1) for x in entry_lines(text)
             if '"kind":"__triton_nested_gemm_fusion"' in x}
    assert gemms and {k["name"] for k in kernels if k["emitter"] == "Triton GEMM"} == gemms


@pytest.mark.parametrize("mid", MODULES)
def test_every_thunk_runs_one_instruction(listed, mid):
    """Each kernel and library thunk of thunk_sequence.txt is matched to one instruction; a
    thunk naming another instruction's kernel (XLA reused it) runs an instruction of the
    same shape that no thunk names, the one whose metadata names that kernel's fusion
    (``deduplicated_name``)."""
    thunks = read(only(f"{mid}.*thunk_sequence.txt"))
    numbers = {int(n) for n, _, _ in KERNEL_THUNK.findall(thunks)} \
        | {int(n) for n, _ in LIBRARY_THUNK.findall(thunks)}
    kernels = listed[mid[7:]]["kernels"]
    matched = [k["thunk"]["number"] for k in kernels if k["thunk"] is not None
               and k["thunk"]["kind"] not in COLLECTIVE_KINDS]
    assert sorted(matched) == sorted(numbers)
    text = read(only(f"{mid}.*sm_9.0a_gpu_after_optimizations.txt"))
    shape = dict(re.findall(r"^\s*%?(\S+) = (\S+) ", text, re.M))
    named = {name for _, _, name in KERNEL_THUNK.findall(thunks)}
    dedup = dict(re.findall(r'^\s*%?(\S+) = .*deduplicated_name="([^"]+)"', text, re.M))
    for k in kernels:
        if k["thunk"] is None or k["thunk"]["kind"] not in ("kCustomKernel", "kKernel"):
            continue
        own = re.sub(r"[.\-]", "_", k["name"])
        if k["kernel"] != own:                  # a reused kernel
            assert own not in named
            first = next(n for n in shape if re.sub(r"[.\-]", "_", n) == k["kernel"])
            assert shape[first] == shape[k["name"]]
            assert dedup.get(k["name"], first) == first


def test_reused_kernels_of_the_transformer(listed):
    """XLA launches gemm_fusion_dot_40 twice: the second time for another dot of the same
    shape, whose metadata says it was deduplicated into gemm_fusion_dot.40."""
    mid = "module_0001"
    thunks = KERNEL_THUNK.findall(read(only(f"{mid}.*thunk_sequence.txt")))
    twice = [int(n) for n, _, name in thunks if name == "gemm_fusion_dot_40"]
    assert len(twice) == 2
    by_number = {k["thunk"]["number"]: k["name"] for k in listed["0001"]["kernels"]
                 if k["thunk"]}
    text = read(only(f"{mid}.*sm_9.0a_gpu_after_optimizations.txt"))
    reusers = re.findall(r'^\s*%?(\S+) = .*deduplicated_name="gemm_fusion_dot.40"', text, re.M)
    assert by_number[twice[0]] == "gemm_fusion_dot.40"
    assert by_number[twice[1]] != "gemm_fusion_dot.40" and by_number[twice[1]] in reusers


@pytest.mark.parametrize("mid", MODULES)
def test_each_ptx_kernel_belongs_to_its_fusion(listed, mid):
    files = glob.glob(os.path.join(GPU, f"{mid}.*.ptx"))
    assert files
    kernels = listed[mid[7:]]["kernels"]
    for path in files:
        for entry in re.findall(r"^\.visible \.entry (\w+)\(", read(path), re.M):
            holders = [k for k in kernels if k["kernel"] == entry]
            assert holders, entry
            assert all(k["ptx"] and k["ptx"].endswith(os.path.basename(path)) for k in holders)


def test_kernel_ptx_is_the_entry_as_written():
    dump = open_dump(GPU)
    for path in glob.glob(os.path.join(GPU, "module_*.ptx")):
        text = read(path)
        for entry in re.findall(r"^\.visible \.entry (\w+)\(", text, re.M):
            mid = os.path.basename(path).split(".")[0][7:]
            k = next(k for k in module_kernels(dump, mid).kernels if k.kernel == entry)
            ptx = kernel_ptx(dump, k)
            assert ptx is not None and ptx.startswith(f".visible .entry {entry}(")
            assert ptx in text and ptx.endswith("\n}")


def test_cudnn_convolutions_are_cudnn_calls(listed):
    text = read(only("module_0698.*sm_9.0a_gpu_after_optimizations.txt"))
    convs = set(re.findall(r'^\s*%?(\S+) = .*custom_call_target="__cudnn\$conv', text, re.M))
    assert convs
    assert {k["name"] for k in listed["0698"]["kernels"] if k["emitter"] == "cuDNN"} == convs


def test_a_collective_nested_in_an_async_start_runs_on_its_stream():
    text = read(only("module_1382.*thunk_sequence.txt"))
    start = re.search(r"^(\d+): kAsyncStart .*stream=(\S+?),", text, re.M)
    nested = re.search(r"^\s+(\d+): (k\w+)", text, re.M)
    assert start and nested
    thunks = {t.number: t for t in parse_thunk_sequence(text)}
    assert thunks[int(start.group(1))].stream == start.group(2)
    assert thunks[int(nested.group(1))].stream == start.group(2)
    assert all(t.stream == "compute" for n, t in thunks.items()
               if n not in (int(start.group(1)), int(nested.group(1))))


def test_collectives_run_where_is_sync_says():
    """A collective start with ``is_sync: true`` runs as its own thunk in line (kAllReduce on
    the compute stream); one with ``is_sync: false`` as a kAsyncStart on the stream it
    names, its done as the kAsyncDone whose async_id is that start."""
    text = read(only("module_1382.*sm_9.0a_gpu_after_optimizations.txt"))
    starts = dict(re.findall(r'^\s*%?(\S+) = \S+ all-reduce-start\(.*"is_sync":(true|false)',
                             text, re.M))
    dones = dict(re.findall(r"^\s*%?(\S+) = \S+ all-reduce-done\(%?([^)\s]+)\)", text, re.M))
    assert "true" in starts.values() and "false" in starts.values()
    seq = read(only("module_1382.*thunk_sequence.txt"))
    kinds = {int(n): k for n, k in re.findall(r"^\s*(\d+): (k\w+)", seq, re.M)}
    stream = re.search(r"kAsyncStart .*stream=([^,\s]+)", seq).group(1)
    async_ids = {int(a) for a in re.findall(r"kAsyncDone .*async_id=(\d+)", seq)}
    proc = run("kernels", GPU, "--module", "1382", "--json")
    got = {k["name"]: k["thunk"] for k in json.loads(proc.stdout)["modules"][0]["kernels"]}
    for name, sync in starts.items():
        t = got[name]
        assert t is not None, name
        if sync == "true":
            assert kinds[t["number"]] == "kAllReduce" and t["stream"] == "compute"
        else:
            assert kinds[t["number"]] == "kAsyncStart" and t["stream"] == stream
            assert t["number"] in async_ids
            done = next(d for d, s in dones.items() if s == name)
            assert kinds[got[done]["number"]] == "kAsyncDone"
            assert re.search(rf"^{got[done]['number']:03d}: kAsyncDone .*async_id={t['number']}\b",
                             seq, re.M)


def test_module_names_and_targets(listed):
    for mid, m in listed.items():
        text = read(only(f"module_{mid}.*sm_9.0a_gpu_after_optimizations.txt"))
        assert m["name"] == re.match(r"HloModule (\S+?),", text).group(1)
        assert m["target"] == "XLA:GPU sm_9.0a"
        assert all(k["memory_space"] is None and k["xla_estimate_us"] is None
                   for k in m["kernels"])


def test_a_legacy_triton_gemm_lists_its_triton_gemm_config():
    """XLA's own test module of the legacy Triton GEMM emitter (``__triton_gemm`` with
    ``triton_gemm_config``: block_m x block_n output tiles, block_k, split_k)."""
    path = peer_file("0227_")
    text = read(path)
    cfg = dict(re.findall(r'"(block_m|block_n|block_k|split_k|num_stages|num_warps|num_ctas)"'
                          r':"(\d+)"', text))
    module = parse_hlo(text, path)
    fusion = next(i for i in module.entry.instructions if i.opcode == "fusion")
    tile = tile_config(fusion)
    assert tile is not None and gpu_emitter(module, fusion) == "Triton GEMM"
    assert tile.to_json() == {
        "output_tiles": [[int(cfg["block_m"]), int(cfg["block_n"])]],
        "num_warps": int(cfg["num_warps"]), "num_stages": int(cfg["num_stages"]),
        "num_ctas": int(cfg["num_ctas"]), "block_k": int(cfg["block_k"]),
        "split_k": int(cfg["split_k"])}
