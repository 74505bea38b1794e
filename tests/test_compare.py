"""Comparing two dumps: module pairing, flags, counts and diffs, the ``compare`` command.

The inputs are real dumps: ``flags_default`` / ``flags_no_fusion_emitters`` (one program,
compiled for batch 32 and 8, with and without ``--xla_cpu_use_fusion_emitters=false``),
``legacy_jax0430`` / ``mlp_train`` (one program, JAX 0.4.30 and 0.10.2). Expected values
come from the files XLA wrote (their names, shapes, ``debug_options``) and from counting
instruction lines in the text (``make_samples.count_instructions``), not from our parser.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, read, sample

from compiler_bridge import CannotCompare, compare_dumps, open_dump
from compiler_bridge.compare import (
    compare_modules,
    dump_versions,
    flags_diff,
    pair_modules,
    recompilations,
)
from sample_dumps.make_samples import count_instructions

A, B = "flags_default", "flags_no_fusion_emitters"


def _after(dump: str, module_id: str) -> str:
    hits = glob.glob(os.path.join(sample(dump), f"module_{module_id}.*after_optimizations.txt"))
    assert len(hits) == 1, hits
    return hits[0]


def _batch(dump: str, module_id: str) -> int:
    """The batch size XLA compiled the module for: the rows of the s32[N] labels parameter
    of ENTRY, as the text says."""
    text = read(_after(dump, module_id))
    entry = text[text.index("\nENTRY "):]
    sizes = re.findall(r"= s32\[(\d+)\]\{0\} parameter\(", entry)
    assert len(sizes) == 1, sizes
    return int(sizes[0])


def _copy_renamed(src: str, dst: str, renames: dict[str, str], name: str = "") -> str:
    """Copy a dump folder, giving modules other ids (and optionally another name), as a
    later run of the same program writes them."""
    os.makedirs(dst)
    for path in glob.glob(os.path.join(src, "**"), recursive=True):
        rel = os.path.relpath(path, src)
        new = rel
        for old_id, new_id in renames.items():
            new = new.replace(f"module_{old_id}.", f"module_{new_id}.")
        if name:
            new = new.replace(".jit_train_step", f".{name}")
        target = os.path.join(dst, new)
        if os.path.isdir(path):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(path, target)
    return dst


# --------------------------------------------------------------------------- pairing

def test_the_flag_pair_pairs_each_compile_with_the_same_batch_size():
    a, b = open_dump(sample(A)), open_dump(sample(B))
    p = pair_modules(a, b)
    assert not p.only_a and not p.only_b
    assert len(p.pairs) == len(a.modules) == 2
    for pair in p.pairs:
        assert pair.name == "jit_train_step"
        assert pair.how == "name+structure"       # one name, compiled twice on each side
        assert _batch(A, pair.a) == _batch(B, pair.b)
    assert {_batch(A, x.a) for x in p.pairs} == {32, 8}


def test_shifted_ids_and_another_name_still_pair_by_structure(tmp_path):
    # a later run: other module ids (the batch-8 compile first) and another function name
    other = _copy_renamed(sample(B), str(tmp_path / "run2"), {"0000": "0007", "0002": "0003"},
                          name="jit_step_v2")
    a, b = open_dump(sample(A)), open_dump(other)
    p = pair_modules(a, b)
    assert len(p.pairs) == 2 and not p.only_a and not p.only_b
    for pair in p.pairs:
        assert pair.how == "structure"
        assert pair.name_b == "jit_step_v2"
        assert _batch(A, pair.a) == _batch(B, {"0007": "0000", "0003": "0002"}[pair.b])


def test_jax_0430_and_current_jax_pair_by_name():
    old, new = open_dump(sample("legacy_jax0430")), open_dump(sample("mlp_train"))
    p = pair_modules(old, new)
    assert [(x.a, x.b, x.how) for x in p.pairs] == [("0000", "0000", "name")]


def test_different_programs_do_not_pair():
    p = pair_modules(open_dump(sample(A)), open_dump(sample("cond_switch")))
    assert not p.pairs
    assert p.only_a == ("0000", "0002") and p.only_b == ("0000",)
    with pytest.raises(CannotCompare, match="pairs with a module"):
        compare_dumps(open_dump(sample(A)), open_dump(sample("cond_switch")))
    # one module named, on either side: the message says which flag names its partner
    with pytest.raises(CannotCompare, match="0002 of .* pairs with no module .*--module-b"):
        compare_dumps(open_dump(sample(A)), open_dump(sample("cond_switch")), module_a="0002")
    with pytest.raises(CannotCompare, match="0000 of .* pairs with no module .*--module-a"):
        compare_dumps(open_dump(sample(A)), open_dump(sample("cond_switch")), module_b="0000")


def test_recompilations_of_one_function_are_listed_with_their_shapes():
    (r,) = recompilations(open_dump(sample(A)))
    assert r.name == "jit_train_step" and r.modules == ("0000", "0002")
    assert "f32[32,64]" in r.signatures[0] and "f32[8,64]" in r.signatures[1]
    # what made jax compile again: the batch's two parameters, as XLA wrote them
    assert [d.split(", ") for d in r.differences()] == [
        [f"#{i} {s}" for i, s in ((19, "f32[32,64]"), (20, "s32[32]"))],
        [f"#{i} {s}" for i, s in ((19, "f32[8,64]"), (20, "s32[8]"))]]
    assert recompilations(open_dump(sample("mlp_train"))) == []


# --------------------------------------------------------------------------- diffs

@pytest.mark.parametrize("dumps", [(A, B), ("legacy_jax0430", "mlp_train"), (A, A)])
def test_added_minus_removed_is_the_change_in_instruction_count(dumps):
    a, b = open_dump(sample(dumps[0])), open_dump(sample(dumps[1]))
    pairs = pair_modules(a, b).pairs
    if dumps[0] == dumps[1]:     # a recompilation: batch 32 against batch 8
        from compiler_bridge.compare import chosen_pair
        pairs = (chosen_pair(a, b, "0000", "0002"),)
    for pair in pairs:
        c = compare_modules(a, b, pair)
        lines_a = count_instructions(Path(_after(dumps[0], pair.a)))
        lines_b = count_instructions(Path(_after(dumps[1], pair.b)))
        assert (c.counts_a.instructions, c.counts_b.instructions) == (lines_a, lines_b)
        assert len(c.diff.added) - len(c.diff.removed) == lines_b - lines_a


def test_the_fusion_flag_changes_fusions():
    a, b = open_dump(sample(A)), open_dump(sample(B))
    c = compare_modules(a, b, pair_modules(a, b).pairs[0])
    text_a, text_b = read(_after(A, c.pair.a)), read(_after(B, c.pair.b))
    fusions_a = len(re.findall(r" fusion\(", text_a))
    fusions_b = len(re.findall(r" fusion\(", text_b))
    assert fusions_a != fusions_b
    assert (c.counts_a.fusions, c.counts_b.fusions) == (fusions_a, fusions_b)
    assert c.opcode_delta["fusion"] == (fusions_a, fusions_b)
    assert c.diff.fusions and not c.identical


def test_one_compile_dumped_twice_compares_as_identical(tmp_path):
    twice = _copy_renamed(sample(A), str(tmp_path / "again"), {})
    cmp = compare_dumps(open_dump(sample(A)), open_dump(twice))
    assert cmp.flags.is_empty
    assert len(cmp.reports) == 2
    for r in cmp.reports:
        c = r.comparison
        assert c.pair.a == c.pair.b and c.pair.how == "name+structure"
        assert c.identical and c.counts_a == c.counts_b and not c.opcode_delta
        assert all(k.us_a == k.us_b for k in r.kernels)
    # only the batch-32 compile ran under the profiler: the same trace, the same times
    timed = [r for r in cmp.reports if r.step_us is not None]
    assert [r.pair.a for r in timed] == ["0000"]
    assert timed[0].step_us[0] == timed[0].step_us[1] and timed[0].kernels


def test_flags_diff_reads_what_debug_options_say():
    a, b = open_dump(sample(A)), open_dump(sample(B))
    d = flags_diff(a, b)
    # the flag as XLA wrote it into B's debug_options (A's is at its default)
    written = re.findall(r"^(xla_cpu_use_fusion_emitters): (\w+)$",
                         read(glob.glob(os.path.join(sample(B), "*.debug_options"))[0]), re.M)
    assert written == [("xla_cpu_use_fusion_emitters", "false")]
    full_a = read(glob.glob(os.path.join(sample(A), "*", "compile_options.textproto"))[0])
    default = re.search(r"xla_cpu_use_fusion_emitters: (\w+)", full_a).group(1)
    assert d.changed == (("xla_cpu_use_fusion_emitters", default, "false"),)
    assert not d.only_a and not d.only_b        # xla_dump_to differs, and is left out


def test_a_dump_that_does_not_say_its_flags_is_not_compared_by_flags():
    # the JAX 0.4.30 sample has neither debug_options nor compile_options.textproto
    d = flags_diff(open_dump(sample("legacy_jax0430")), open_dump(sample("mlp_train")))
    assert d.is_empty and not d.known_a and d.known_b


def test_versions_come_from_the_profiler_trace():
    import jax
    assert dump_versions(open_dump(sample("transformer")))["jax_version"] == jax.__version__
    assert dump_versions(open_dump(sample("legacy_jax0430"))) == {}   # its trace does not say


def test_kernel_times_pair_through_the_diff():
    cmp = compare_dumps(open_dump(sample(A)), open_dump(sample(B)), module_a="0000")
    (r,) = cmp.reports
    assert r.step_us is not None and all(x > 0 for x in r.step_us)
    both = [k for k in r.kernels if k.us_a is not None and k.us_b is not None]
    assert both
    d = r.comparison.diff
    # paired through the diff: the same instruction, or (what a flag took out of a
    # fusion) the fusion that ran it on one side and the instruction on the other
    unfused = {(c.old.fusion, c.new.name) for c in d.changed if "unfused" in c.kinds}
    for k in both:
        assert d.old_to_new.get(k.name_a) == k.name_b or (k.name_a, k.name_b) in unfused, k


def test_a_kernel_taken_out_of_its_fusion_pairs_with_the_fusion_that_ran_it():
    # --xla_cpu_use_fusion_emitters=false leaves an add, a log and reductions out of their
    # wrapped_* fusions: each was one kernel on both sides, and is one row of the kernel
    # table, not a kernel gone and another come
    cmp = compare_dumps(open_dump(sample(A)), open_dump(sample(B)), module_a="0000")
    (r,) = cmp.reports
    d = r.comparison.diff
    unfused = {(c.old.fusion, c.new.name) for c in d.changed if "unfused" in c.kinds}
    rows = {(k.name_a, k.name_b): k for k in r.kernels}
    measured_a = {k.name_a for k in r.kernels if k.us_a is not None}
    measured_b = {k.name_b for k in r.kernels if k.us_b is not None}
    expected = {(a, b) for a, b in unfused if a in measured_a and b in measured_b}
    assert len(expected) >= 4, unfused
    for pair in expected:
        assert pair in rows and rows[pair].us_a and rows[pair].us_b, pair
    assert not {k.name_b for k in r.kernels if not k.name_a} & {b for _, b in expected}


def test_a_recompilation_for_another_batch_shows_shape_changes():
    a = open_dump(sample(A))
    from compiler_bridge.compare import chosen_pair
    c = compare_modules(a, a, chosen_pair(a, a, "0000", "0002"))
    d = c.diff
    # the labels argument, as XLA wrote it in each ENTRY: s32[32] and s32[8]
    text_a, text_b = (read(_after(A, m)).split("\nENTRY ", 1)[1] for m in ("0000", "0002"))
    label_a = re.search(r"(\S+) = s32\[32\]\{0\} parameter\((\d+)\)", text_a)
    label_b = re.search(r"(\S+) = s32\[8\]\{0\} parameter\((\d+)\)", text_b)
    assert label_a.group(2) == label_b.group(2)
    change = d.change_of_old(label_a.group(1).lstrip("%"))
    assert change is not None and change.new.name == label_b.group(1).lstrip("%")
    assert "shape" in change.kinds and change.details["shape"][1].startswith("s32[8]")
    assert sum("shape" in ch.kinds for ch in d.changed) > 10
    assert len(d.added) - len(d.removed) == c.counts_b.instructions - c.counts_a.instructions
    # one program, one flag set, another batch: XLA wrote the same opcodes as often
    # (counted in the text), the same fusions; every instruction pairs, what carries no
    # op_name too (a fused computation's parameters, a broadcast constant, the ROOT
    # tuple), and no change names the same operands on both sides
    opcodes = [sorted(re.findall(r"^\s+(?:ROOT )?%?\S+ = .*? ([a-z][\w\-]*)\(",
                                 read(_after(A, m)), re.M)) for m in ("0000", "0002")]
    assert opcodes[0] == opcodes[1] and len(opcodes[0]) == c.counts_a.instructions
    assert not d.added and not d.removed
    assert not [ch for ch in d.changed
                if "operands" in ch.kinds and len(set(ch.details["operands"])) == 1]


# --------------------------------------------------------------------------- CLI

def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "compiler_bridge", "compare", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_cli_json_has_exactly_the_documented_shape():
    p = run(sample(A), sample(B), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) == {"a", "b", "flags", "modules", "unpaired", "notes"}
    assert out["notes"] == []              # (what was left out and why: none here)
    for side, name in (("a", A), ("b", B)):
        assert set(out[side]) == {"path", "jax", "xla_flags"}
        assert out[side]["path"] == sample(name)
    assert "--xla_cpu_use_fusion_emitters=false" in out["b"]["xla_flags"]
    assert "--xla_cpu_use_fusion_emitters=false" not in out["a"]["xla_flags"]
    assert set(out["flags"]) == {"only_a", "only_b", "changed"}
    assert out["flags"]["changed"] == [["xla_cpu_use_fusion_emitters", "true", "false"]]
    assert out["unpaired"] == {"a": [], "b": []}
    assert len(out["modules"]) == 2
    # step_basis: how step_us was measured ('kernels', or 'calls' where a trace has no
    # per-op events; issue 32, item 2)
    keys = {"name", "a", "b", "instructions", "fusions", "added", "removed", "changed",
            "temp_bytes", "step_us", "step_basis"}
    for m in out["modules"]:
        assert set(m) == keys
        la = count_instructions(Path(_after(A, m["a"])))
        lb = count_instructions(Path(_after(B, m["b"])))
        assert m["instructions"] == [la, lb]
        assert m["added"] - m["removed"] == lb - la
        assert len(m["temp_bytes"]) == 2
    # temp bytes as JAX's memory_analysis() of the same compile says (the batch-32 one,
    # recorded by make_samples.py --memory)
    recorded = json.loads(read(os.path.join(ROOT, "sample_dumps", "memory_analysis.json")))
    temp = {m["a"]: m["temp_bytes"] for m in out["modules"]}
    assert temp["0000"] == [recorded[A]["memory_analysis"]["temp_size_in_bytes"],
                            recorded[B]["memory_analysis"]["temp_size_in_bytes"]]
    assert all(x is not None for x in temp["0002"])
    # only the batch-32 compile ran under the profiler
    timed = {m["a"]: m["step_us"] for m in out["modules"]}
    assert timed["0002"] is None and len(timed["0000"]) == 2


def test_cli_exit_codes():
    # the measured steps of the committed traces: the slower side is the 'new' one
    out = json.loads(run(sample(A), sample(B), "--json").stdout)
    a_us, b_us = next(m["step_us"] for m in out["modules"] if m["step_us"])
    assert a_us != b_us
    old, new = (A, B) if b_us > a_us else (B, A)
    slower = 100 * (max(a_us, b_us) - min(a_us, b_us)) / min(a_us, b_us)
    p = run(sample(old), sample(new), "--fail-if-slower", f"{slower / 2:.3f}")
    assert p.returncode == 1 and "REGRESSION" in p.stderr
    assert run(sample(old), sample(new), "--fail-if-slower",
               f"{slower + 1:.3f}").returncode == 0
    # the other way round it got faster
    assert run(sample(new), sample(old), "--fail-if-slower", "0").returncode == 0
    # cannot compare: different programs, a missing dump, a module that is not there,
    # and a gate with no measured step on both sides (JAX 0.4.30 records no per-op events)
    assert run(sample(A), sample("cond_switch")).returncode == 2
    assert run(sample(A), os.path.join(ROOT, "no-such-dump")).returncode == 2
    p = run(sample(A), sample(B), "--module-a", "0099")
    assert p.returncode == 2 and "0099" in p.stderr
    p = run(sample("legacy_jax0430"), sample("mlp_train"), "--fail-if-slower", "5")
    assert p.returncode == 2 and "step time" in p.stderr
    # without the gate, the same comparison succeeds
    assert run(sample("legacy_jax0430"), sample("mlp_train")).returncode == 0


def test_cli_compares_two_compiles_of_one_dump():
    p = run(sample(A), sample(A), "--module-a", "0000", "--module-b", "0002", "--json")
    assert p.returncode == 0, p.stderr
    (m,) = json.loads(p.stdout)["modules"]
    assert (m["a"], m["b"]) == ("0000", "0002")
    assert m["added"] - m["removed"] == m["instructions"][1] - m["instructions"][0]


# --------------------------------------------------------------------------- views

def test_the_comparison_tables_show_both_sides():
    from viz import compare as VC
    cmp = compare_dumps(open_dump(sample(A)), open_dump(sample(B)), module_a="0000")
    (r,) = cmp.reports
    c = r.comparison
    counts = {row[""]: row for row in VC.count_rows(c)}
    assert (counts["fusions"]["baseline"], counts["fusions"]["this dump"]) == \
        (c.counts_a.fusions, c.counts_b.fusions)
    assert counts["fusions"]["change"].startswith(f"{c.counts_b.fusions - c.counts_a.fusions:+,}")
    assert (counts["ENTRY instructions"]["change"] == "=") == \
        (c.counts_a.entry_instructions == c.counts_b.entry_instructions)
    assert {row["opcode"] for row in VC.opcode_rows(c)} == set(c.opcode_delta)
    assert VC.flag_rows(cmp.flags) == [{"flag": "xla_cpu_use_fusion_emitters",
                                        "baseline": "true", "this dump": "false"}]
    mem = {row["bytes"]: row for row in VC.memory_rows(r)}
    assert {"argument", "output", "temp", "alias"} <= set(mem)
    kernels = VC.kernel_rows(r)
    assert kernels and all(set(k) == {"baseline kernel", "this dump", "opcode", "baseline µs",
                                      "µs", "change µs"} for k in kernels)
    changes = [abs(k["change µs"]) for k in kernels]
    assert changes == sorted(changes, reverse=True)          # biggest change first
    line = VC.summary(r)
    assert f"{c.counts_a.instructions:,} → {c.counts_b.instructions:,} instructions" in line
    assert "step " in line
