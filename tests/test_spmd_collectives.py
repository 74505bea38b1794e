"""Collectives of sharded programs against XLA: their groups (explicit, iota and mesh forms)
equal to the groups XLA's own parse prints, their result bytes to the sizes of XLA's shapes,
their counts to XLA's opcode counts (the ``spmd_train`` sample's facts, recorded at
generation time, and the MaxText Llama3-8B module of the peer corpus), and a cause named for
each collective the partitioner inserted."""

from __future__ import annotations

import glob
import json
import os
import re
from collections import Counter

import pytest

from compiler_bridge import open_dump, parse_hlo
from compiler_bridge.spmd import (by_source, collective_of, collective_rows, collectives,
                                  mesh_groups,
                                  module_collectives, op_names, partitioner_input)
from conftest import SAMPLES, missing, peer_file, read, sample_file
from tests.support.cli import run

SPMD = os.path.join(SAMPLES, "spmd_train")
PER_PASS = os.path.join(SAMPLES, "spmd_train_per_pass.tar.xz")
LLAMA = "0003_xla2026_hlo_llama3_8b"
BITS = {"f32": 32, "bf16": 16, "f16": 16, "s32": 32, "u32": 32, "f64": 64, "pred": 8, "s8": 8}


def _xla():
    try:
        from jax._src.lib import xla_client as xc
        from jaxlib import _hlo
    except ImportError:
        missing("jaxlib (XLA's parser) is not importable")
    return xc, _hlo


def _xla_groups(text: str) -> set[tuple[int, ...]]:
    """The groups in XLA's print of one instruction: explicit lists read as nested lists,
    iota and mesh forms expanded by jaxlib's HloSharding (a sharding with that tile
    assignment; a mesh form: the one-dimensional sharding split by the grouped axes)."""
    xc, _ = _xla()
    import numpy as np
    m = re.search(r"source_target_pairs=(\{[^ ]*\}),?", text)
    if m:
        return {tuple(p) for p in json.loads(m.group(1).replace("{", "[").replace("}", "]"))}
    m = re.search(r"replica_groups=(mesh\[[^\]]*\](?:, device_ids=\([^ ]*\))?) (\{[^}]*\})",
                  text)
    if m:
        h = xc.HloSharding.from_string("{" + m.group(1) + " [" + m.group(2) + "]}")
        h = h.v3_to_v2_sharding()
        dims = h.tile_assignment_dimensions()
        arr = np.array(h.tile_assignment_devices()).reshape(dims[0], -1)
        return {tuple(int(x) for x in arr[:, r]) for r in range(arr.shape[1])}
    m = re.search(r"replica_groups=(\[[\d,]+\]<=\[[\d,]+\](?:T\([\d,]+\))?)", text)
    if m:
        h = xc.HloSharding.from_string("{devices=" + m.group(1) + "}")
        dims = h.tile_assignment_dimensions()
        arr = np.array(h.tile_assignment_devices()).reshape(dims)
        return {tuple(int(x) for x in row) for row in arr}
    m = re.search(r"replica_groups=(\{[^ ]*\}),?", text)
    return {tuple(g) for g in json.loads(m.group(1).replace("{", "[").replace("}", "]"))}


def _xla_result_bytes(text: str) -> int:
    """The size of the result shape XLA prints (a tuple: its leaves)."""
    shape = re.match(r"(?:ROOT )?%?[\w.\-]+ = (\(.*?\)|\S+) ", text).group(1)
    total = 0
    for etype, dims in re.findall(r"([a-z]+\d*)\[([\d,]*)\]", shape):
        n = 1
        for d in dims.split(","):
            n *= int(d) if d else 1
        total += n * BITS[etype] // 8
    return total


def _facts() -> dict:
    with open(os.path.join(SPMD, "spmd_facts.json"), encoding="utf-8") as f:
        return json.load(f)


def test_the_sample_s_collectives_are_xla_s():
    """Every collective XLA's parse of the after-optimizations text holds, once, with XLA's
    groups and result size; every kind the partitioner inserts for data + model parallelism
    is there."""
    facts = _facts()
    module = parse_hlo(read(sample_file("spmd_train", "*cpu_after_optimizations.txt")))
    rows = {r["name"]: r for r in collective_rows(module)}
    theirs = {c["name"]: c for c in facts["collectives"]}
    assert set(rows) == set(theirs)
    dones = Counter(f"{r['kind']}-done" for r in rows.values() if r["async"])
    assert Counter(r["opcode"] for r in rows.values()) + dones == Counter(
        {op: n for op, n in facts["opcodes"].items() if collective_of(op)})
    assert {"all-gather", "all-reduce", "all-to-all", "collective-permute"} <= {
        r["kind"] for r in rows.values()}
    forms = Counter()
    for name, c in theirs.items():
        text = c["xla_text"]
        forms["mesh" if "replica_groups=mesh" in text else "iota" if "<=[" in text else
              "pairs" if "source_target_pairs" in text else "list"] += 1
        assert {tuple(g) for g in rows[name]["groups"]} == _xla_groups(text), name
        assert rows[name]["result_bytes"] == _xla_result_bytes(text), name
        assert rows[name]["group_size"] == (2 if "source_target_pairs" in text else
                                            len(next(iter(_xla_groups(text)))))
    assert set(forms) == {"mesh", "iota", "pairs", "list"}


def _sharded_modules() -> list[str]:
    return [LLAMA, os.path.join("tpu_v5e", "*sharded*after_optimizations.txt"),
            os.path.join("gpu_h100", "*sharded*after_optimizations.txt")]


@pytest.mark.parametrize("which", _sharded_modules())
def test_collectives_have_xla_s_groups_and_sizes(which):
    """MaxText Llama3-8B over 4 devices, the sharded MLP compiled for TPU v5e and for 4 H100s
    (async pairs): each collective XLA's parse holds is found once, with XLA's groups and
    its result's size (a pair's: the done's)."""
    _, hlo = _xla()
    if which == LLAMA:
        path = peer_file(LLAMA)
    else:
        [path] = glob.glob(os.path.join(SAMPLES, which))
    text = read(path)
    module = parse_hlo(text, path)
    rows = {r["name"]: r for r in collective_rows(module)}
    xla, opcodes = {}, Counter()
    for comp in hlo.hlo_module_from_text(text).computations():
        for inst in comp.instructions():
            line = inst.to_string()
            m = re.search(r"= .*? ((?:all-reduce|all-gather|collective-permute|all-to-all|"
                          r"reduce-scatter)(?:-start|-done)?)\(", line)
            if m:
                xla[inst.name] = line
                opcodes[m.group(1)] += 1
    assert Counter(r["opcode"] for r in rows.values()) + Counter(
        f"{r['kind']}-done" for r in rows.values() if r["async"]) == opcodes
    assert len(rows) == (79 if which == LLAMA else 3)
    for name, row in rows.items():
        assert {tuple(g) for g in row["groups"]} == _xla_groups(xla[name]), name
        assert row["result_bytes"] == _xla_result_bytes(xla[row["done"] or name]), name


def test_sent_bytes_follow_the_stated_formulas():
    """README's formulas, B the result on one device and n the group size: all-reduce
    2(n-1)/n B, all-gather and all-to-all (n-1)/n B, collective-permute B."""
    module = parse_hlo(read(sample_file("spmd_train", "*cpu_after_optimizations.txt")))
    rows = collective_rows(module)
    for r in rows:
        b, n = r["result_bytes"], r["group_size"]
        expected = {"all-reduce": 2 * (n - 1) * b // n, "all-gather": (n - 1) * b // n,
                    "all-to-all": (n - 1) * b // n, "collective-permute": b}[r["kind"]]
        if r["kind"] == "collective-permute" and all(a == t for a, t in r["groups"]):
            expected = 0
        assert r["sent_bytes"] == expected == r["received_bytes"], r["name"]
    gather = next(r for r in rows if r["name"] == "all-gather.4")    # f32[16,16], 2 devices
    assert (gather["result_bytes"], gather["group_size"], gather["sent_bytes"]) == (1024, 2, 512)


def test_each_collective_the_partitioner_inserted_names_its_cause():
    """The partitioner's input (the step before spmd-partitioning) holds no collective: the
    partitioner inserted every one, and each names the instruction it serves — one the
    collective's op_name names —, with that instruction's sharding and its operand's."""
    dump = open_dump(PER_PASS)
    [module] = [m for m in dump.modules if m.name == "jit_train_step"]
    before, step = partitioner_input(dump, module)
    assert "before_spmd-partitioning" in step
    assert not [i for i in before.instructions()
                if i.opcode.startswith(("all-", "collective-", "reduce-scatter"))]
    report = module_collectives(dump, module)
    assert len(report["collectives"]) == 19
    disagreed = 0
    for row in report["collectives"]:
        cause = row["cause"]
        assert cause is not None, row["name"]
        inst = next(i for i in before.instructions() if i.name == cause["instruction"])
        assert inst.op_name in op_names(row["op_name"]), row["name"]
        operand = next(o for o in inst.operands if o.name == cause["operand"])
        assert cause["consumer_sharding"] in ((inst.attributes.get("sharding") or "")
                                              .replace(" ", ""), "")
        assert operand is not None
        disagreed += cause["producer_sharding"] != cause["consumer_sharding"]
    assert disagreed >= 17     # the token shift's halo exchange: one sharding on both sides
    by_line = by_source(report["collectives"])
    assert sum(g["count"] for g in by_line) == 19
    assert all(g["source"].endswith(("spmd_train.py:42", "spmd_train.py:43", "spmd_train.py:45",
                                     "spmd_train.py:46", "spmd_train.py:47")) for g in by_line)


def test_a_user_written_collective_has_no_cause():
    """A module whose collectives were there before partitioning (XLA's own test module):
    the partitioner inserted none of them."""
    module = parse_hlo(read(peer_file("0259_xla2024_collective_ops")))
    found = collectives(module)
    rows = collective_rows(module, module)
    assert len(rows) == len(found) and all(r["cause"] is None for r in rows)


def test_mesh_groups_of_a_sub_axis():
    """``{'axis_0':(2)2}`` on mesh [4,2] with device ids [2,2,2]T(2,1,0), as XLA reads it."""
    mesh, groups = mesh_groups("mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(2,1,0)) "
                               "{'axis_0':(2)2}")
    assert mesh.devices == (0, 4, 2, 6, 1, 5, 3, 7)
    assert set(groups) == _xla_groups("%x = f32[] all-reduce(), replica_groups=mesh['axis_0'=4,"
                                      "'axis_1'=2], device_ids=([2,2,2]T(2,1,0)) "
                                      "{'axis_0':(2)2}, to_apply=add")
    with pytest.raises(ValueError, match="expected mesh"):
        mesh_groups("mesh['x'=2]")


def test_collectives_command_json_has_the_issue_s_fields():
    proc = run("collectives", PER_PASS, "--json")
    assert proc.returncode == 0, proc.stderr
    [module] = json.loads(proc.stdout)["modules"]
    assert module["name"] == "jit_train_step" and module["devices"] == 8
    fields = {"name", "opcode", "async", "groups", "group_size", "result_bytes", "sent_bytes",
              "op_name", "source", "cause"}
    for c in module["collectives"]:
        assert fields <= set(c)
        assert set(c["cause"]) >= {"instruction", "producer_sharding", "consumer_sharding"}
    proc = run("collectives", peer_file(LLAMA))
    assert proc.returncode == 0 and "79 collectives on 4 devices" in proc.stdout


@pytest.mark.parametrize("name", ["tpu_v5e", "tpu_v6e", "gpu_h100"])
def test_topology_compiles_name_a_cause_for_each_collective(name):
    """The sharded MLP compiled for TPU and GPU: before optimizations there is no
    collective, so the partitioner inserted each one, and each names its cause and the
    user's source line — the one XLA:GPU's combiner stripped of its metadata too, known by
    its channel_id in ``after_spmd_partitioner.txt``."""
    dump = open_dump(os.path.join(SAMPLES, name))
    [module] = [m for m in dump.modules if "sharded" in m.name]
    before = dump.stage(module, "before_optimizations")
    assert not [i for i in before.instructions() if collective_of(i.opcode)]
    report = module_collectives(dump, module)
    assert report["devices"] == 4 and len(report["collectives"]) == 3
    for row in report["collectives"]:
        assert row["cause"] is not None, row["name"]
        assert row["source"].rsplit("/", 1)[-1].startswith("backend_programs.py:"), row
        assert row["cause"]["producer_sharding"] != row["cause"]["consumer_sharding"]


def test_without_per_pass_files_causes_come_from_before_optimizations():
    """The sample's folder keeps no per-pass files: the before-optimizations stage stands
    in for the partitioner's input, its annotated shardings the nearest ones — the token
    shift's collective-permute included, whose op is inside a nested jit there (op_names
    relative to the call)."""
    dump = open_dump(SPMD)
    [module] = dump.modules
    report = module_collectives(dump, module)
    assert report["partitioner_input"].endswith("before_optimizations.txt")
    assert len(report["collectives"]) == 19
    assert all(r["cause"] is not None for r in report["collectives"])
    shift = next(r for r in report["collectives"] if r["name"] == "collective-permute")
    assert shift["cause"]["instruction"].startswith("concatenate")
