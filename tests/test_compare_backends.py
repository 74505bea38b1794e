"""One program compiled for two backends compares module by module (issue 30: module names
as the program's). XLA:TPU's file names add ``.cl_<N>`` to the module's name
(``module_0000.jit_transformer_train_step.cl_933746096.*``); the module is named as the
program is (``xla_facts.json``'s ``module``, what the sample maker took from the file names
XLA wrote), the suffix kept as the compile's id, so a TPU compile pairs with the GPU
compile of the same programs by name."""

from __future__ import annotations

import glob
import json
import os
import re

import pytest

from compiler_bridge import compare_dumps, open_dump
from compiler_bridge.compare import pair_modules
from conftest import sample
from tests.support.cli import run


def _facts(name: str) -> list[dict]:
    with open(os.path.join(sample(name), "xla_facts.json"), encoding="utf-8") as f:
        return json.load(f)["modules"]


@pytest.mark.parametrize("name", ["tpu_v5e", "tpu_v6e", "tpu_v5e_oom", "gpu_h100"])
def test_modules_are_named_as_the_program_with_the_compile_id_apart(name):
    dump = open_dump(sample(name))
    by_id = {m.id: m for m in dump.modules}
    for entry in _facts(name):
        mid = entry["files"].split(".")[0].removeprefix("module_")
        mod = by_id[mid]
        assert mod.name == entry["module"]
        # as the program's HLO header names it (XLA's text)
        (path,) = glob.glob(os.path.join(sample(name), entry["files"] + ".before_optimizations.txt"))
        with open(path, encoding="utf-8") as f:
            assert re.match(r"HloModule (\S+?),", f.read()).group(1) == mod.name
        # the files' spelling: module_NNNN.<program>[.cl_<N>]
        assert entry["files"] == ".".join(
            p for p in (f"module_{mid}", mod.name, mod.compile_id) if p)
        assert mod.compile_id.startswith("cl_") == name.startswith("tpu")
        # the files' spelling still picks the module
        assert dump.module(entry["files"].split(".", 1)[1]) is mod


def test_a_tpu_compile_pairs_with_the_gpu_compile_of_the_same_programs():
    tpu, gpu = open_dump(sample("tpu_v5e")), open_dump(sample("gpu_h100"))
    want = {(a["files"].split(".")[0][7:], b["files"].split(".")[0][7:], a["module"])
            for a in _facts("tpu_v5e") for b in _facts("gpu_h100")
            if a["module"] == b["module"]}
    assert len(want) == 3
    pairing = pair_modules(tpu, gpu)
    assert {(p.a, p.b, p.name) for p in pairing.pairs} == want
    assert all(p.how == "name" for p in pairing.pairs)
    assert not pairing.only_a and not pairing.only_b
    result = compare_dumps(tpu, gpu)
    assert result.pairing.pairs == pairing.pairs


def test_stats_and_kernels_name_the_program_and_the_compile():
    p = run("stats", sample("tpu_v5e"), "--json")
    k = run("kernels", sample("tpu_v5e"), "--json")
    assert p.returncode == 0 and k.returncode == 0, p.stderr + k.stderr
    facts = {e["files"].split(".")[0][7:]: e for e in _facts("tpu_v5e")}
    for listed in (json.loads(p.stdout)["modules"], json.loads(k.stdout)["modules"]):
        assert {m["id"]: (m["name"], m["compile_id"]) for m in listed} == {
            mid: (e["module"], e["files"].rsplit(".", 1)[1]) for mid, e in facts.items()}
