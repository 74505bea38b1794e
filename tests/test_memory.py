"""Memory: buffer assignment, live ranges and totals, checked against what XLA and JAX say
of the same compile (``sample_dumps/memory_analysis.json``, written by
``make_samples.py --memory`` from ``compiled.memory_analysis()``)."""

from __future__ import annotations

import glob
import json
import os

import pytest

from compiler_bridge.dumps import open_dump
from compiler_bridge.memory import memory_totals, module_memory
from conftest import SAMPLES, sample
from tests.support.fresh import compile_program

with open(os.path.join(SAMPLES, "memory_analysis.json")) as f:
    RECORDED = json.load(f)

# legacy_jax0430: JAX 0.4.30 writes the live ranges at the end of the buffer assignment
WITH_LIVE_RANGE = ["mlp_train", "transformer", "scan_while", "cond_switch", "legacy_jax0430"]


def _recorded(d, name: str):
    """The module memory_analysis.json was recorded of: the first compile of its name (a
    flags sample compiles the step twice, 0000 and 0002; a name two modules share is no
    module for ``Dump.module``)."""
    return next(m for m in d.modules if m.name == RECORDED[name]["module"])


def _memory(name: str):
    d = open_dump(sample(name))
    return d, module_memory(d, d.main)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_totals_equal_memory_analysis_of_the_same_compile(name):
    want = RECORDED[name]["memory_analysis"]
    assert RECORDED[name]["hlo_vs_committed"]       # recorded only for the same HLO
    d = open_dump(sample(name))
    t = memory_totals(d, _recorded(d, name))
    assert t.argument_bytes == want["argument_size_in_bytes"]
    assert t.output_bytes == want["output_size_in_bytes"]
    assert t.temp_bytes == want["temp_size_in_bytes"]
    assert t.alias_bytes == want["alias_size_in_bytes"]


def test_every_sample_with_a_buffer_assignment_is_recorded():
    # the TF samples' clusters are compiled inside TensorFlow, which has no
    # memory_analysis() (tf_keras keeps its buffer assignments and memory-usage reports
    # for the format TF 2.21's XLA writes: test_tf_keras checks them); the GPU and TPU
    # samples carry XLA's memory_analysis() in their own xla_facts.json
    names = sorted(n for n in os.listdir(SAMPLES)
                   if os.path.isdir(os.path.join(SAMPLES, n)) and n != "programs"
                   and not n.startswith(("tf_", "gpu_", "tpu_")))
    assert sorted(RECORDED) == names


@pytest.mark.parametrize("name", [n for n in sorted(RECORDED)
                                  if "peak_memory_in_bytes" in RECORDED[n]["memory_analysis"]])
def test_cpu_peak_memory_is_arguments_outputs_and_constants(name):
    # On CPU, memory_analysis()'s peak_memory_in_bytes counts the argument, output and
    # constant allocations (its heap-simulator part is empty): the same allocations
    # read from the buffer assignment add up to it.
    want = RECORDED[name]["memory_analysis"]["peak_memory_in_bytes"]
    d = open_dump(sample(name))
    t = memory_totals(d, _recorded(d, name))
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


@pytest.mark.parametrize("name", WITH_LIVE_RANGE)
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


def test_legacy_dump_reads_the_live_ranges_inside_the_assignment_file():
    _, mem = _memory("legacy_jax0430")
    assert mem.live_range is not None and mem.live_range.source.endswith(
        "cpu_after_optimizations-buffer-assignment.txt")
    assert mem.values_file is not None and len(mem.values_file.values) == len(mem.lives)
    assert mem.missing == ()
    assert mem.totals().live_peak_bytes == max(mem.curve)


def test_without_live_ranges_or_values_the_peak_is_missing_and_said(tmp_path):
    folder = _copy(tmp_path, "legacy_jax0430")
    f = _one(folder, "*-buffer-assignment.txt")
    text = f.read_text()
    f.write_text(text[: text.index("\nTotal bytes used:") + 1])
    d = open_dump(folder)
    t = memory_totals(d, d.main)
    assert t.live_peak_bytes is None and t.live_peak_index is None
    # XLA:CPU's peak is the whole-run buffers: it needs no live ranges
    assert t.peak_bytes == t.argument_bytes + t.output_bytes + t.constant_bytes
    assert t.temp_bytes == RECORDED["legacy_jax0430"]["memory_analysis"]["temp_size_in_bytes"]
    assert any("no live-range file" in m and "no peak" in m for m in t.missing)


# -- the live-bytes curve

def test_curve_is_the_sum_of_the_values_live_at_each_point_on_every_sample():
    for name in WITH_LIVE_RANGE:
        _, mem = _memory(name)
        assert mem.live_range is not None
        assert len(mem.curve) == mem.live_range.end + 1
        for t, got in enumerate(mem.curve):
            assert got == sum(v.value.size for v in mem.live_at(t)), (name, t)
        peak = mem.totals()
        assert peak.live_peak_bytes == max(mem.curve)
        assert peak.live_peak_instruction == mem.live_range.sequence[peak.live_peak_index]


def _synthetic(draw_values, end):
    from compiler_bridge.memory import Allocation, BufferAssignment, LiveRange, LogicalValue
    from compiler_bridge.memory import build_memory
    allocs: dict[int, Allocation] = {}
    ranges = {}
    for i, (alloc, size, start, length, tags) in enumerate(draw_values):
        a = allocs.setdefault(alloc, Allocation(alloc, 0, tags))
        a.size = max(a.size, size)
        a.values.append(LogicalValue(i, f"v{i}", (), False, False, 0, size, 0, "f32[]",
                                     alloc, 0))
        if start is not None:
            ranges[(f"v{i}", ())] = (min(start, end), min(start + length, end))
    lr = LiveRange("<synthetic>", end, [f"v{i}" for i in range(end)], ranges)
    return build_memory("m", BufferAssignment("<synthetic>", list(allocs.values())), lr, None)


def test_curve_property():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    value = st.tuples(st.integers(0, 5), st.integers(0, 1 << 20),
                      st.one_of(st.none(), st.integers(0, 60)), st.integers(0, 60),
                      st.sampled_from([("maybe-live-out",), ("preallocated-temp",),
                                       ("constant",), ("thread-local",), ()]))

    @settings(max_examples=200, deadline=None)
    @given(st.lists(value, max_size=40), st.integers(1, 60))
    def check(values, end):
        mem = _synthetic(values, end)
        for t in range(end + 1):
            live = [v for v in mem.lives if v.start is not None and v.start <= t <= v.end]
            assert mem.curve[t] == sum(v.value.size for v in live)
            assert mem.curve[t] == sum(c[t] for c in mem.curve_by_kind.values())
        if mem.curve and max(mem.curve) > 0:
            assert mem.totals().live_peak_bytes == max(mem.curve)

    check()


# -- bad input

def _copy(tmp_path, name: str):
    import shutil
    dest = tmp_path / name
    shutil.copytree(sample(name), dest, ignore=shutil.ignore_patterns("trace"))
    return dest


def _one(folder, pattern: str):
    hits = sorted(folder.glob(pattern))
    assert len(hits) == 1, hits
    return hits[0]


def test_truncated_buffer_assignment_names_file_and_line(tmp_path):
    from compiler_bridge.memory import MemoryFileError
    folder = _copy(tmp_path, "scan_while")
    f = _one(folder, "*-buffer-assignment.txt")
    text = f.read_text()
    f.write_text(text[: text.index("(size=8192")])        # cut inside a value line
    d = open_dump(folder)
    with pytest.raises(MemoryFileError) as e:
        module_memory(d, d.main)
    line = text[: text.index("(size=8192")].count("\n") + 1
    assert e.value.source == f.name and e.value.line == line
    assert f"{f.name}:{line}: the file ends in the middle of a line" in str(e.value)
    assert [x.file for x in d.errors] == [f.name]
    # the rest of the dump still works
    assert d.stage(d.main).instruction_count > 0


def test_foreign_file_as_buffer_assignment(tmp_path):
    from compiler_bridge.memory import MemoryFileError
    folder = _copy(tmp_path, "scan_while")
    f = _one(folder, "*-buffer-assignment.txt")
    f.write_text(_one(folder, "*cpu_after_optimizations.txt").read_text())
    d = open_dump(folder)
    with pytest.raises(MemoryFileError) as e:
        memory_totals(d, d.main)
    assert str(e.value).startswith(f"{f.name}:1: expected 'BufferAssignment:' on the first "
                                   "line: not an XLA buffer-assignment file")


def test_bad_value_line_names_the_line(tmp_path):
    from compiler_bridge.memory import MemoryFileError, parse_buffer_assignment
    text = open(sample_file_path("scan_while", "*-buffer-assignment.txt")).read()
    lines = text.split("\n")
    lines[2] = lines[2].replace("(size=4096,offset=0)", "(size=4096)")
    with pytest.raises(MemoryFileError) as e:
        parse_buffer_assignment("\n".join(lines), "ba.txt")
    assert e.value.line == 3 and "expected ' value: <id name @color> (size=N,offset=N)" \
        in e.value.message


def test_broken_live_range_keeps_the_allocations(tmp_path):
    folder = _copy(tmp_path, "scan_while")
    f = _one(folder, "*-live-range.txt")
    lines = f.read_text().split("\n")
    lines[5] = "    3 xs.1"                                    # was '    3:xs.1'
    f.write_text("\n".join(lines))
    d = open_dump(folder)
    mem = module_memory(d, d.main)
    t = mem.totals()
    assert t.temp_bytes == RECORDED["scan_while"]["memory_analysis"]["temp_size_in_bytes"]
    assert t.live_peak_bytes is None
    # XLA:CPU's peak needs no live ranges
    assert t.peak_bytes == RECORDED["scan_while"]["memory_analysis"]["peak_memory_in_bytes"]
    assert any("live-range file cannot be read" in m and "line 6" in m for m in t.missing)
    assert d.errors[0].file == f.name
    assert f"{f.name}:6: expected '3:<instruction>' in the InstructionSequence" \
        in d.errors[0].error


def test_module_without_buffer_assignment_says_so(tmp_path):
    from compiler_bridge.memory import MemoryFileError
    folder = _copy(tmp_path, "scan_while")
    _one(folder, "*-buffer-assignment.txt").unlink()
    d = open_dump(folder)
    with pytest.raises(MemoryFileError, match="has no buffer-assignment file") as e:
        memory_totals(d, d.main)
    assert str(e.value).startswith("module ")    # no file to name: no '<text>:' before it


def sample_file_path(name: str, pattern: str) -> str:
    import glob
    hits = sorted(glob.glob(os.path.join(sample(name), pattern)))
    assert len(hits) == 1
    return hits[0]


# -- CLI

def _cli(*args: str):
    import subprocess
    import sys
    from conftest import ROOT
    return subprocess.run([sys.executable, "-m", "compiler_bridge", "memory", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_cli_json_has_exactly_the_issue_fields():
    p = _cli(sample("scan_while"), "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert list(data) == ["id", "module", "target", "argument_bytes", "output_bytes", "temp_bytes",
                          "alias_bytes", "peak_bytes", "peak_definition",
                          "known_differences", "peak_at", "whole_run_bytes", "heap_peak_bytes",
                          "host_argument_bytes", "host_output_bytes", "host_alias_bytes",
                          "host_temp_bytes", "live_peak_bytes", "live_peak_at", "spaces", "devices", "allocations",
                          "live_at_peak", "oom"]
    want = RECORDED["scan_while"]["memory_analysis"]
    assert data["module"] == "jit_step"
    assert data["temp_bytes"] == want["temp_size_in_bytes"]
    assert data["argument_bytes"] == want["argument_size_in_bytes"]
    assert data["peak_bytes"] == want["peak_memory_in_bytes"]
    assert data["peak_at"] is None                # XLA:CPU's peak holds over the whole run
    assert data["known_differences"] == {}        # XLA:CPU's figures: none measured
    assert data["spaces"] == {"RAM": sum(a["size"] for a in data["allocations"])}
    assert data["oom"] is None
    assert set(data["live_peak_at"]) == {"index", "instruction"}
    assert {tuple(a) for a in data["allocations"]} == {("index", "size", "kind", "color",
                                                        "values")}
    assert all(set(v) == {"instruction", "shape", "size", "offset"}
               for a in data["allocations"] for v in a["values"])
    assert sum(v["size"] for v in data["live_at_peak"]) == data["live_peak_bytes"]
    assert all(set(v) == {"instruction", "size"} for v in data["live_at_peak"])


def test_cli_text_and_module_choice():
    p = _cli(sample("legacy_jax0430"), "--module", "jit_train_step")
    assert p.returncode == 0, p.stderr
    assert "temp             35,584" in p.stdout
    mem = _memory("legacy_jax0430")[1]
    assert (f"live-bytes peak at {mem.peak_index} ({mem.sequence[mem.peak_index]}); "
            "live there:") in p.stdout
    p = _cli(sample("legacy_jax0430"), "--module", "nope")
    assert p.returncode == 2 and "no module 'nope'" in p.stderr


def test_cli_bad_file_exits_1_with_file_and_line(tmp_path):
    folder = _copy(tmp_path, "cond_switch")
    f = _one(folder, "*-buffer-assignment.txt")
    f.write_text("BufferAssignment:\nallocation zero: size 4:\n")
    p = _cli(str(folder))
    assert p.returncode == 1
    assert f"{f.name}:2: expected 'allocation N: size N, <tags>:'" in p.stderr
    assert str(tmp_path) not in p.stderr


def test_peak_grouped_by_scope_adds_up_and_arguments_are_one_scope():
    from viz import memory as MV
    for name in WITH_LIVE_RANGE:
        _, mem = _memory(name)
        rows = MV.live_rows(mem, mem.peak_index)
        scopes = MV.scope_rows(rows, 2)
        assert sum(s.bytes for s in scopes) == mem.curve[mem.peak_index]
        args = [s for s in scopes if s.scope == "(arguments)"]
        live_args = sum(v.value.size for v in mem.live_at(mem.peak_index) if v.kind == "parameter"
                        and mem.instruction(v.value).computation.is_entry)
        assert (args[0].bytes if args else 0) == live_args
        assert [s.bytes for s in scopes] == sorted((s.bytes for s in scopes), reverse=True)


def test_overlay_values_are_bytes_defined_and_live():
    from viz import memory as MV
    _, mem = _memory("transformer")
    defined = MV.memory_overlay(mem, "defined")
    for name, size in defined.values.items():
        assert size == sum(v.value.size for v in mem.values_of(name))
    live = MV.memory_overlay(mem, "live")
    for i, name in enumerate(mem.sequence):
        if mem.curve[i]:
            assert live.values[name] == mem.curve[i]
    assert all("fillcolor" in d and "▤" in d["label"] for d in live.decorations.values())
    # the sidebar's scale: each swatch's label stays on one line ('12.9 KiB' was cut into
    # '12.9' and 'KiB' on two rows of the narrow sidebar)
    import re
    swatches = re.findall(r'<span style="([^"]*)">([^<]*)</span>', MV.overlay_legend_html(live))
    assert len(swatches) == len(live.stops) > 1
    assert all("white-space:nowrap" in style for style, _ in swatches), swatches


DONATING = """
def step(w, x):
    return w - 0.1 * jnp.tanh(x @ w), (x @ w).sum()

f = jax.jit(step, donate_argnums=0)
ARGS = (np.ones((64, 64), np.float32),) * 2
"""


def test_alias_bytes_of_a_donated_argument(tmp_path):
    # a program that donates its first argument: XLA aliases it with an output; the
    # totals read from the dump equal memory_analysis() of that very compile
    dump, want = compile_program(tmp_path, DONATING)
    d = open_dump(dump)
    t = memory_totals(d, "jit_step")
    assert want["alias_size_in_bytes"] > 0
    assert (t.argument_bytes, t.output_bytes, t.alias_bytes, t.temp_bytes) == (
        want["argument_size_in_bytes"], want["output_size_in_bytes"],
        want["alias_size_in_bytes"], want["temp_size_in_bytes"])


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_the_three_files_agree_on_the_bytes(name):
    # the buffer assignment's allocations, the memory-usage report's 'Total bytes' and the
    # values file's 'Total bytes used' (JAX 0.4.30: at the end of the assignment)
    _, mem = _memory(name)
    total = mem.totals().total_bytes
    if mem.report is not None:
        assert mem.report.total_bytes == total
    used = mem.values_file.total_bytes_used if mem.values_file else \
        mem.assignment.total_bytes_used
    # the comparison samples are lean: no values file (sample_dumps/README.md)
    lean = not glob.glob(os.path.join(sample(name), "*buffer-assignment-values.txt"))
    if lean and name != "legacy_jax0430":
        assert used is None and mem.report is not None
        return
    assert used == total
    assert mem.values_file is not None
    if name != "legacy_jax0430":
        assert mem.report is not None


@pytest.mark.parametrize("name", WITH_LIVE_RANGE)
def test_values_file_names_the_same_values_and_instructions(name):
    _, mem = _memory(name)
    assert mem.values_file is not None
    infos = mem.values_file.values
    for life in mem.lives:
        v = life.value
        info = infos[v.id]
        assert (info.instruction, info.index) == (v.instruction, v.index)
        # 'from instruction: %name = ...' is the instruction the value is linked to
        assert info.defined_by.split(" = ", 1)[0].lstrip("%") == mem.instruction(v).name
        for user, _ in info.uses:
            assert mem.hlo.find(user) is not None


def test_broken_usage_report_is_reported_and_the_rest_works(tmp_path):
    folder = _copy(tmp_path, "transformer")
    f = _one(folder, "*-memory-usage-report.txt")
    lines = f.read_text().split("\n")
    lines[4] = "    64.0KiB( 10%);    64.0KiB;   zero;  7; f32[64]"
    f.write_text("\n".join(lines))
    d = open_dump(folder)
    mem = module_memory(d, d.main)
    assert mem.report is None and mem.values_file is not None
    assert mem.totals().temp_bytes == RECORDED["transformer"]["memory_analysis"][
        "temp_size_in_bytes"]
    assert any("memory-usage report cannot be read" in m and "line 5" in m
               for m in mem.missing)
    assert f"{f.name}:5: expected 'cumulative (N%); size; offset; values; shapes'" \
        in d.errors[0].error


# -- live ranges derived from the schedule (dumps without a live-range file)

def _derived_equals_xla(mem) -> None:
    from compiler_bridge.memory import derive_live_range
    assert mem.live_range is not None and mem.values_file is not None and mem.hlo is not None
    got = derive_live_range(mem.hlo, mem.assignment, mem.values_file, "derived")
    assert got.sequence == mem.live_range.sequence
    assert got.end == mem.live_range.end
    assert got.ranges == mem.live_range.ranges


@pytest.mark.parametrize("name", WITH_LIVE_RANGE)
def test_derived_live_ranges_equal_xlas_on_every_sample(name):
    _derived_equals_xla(_memory(name)[1])


@pytest.mark.parametrize("name", ["scale_1layers_passes", "scale_20k",
                                  "scale_20k_no_fusion_emitters"])
def test_derived_live_ranges_equal_xlas_on_the_scale_dumps(name):
    from conftest import ROOT
    path = os.path.join(ROOT, "generated", name)
    if not os.path.isdir(path):
        pytest.skip(f"generated/{name} is absent (bench/corpus/make_scale.py makes it)")
    d = open_dump(path)
    _derived_equals_xla(module_memory(d, d.main))


def test_a_module_without_live_range_file_gets_derived_ranges(tmp_path):
    folder = _copy(tmp_path, "scan_while")
    _one(folder, "*-live-range.txt").unlink()
    d = open_dump(folder)
    mem = module_memory(d, d.main)
    _, want = _memory("scan_while")
    assert mem.curve == want.curve
    assert any("derived from the scheduled HLO" in m for m in mem.missing)
