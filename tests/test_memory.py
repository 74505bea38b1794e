"""Memory: buffer assignment, live ranges and totals, checked against what XLA and JAX say
of the same compile (``sample_dumps/memory_analysis.json``, written by
``make_samples.py --memory`` from ``compiled.memory_analysis()``)."""

from __future__ import annotations

import json
import os

import pytest

from compiler_bridge.dumps import open_dump
from compiler_bridge.memory import memory_totals, module_memory
from conftest import SAMPLES, sample

with open(os.path.join(SAMPLES, "memory_analysis.json")) as f:
    RECORDED = json.load(f)

WITH_LIVE_RANGE = ["mlp_train", "transformer", "scan_while", "cond_switch"]


def _memory(name: str):
    d = open_dump(sample(name))
    return d, module_memory(d, d.main)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_totals_equal_memory_analysis_of_the_same_compile(name):
    want = RECORDED[name]["memory_analysis"]
    assert RECORDED[name]["hlo_vs_committed"]       # recorded only for the same HLO
    d = open_dump(sample(name))
    t = memory_totals(d, RECORDED[name]["module"])
    assert t.argument_bytes == want["argument_size_in_bytes"]
    assert t.output_bytes == want["output_size_in_bytes"]
    assert t.temp_bytes == want["temp_size_in_bytes"]
    assert t.alias_bytes == want["alias_size_in_bytes"]


def test_every_sample_with_a_buffer_assignment_is_recorded():
    names = sorted(n for n in os.listdir(SAMPLES)
                   if os.path.isdir(os.path.join(SAMPLES, n)) and n != "programs")
    assert sorted(RECORDED) == names


@pytest.mark.parametrize("name", [n for n in sorted(RECORDED)
                                  if "peak_memory_in_bytes" in RECORDED[n]["memory_analysis"]])
def test_cpu_peak_memory_is_arguments_outputs_and_constants(name):
    # On CPU, memory_analysis()'s peak_memory_in_bytes counts the argument, output and
    # constant allocations (its heap-simulator part is empty): the same allocations
    # read from the buffer assignment add up to it.
    want = RECORDED[name]["memory_analysis"]["peak_memory_in_bytes"]
    d = open_dump(sample(name))
    t = memory_totals(d, RECORDED[name]["module"])
    assert t.argument_bytes + t.output_bytes + t.constant_bytes == want


@pytest.mark.parametrize("name", WITH_LIVE_RANGE)
def test_curve_at_xlas_peak_equals_what_xla_lists_there(name):
    # the live-range file ends with 'Live ranges at N (peak)': each value live there and
    # its size, as XLA's HloLiveRange computed them
    _, mem = _memory(name)
    lr = mem.live_range
    assert lr is not None and lr.peak_at is not None
    assert mem.curve[lr.peak_at] == lr.peak_bytes
    live = sorted((v.value.instruction, v.value.index, v.value.size)
                  for v in mem.live_at(lr.peak_at))
    assert live == sorted(lr.peak_rows)


@pytest.mark.parametrize("name", WITH_LIVE_RANGE + ["legacy_jax0430"])
def test_every_value_is_linked_to_an_instruction(name):
    _, mem = _memory(name)
    assert mem.hlo is not None
    assert mem.unlinked == []
    assert all(mem.instruction(v.value) is not None for v in mem.lives)


@pytest.mark.parametrize("name", WITH_LIVE_RANGE)
def test_every_live_range_is_a_value_of_the_assignment(name):
    _, mem = _memory(name)
    assert mem.live_range is not None
    keyed = {(v.value.instruction, v.value.index) for v in mem.lives if v.start is not None}
    assert keyed == set(mem.live_range.ranges)


def test_legacy_dump_says_what_is_missing():
    _, mem = _memory("legacy_jax0430")
    t = mem.totals()
    assert t.peak_bytes is None and t.peak_index is None
    assert any("live-range" in m for m in t.missing)
    assert mem.curve == []
