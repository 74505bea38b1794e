"""The GPU and TPU sample dumps (``sample_dumps/make_backend_samples.py``, compiled by XLA:GPU
for H100 and XLA:TPU for v5e and v6e without the hardware): XLA's own parser (plain jaxlib,
no libtpu or CUDA needed) and HLO Lens's agree on every after-optimizations module, and
each ``xla_facts.json`` (what XLA itself said of the compiles) names modules its dump
holds. The expected values come from XLA's outputs, never from HLO Lens."""

from __future__ import annotations

import glob
import json
import os
import re
from collections import Counter

import pytest

from compiler_bridge import parse_hlo

from conftest import SAMPLES, missing, read

FACTS = "xla_facts.json"
BACKENDS = sorted(n for n in os.listdir(SAMPLES) if os.path.isfile(os.path.join(SAMPLES, n, FACTS)))


def facts(name: str) -> dict:
    with open(os.path.join(SAMPLES, name, FACTS), encoding="utf-8") as f:
        return json.load(f)


def after_optimizations(name: str) -> list[str]:
    """The main after-optimizations text of each module (not its reports), GPU files included
    (``sm_9.0a_gpu_after_optimizations.txt``)."""
    return sorted(glob.glob(os.path.join(SAMPLES, name, "module_*after_optimizations.txt")))


AFTER = [p for name in BACKENDS for p in after_optimizations(name)]
MODULES = [(name, m) for name in BACKENDS for m in facts(name)["modules"]]


def test_the_targets_of_issue_30_are_there():
    every = [facts(name) for name in BACKENDS]
    assert {"gpu_h100", "tpu_v5e", "tpu_v6e", "tpu_v5e_oom"} <= set(BACKENDS)
    assert any(f["platform"] == "cuda" and "H100" in f["device_kind"] for f in every)
    assert len({f["device_kind"] for f in every if f["platform"] == "tpu"}) >= 2
    programs = Counter(m["program"] for _, m in MODULES)
    assert all(programs[p] >= 3 for p in ("transformer", "convnet", "sharded"))
    assert sum("error" in m for _, m in MODULES) == 1


@pytest.mark.parametrize("path", AFTER, ids=lambda p: os.path.relpath(p, SAMPLES))
def test_module_parses_alike_in_xla_and_hlo_lens(path):
    try:
        from jaxlib import _hlo as hlo
    except ImportError:
        missing("jaxlib._hlo (XLA's own parser) is not importable")
    text = read(path)
    theirs = {c.name: len(list(c.instructions()))
              for c in hlo.hlo_module_from_text(text).computations()}
    ours = {c.name: len(c.instructions) for c in parse_hlo(text, path).computations}
    assert ours == theirs


@pytest.mark.parametrize("name,module", MODULES,
                         ids=[f"{n}-{m['program']}" for n, m in MODULES])
def test_facts_name_modules_of_the_dump(name, module):
    folder = os.path.join(SAMPLES, name)
    prefix = module["files"]
    assert prefix.split(".")[1] == module["module"]
    files = [f for f in os.listdir(folder) if f.startswith(prefix + ".")]
    assert any(f.endswith("before_optimizations.txt") for f in files)
    assert any(f.endswith("after_optimizations-buffer-assignment.txt") for f in files)
    if "error" in module:
        return
    assert any(f.endswith("after_optimizations.txt") for f in files)
    memory = module["memory_analysis"]
    assert memory["argument_size_in_bytes"] > 0 and "peak_memory_in_bytes" in memory
    if facts(name)["platform"] == "tpu":     # XLA:GPU has no cost analysis without a GPU
        assert module["cost_analysis"]["flops"] > 0
    else:
        assert module["cost_analysis"] is None


@pytest.mark.parametrize("name", [n for n in BACKENDS if any(
    m["program"] == "sharded" for m in facts(n)["modules"])])
def test_sharded_program_spans_every_device_and_communicates(name):
    f = facts(name)
    (module,) = [m for m in f["modules"] if m["program"] == "sharded"]
    assert module["devices"] == f["num_devices"] > 1
    (path,) = glob.glob(os.path.join(SAMPLES, name, module["files"] + ".*after_optimizations.txt"))
    assert re.search(r"\ball-reduce(-start)?\(", read(path))     # the SPMD partitioner's


def test_oom_sample_holds_xlas_error_and_buffer_assignment():
    (module,) = [m for m in facts("tpu_v5e_oom")["modules"] if "error" in m]
    assert module["error"].startswith("RESOURCE_EXHAUSTED: Ran out of memory on HBM")
    folder = os.path.join(SAMPLES, "tpu_v5e_oom")
    for report in ("buffer-assignment", "memory-usage-report"):
        (path,) = glob.glob(os.path.join(folder, f"{module['files']}.*-{report}.txt"))
        assert os.path.getsize(path) > 0
