"""The collectives of a module, checked against XLA's own parse of the peer corpus
(``golden.jsonl.gz``: per instruction XLA's opcode), the MaxText Llama3-8B SPMD module among
them."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter

import pytest

from compiler_bridge import parse_hlo
from compiler_bridge.spmd import SYNC, collective_of, collectives
from conftest import PEER, missing, peer_file

GOLDEN = os.path.join(PEER, "golden.jsonl.gz")


def _xla_opcodes() -> dict[str, Counter]:
    """File -> XLA's count of each opcode, for the files XLA's parser accepts."""
    if not os.path.exists(GOLDEN):
        missing(f"{GOLDEN} is not available")
    out = {}
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as f:
        for line in f:
            if '"ok": true' not in line[:400] or not any(op in line for op in SYNC):
                continue
            row = json.loads(line)
            out[row["file"]] = Counter(i[1] for c in row["computations"]
                                       for i in c["instructions"])
    return out


def test_every_collective_xla_parses_is_found_once():
    """Per module: as many synchronous collectives of each kind as XLA's parse has of that
    opcode, as many async pairs as XLA's ``<kind>-start`` and ``<kind>-done`` (XLA's own
    start/done opcodes and ``async-start`` wrappers alike: XLA names both after the op).
    The op an ``async-start`` wraps (its ``calls=`` computation's root: one per wrapper, of
    every kind but the three with opcodes of their own) is that pair, not one more sync
    collective."""
    xla = _xla_opcodes()
    assert len(xla) >= 20
    native = ("all-reduce", "all-gather", "collective-permute")
    for name, counts in sorted(xla.items()):
        with open(os.path.join(PEER, name), encoding="utf-8") as f:
            found = collectives(parse_hlo(f.read(), name))
        sync = Counter(c.kind for c in found if not c.is_async)
        pairs = Counter(c.kind for c in found if c.is_async)
        for kind in SYNC:
            wrapped = 0 if kind in native else counts[f"{kind}-start"]
            assert sync[kind] == counts[kind] - wrapped, (name, kind)
            assert pairs[kind] == counts[f"{kind}-start"] == counts[f"{kind}-done"], (name, kind)


def test_an_async_pair_is_one_collective_from_start_to_done():
    module = parse_hlo(open(peer_file("0259_xla2024_collective_ops")).read())
    found = collectives(module)
    for c in found:
        if c.is_async:
            assert c.done is not None
            assert c.instruction.opcode == f"{c.kind}-start"
            assert c.done.opcode == f"{c.kind}-done"
    dones = [i for i in module.instructions() if (collective_of(i.opcode) or ("", ""))[1]
             == "done"]
    assert sorted(c.done.name for c in found if c.done is not None) == sorted(
        i.name for i in dones)


def test_the_llama3_spmd_module_holds_xla_s_collectives():
    """MaxText Llama3-8B after partitioning over 4 devices: 50 all-reduce, 18 all-gather and
    11 collective-permute in XLA's own parse."""
    name = os.path.basename(peer_file("0003_xla2026_hlo_llama3_8b"))
    xla = _xla_opcodes()[name]
    module = parse_hlo(open(os.path.join(PEER, name)).read())
    kinds = Counter(c.kind for c in collectives(module))
    assert kinds == Counter({k: xla[k] for k in SYNC if xla[k]})
    groups = {c.instruction.replica_groups.raw for c in collectives(module)
              if c.instruction.replica_groups is not None}
    assert groups      # every one names its groups


@pytest.mark.parametrize("opcode,expected", [
    ("all-gather", ("all-gather", "")), ("all-gather-start", ("all-gather", "start")),
    ("reduce-scatter-update", ("reduce-scatter", "update")), ("copy-start", None),
    ("partition-id", None)])
def test_collective_of_opcode(opcode, expected):
    assert collective_of(opcode) == expected
