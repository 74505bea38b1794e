"""The structural diff between two snapshots of a module, on XLA's real per-pass dumps.

Each test names what XLA does in a pass and checks the diff against the parsed models.
"""

from __future__ import annotations

import os
import re

import pytest

from compiler_bridge import open_dump, parse_hlo
from compiler_bridge.passes import KINDS, diff_modules, text_diff
from compiler_bridge.passes import pass_timeline, step_diff

from conftest import SAMPLES, read, sample

PER_PASS = ["mlp_train", "transformer_per_pass.tar.xz"]


@pytest.fixture(scope="module")
def dumps():
    out = {}
    for name in PER_PASS:
        path = sample(name) if not name.endswith(".xz") else os.path.join(SAMPLES, name)
        d = open_dump(path)
        out[name] = (d, pass_timeline(d, d.main))
    return out


def _step(timeline, pass_name: str) -> int:
    (hit,) = [s.index for s in timeline.steps if s.pass_name == pass_name]
    return hit


def _all_instructions(module):
    return [i for c in module.computations for i in c.instructions]


@pytest.mark.parametrize("name", PER_PASS)
def test_every_step_added_minus_removed_is_the_change_in_instruction_count(dumps, name):
    d, tl = dumps[name]
    checked = 0
    for s in tl.steps[1:]:
        diff = step_diff(d, tl, s.index)
        prev = tl.step(tl.previous_ok(s.index))
        assert s.instructions - prev.instructions == len(diff.added) - len(diff.removed), s.label
        # the pairing is 1:1 and covers everything that is not added or removed
        old_names = [i.name for i in _all_instructions(diff.old)]
        new_names = [i.name for i in _all_instructions(diff.new)]
        assert len(set(diff.old_to_new.values())) == len(diff.old_to_new)
        assert len(diff.old_to_new) + len(diff.removed) == len(old_names)
        assert len(diff.old_to_new) + len(diff.added) == len(new_names)
        assert not {r.name for r in diff.added} & set(diff.new_to_old)
        assert not {r.name for r in diff.removed} & set(diff.old_to_new)
        for c in diff.changed:
            assert c.kinds and set(c.kinds) <= set(KINDS)
            assert diff.old_to_new[c.old.name] == c.new.name
        checked += 1
    assert checked == len(tl) - 1


def test_a_snapshot_against_itself_is_empty(dumps):
    d, tl = dumps["mlp_train"]
    m = d.parse(tl.step(_step(tl, "fusion")).file)
    diff = diff_modules(m, m)
    assert diff.is_empty and not diff.reordered and not diff.header_changes
    assert diff.pairs_by["name"] == m.instruction_count


@pytest.mark.parametrize("name", PER_PASS)
def test_fusion_pass_every_vanished_instruction_is_fused_into_a_named_fusion(dumps, name):
    """XLA's `fusion` pass moves instructions out of ENTRY into new fused computations,
    under new names; each one that vanished must be reported as fused into the fusion
    whose fused computation now holds its clone."""
    d, tl = dumps[name]
    diff = step_diff(d, tl, _step(tl, "fusion"))
    old, new = diff.old, diff.new
    vanished = [i for i in old.entry.instructions if new.entry.get(i.name) is None]
    assert len(vanished) > 50
    assert diff.removed == []
    fused_into = diff.fused_into()
    fusion_calls = {i.name: i.called_names[0] for i in new.instructions() if i.opcode == "fusion"}
    for inst in vanished:
        change = diff.change_of_old(inst.name)
        assert change is not None and "fused" in change.kinds, inst.name
        fusion = fused_into[inst.name]
        assert fusion == change.new.fusion and fusion in fusion_calls
        assert change.describe().startswith(f"{inst.name} fused into {fusion}")
        # the named fusion's fused computation holds a clone: same opcode and shape
        clone = new.computation(fusion_calls[fusion]).get(change.new.name)
        assert clone is not None
        assert clone.opcode == inst.opcode
        assert clone.shape.without_layout() == inst.shape.without_layout()
    # and the fusions say which instructions they took in
    taken = {m.old for f in diff.fusions for m in f.absorbed}
    assert {i.name for i in vanished} <= taken


@pytest.mark.parametrize("name", PER_PASS)
def test_layout_assignment_lists_every_tensor_whose_layout_changed(dumps, name):
    d, tl = dumps[name]
    diff = step_diff(d, tl, _step(tl, "layout-assignment"))
    old, new = diff.old, diff.new
    expected = set()
    for inst in new.instructions():
        before = old.find(inst.name)
        if before is not None and str(before.shape) != str(inst.shape) \
                and before.shape.without_layout() == inst.shape.without_layout():
            expected.add(inst.name)
    assert expected
    assert {c.name for c in diff.layout_changes} == expected
    for c in diff.layout_changes:
        assert c.old_shape == str(old.find(c.name).shape)
        assert c.new_shape == str(new.find(c.name).shape)
        assert c.bytes == new.find(c.name).shape.byte_size


def test_layout_assignment_conflicts_are_the_copies_it_inserted(dumps):
    """On the transformer, layout assignment inserts `copy` ops where a producer's layout
    does not suit a user (attention's transposes)."""
    d, tl = dumps["transformer_per_pass.tar.xz"]
    diff = step_diff(d, tl, _step(tl, "layout-assignment"))
    added_copies = [r for r in diff.added if r.opcode == "copy"]
    assert len(diff.layout_conflicts) == len(added_copies) > 0
    for c in diff.layout_conflicts:
        inst = diff.new.find(c.instruction)
        operand = diff.new.find(c.operand)
        assert inst.opcode == "copy" and inst.operand_names[0] == c.operand
        assert operand.shape.layout.minor_to_major != inst.shape.layout.minor_to_major
        assert c.bytes == inst.shape.byte_size
        assert set(c.users) == {u.name for u in inst.users}
    assert diff.summary()["bytes_moved"] == sum(c.bytes for c in diff.layout_conflicts)


def test_mlp_layout_assignment_changes_layouts_without_copies(dumps):
    d, tl = dumps["mlp_train"]
    diff = step_diff(d, tl, _step(tl, "layout-assignment"))
    assert diff.added == [] and diff.removed == [] and diff.layout_conflicts == []
    assert all(c.kinds == ("layout",) for c in diff.changed)


def test_a_renamed_clone_is_paired_not_removed_and_added():
    """XLA names a clone `<name>.clone` (`.clone.1`, ...); rename one instruction of a
    real module that way and the diff pairs it with its old self."""
    path = os.path.join(sample("mlp_train"),
                        "module_0000.jit_train_step.cpu_after_optimizations.txt")
    text = read(path)
    old = parse_hlo(text)
    target = next(i for i in old.entry.instructions if i.opcode == "fusion" and i.users)
    renamed = re.sub(rf"%{re.escape(target.name)}\b(?![.\w])", f"%{target.name}.clone.1", text)
    new = parse_hlo(renamed)
    assert new.find(target.name + ".clone.1") is not None
    diff = diff_modules(old, new)
    assert diff.added == [] and diff.removed == []
    assert diff.pairs_by["clone"] == 1
    change = diff.change_of_old(target.name)
    assert change.new.name == target.name + ".clone.1" and change.kinds == ("renamed",)
    # its users read the same value: not changed
    assert {c.old.name for c in diff.changed} == {target.name}


def test_flatten_call_graph_clones_a_computation_called_twice(dumps):
    d, tl = dumps["mlp_train"]
    diff = step_diff(d, tl, _step(tl, "flatten-call-graph"))
    (comp,) = diff.computations_added
    assert comp.endswith(".clone")
    assert {r.computation for r in diff.added} == {comp}
    (change,) = diff.changed
    assert "attributes" in change.kinds and "called_computation" in change.kinds


def test_cse_removes_duplicates_and_marks_nothing_else_changed(dumps):
    d, tl = dumps["mlp_train"]
    diff = step_diff(d, tl, _step(tl, "cse"))
    assert len(diff.removed) > 10 and diff.added == []
    # every removed instruction had a structural twin that stays
    stays = {(i.opcode, i.shape.without_layout()) for i in diff.new.instructions()}
    assert all((r.opcode, diff.old.find(r.name).shape.without_layout()) in stays
               for r in diff.removed)


def test_before_vs_after_pairs_by_source_op_when_far_apart(dumps):
    d, tl = dumps["mlp_train"]
    diff = step_diff(d, tl, len(tl) - 1, against=0)
    assert diff.pairs_by.get("source", 0) > 0
    assert tl.step(len(tl) - 1).instructions - tl.step(0).instructions == \
        len(diff.added) - len(diff.removed)


def test_text_diff_aligns_paired_lines_and_folds_unchanged(dumps):
    d, tl = dumps["mlp_train"]
    diff = step_diff(d, tl, _step(tl, "layout-assignment"))
    comps = text_diff(diff, context=2)
    assert {c.status for c in comps} <= {"same", "changed", "added", "removed"}
    same = [c for c in comps if c.status == "same"]
    changed = [c for c in comps if c.status == "changed"]
    assert same and all(not c.rows for c in same)
    (entry,) = changed
    kinds = {r.kind for r in entry.rows}
    assert "changed" in kinds and "fold" in kinds and "added" not in kinds
    assert entry.changed == len(diff.changed)
    for r in entry.rows:
        if r.kind == "same":
            assert r.old_text == r.new_text
        if r.kind == "changed":
            name = r.new_text.split(" = ")[0].replace("ROOT ", "").lstrip("%")
            assert diff.new.find(name).text == r.new_text
            assert diff.old.find(name).text == r.old_text
    folded = sum(r.folded for r in entry.rows if r.kind == "fold")
    shown = sum(1 for r in entry.rows if r.kind != "fold")
    assert folded + shown == entry.new_count


def test_text_diff_notes_where_fused_instructions_went(dumps):
    d, tl = dumps["mlp_train"]
    diff = step_diff(d, tl, _step(tl, "fusion"))
    (entry,) = text_diff(diff, computations={diff.new.entry.name})
    fused = diff.fused_into()
    gone = [r for r in entry.rows if r.kind in ("removed", "replace")
            and r.old_text.split(" = ")[0].replace("ROOT ", "").lstrip("%") in fused]
    assert len(gone) == len(fused)
    for r in gone:
        name = r.old_text.split(" = ")[0].replace("ROOT ", "").lstrip("%")
        assert r.old_note.startswith(f"→ fusion {fused[name]}")
    added = [c for c in text_diff(diff) if c.status == "added"]
    assert len(added) == len(diff.computations_added)
