"""The pass timeline, its CLI and its views, on XLA's real per-pass dumps."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from compiler_bridge import HloParseError, open_dump, parse_hlo_bytes
from compiler_bridge.passes import (
    PER_PASS_FLAG,
    instruction_history,
    module_counts,
    pass_timeline,
    step_changes,
    step_diff,
    timeline_json,
)

from conftest import ROOT, SAMPLES, sample

PER_PASS = ["mlp_train", "transformer_per_pass.tar.xz"]
JSON_KEYS = {"index", "file", "pipeline", "pass", "instructions", "fusions", "added",
             "removed", "changed"}


def _path(name: str) -> str:
    return os.path.join(SAMPLES, name) if name.endswith(".xz") else sample(name)


@pytest.fixture(scope="module")
def dumps():
    out = {}
    for name in PER_PASS:
        d = open_dump(_path(name))
        out[name] = (d, pass_timeline(d, d.main))
    return out


def run_cli(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "compiler_bridge", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


# --------------------------------------------------------------------------- timeline

@pytest.mark.parametrize("name,passes", [("mlp_train", 32), ("transformer_per_pass.tar.xz", 52)])
def test_timeline_is_every_pass_file_in_sequence_bracketed_by_before_and_after(dumps, name, passes):
    d, tl = dumps[name]
    assert tl.per_pass and tl.hint == ""
    assert len(tl) == passes + 2
    assert tl.step(0).kind == "before_optimizations"
    assert tl.step(len(tl) - 1).kind == "after_optimizations"
    middle = tl.steps[1:-1]
    assert [s.file for s in middle] == [f.path for f in d.main.passes]
    assert [s.sequence for s in middle] == sorted(s.sequence for s in middle)
    assert [s.index for s in tl.steps] == list(range(len(tl)))
    for s in middle:
        info = d.file(s.file).pass_info
        assert (s.pipeline, s.pass_name, s.next_pass) == (info.pipeline, info.after, info.before)
        assert tl.index_of(s.stage) == s.index


@pytest.mark.parametrize("name", PER_PASS)
def test_counts_per_step_equal_what_the_parser_counts(dumps, name):
    d, tl = dumps[name]
    for s in tl.steps:
        data = d.read_bytes(s.file)
        m = parse_hlo_bytes(data, s.file)
        stats = m.stats()
        assert s.ok
        assert (s.instructions, s.computations, s.fusions, s.entry_instructions) == \
            (stats["instructions"], stats["computations"], stats["fusions"],
             stats["entry_instructions"]), s.label
        assert s.tensor_bytes == sum(i.shape.byte_size for i in m.entry.instructions
                                     if i.opcode not in ("tuple", "get-tuple-element", "bitcast"))
        assert s.text_hash == hashlib.sha1(data).hexdigest()


@pytest.mark.parametrize("name", PER_PASS)
def test_identical_steps_are_byte_identical_to_the_previous_step(dumps, name):
    d, tl = dumps[name]
    flags = [s.identical for s in tl.steps]
    assert any(flags) and not all(flags[1:]) and not flags[0]
    for prev, s in zip(tl.steps, tl.steps[1:]):
        assert s.identical == (d.read_bytes(prev.file) == d.read_bytes(s.file))
    assert len(tl.visible(hide_identical=True)) == flags.count(False)


def test_without_per_pass_files_the_timeline_is_before_then_after_with_the_flag():
    d = open_dump(sample("scan_while"))
    tl = pass_timeline(d, d.main)
    assert not tl.per_pass
    assert [s.kind for s in tl.steps] == ["before_optimizations", "after_optimizations"]
    assert PER_PASS_FLAG == "--xla_dump_hlo_pass_re=.*" and PER_PASS_FLAG in tl.hint
    diff = step_diff(d, tl, 1)
    assert diff is not None and diff.pairs_by.get("source", 0) > 0
    assert tl.step(1).instructions - tl.step(0).instructions == len(diff.added) - len(diff.removed)
    assert step_diff(d, tl, 0) is None


def test_search_finds_steps_by_pass_or_pipeline(dumps):
    _, tl = dumps["mlp_train"]
    assert [s.pass_name for s in tl.search("FUSION")] == ["fusion", "fusion-wrapper"]
    assert {s.pipeline for s in tl.search("simplification_after")} == \
        {"simplification_after_layout_assignment"}
    assert len(tl.search("")) == len(tl)


def test_a_corrupt_pass_file_is_an_error_step_and_the_rest_still_works(tmp_path):
    dest = tmp_path / "mlp_train"
    shutil.copytree(sample("mlp_train"), dest)
    d0 = open_dump(dest)
    victim = next(f for f in d0.main.passes if f.pass_info.after == "fusion")
    data = (dest / victim.path).read_bytes()
    (dest / victim.path).write_bytes(data[: len(data) // 2])   # cut mid-instruction
    with pytest.raises(HloParseError) as exc:
        parse_hlo_bytes(data[: len(data) // 2], victim.path)
    d = open_dump(dest)
    tl = pass_timeline(d, d.main)
    bad = [s for s in tl.steps if not s.ok]
    assert [s.file for s in bad] == [victim.path]
    (step,) = bad
    assert step.error == str(exc.value)
    assert step.instructions is None and step.fusions is None
    assert any(e.file == victim.path for e in d.errors)
    # the next step is compared with the last one that parsed
    nxt = step.index + 1
    assert tl.previous_ok(nxt) == step.index - 1
    diff = step_diff(d, tl, nxt)
    assert tl.step(nxt).instructions - tl.step(step.index - 1).instructions == \
        len(diff.added) - len(diff.removed)
    with pytest.raises(HloParseError) as diff_exc:
        step_diff(d, tl, step.index)
    assert str(diff_exc.value) == step.error     # the parser's diagnostic, the file named once
    data = timeline_json(d, tl)
    (row,) = [r for r in data["steps"] if "error" in r]
    assert row["index"] == step.index and row["instructions"] is None and row["added"] is None
    assert all(set(r) == JSON_KEYS for r in data["steps"] if r is not row)
    out = run_cli("passes", str(dest), "--module", "jit_train_step", ok=False)
    assert f"{step.index:4d}" in out.stdout and "error:" in out.stdout
    # the timeline is printed, but a file could not be read: exit 1 naming it (was 0)
    assert out.returncode == 1 and f"error: {victim.path}:" in out.stderr
    # the step's row says where in its file (a file name alone fills the row)
    (line,) = [ln for ln in out.stdout.splitlines() if ln.startswith(f"{step.index:4d} ")]
    assert f"line {exc.value.line}:{exc.value.column}: {exc.value.message}"[:60] in line
    out = run_cli("passes", str(dest), "--module", "jit_train_step", "--diff", str(step.index),
                  ok=False)
    assert out.returncode == 1 and out.stderr.count(victim.path) == 1
    assert f"{victim.path}:{exc.value.line}:{exc.value.column}:" in out.stderr


# --------------------------------------------------------------------------- CLI

@pytest.mark.parametrize("name", PER_PASS)
def test_cli_passes_json_schema(dumps, name):
    d, tl = dumps[name]
    out = json.loads(run_cli("passes", _path(name), "--module", d.main.name, "--json").stdout)
    assert set(out) == {"id", "module", "steps"} and out["module"] == d.main.name
    assert out["id"] == d.main.id
    steps = out["steps"]
    assert len(steps) == len(tl)
    for i, (row, s) in enumerate(zip(steps, tl.steps)):
        assert set(row) == JSON_KEYS
        assert row["index"] == i and row["file"] == s.file
        assert row["pipeline"] == s.pipeline and row["pass"] == s.pass_name
        assert row["instructions"] == s.instructions and row["fusions"] == s.fusions
        assert all(isinstance(row[k], int) and row[k] >= 0 for k in ("added", "removed", "changed"))
        if i == 0:
            assert (row["added"], row["removed"], row["changed"]) == (0, 0, 0)
        else:
            delta = row["instructions"] - steps[i - 1]["instructions"]
            assert delta == row["added"] - row["removed"]
    assert sum(r["added"] for r in steps) > 0


def test_cli_passes_by_module_id_and_human_table():
    out = run_cli("passes", sample("mlp_train"), "--module", "0").stdout
    assert out.splitlines()[0].startswith("module 0000 jit_train_step: 34 steps")
    assert "layout-assignment" in out and "same text as the previous step" in out
    assert "StableHLO (before step 0): module_0000.jit_train_step/module.mlir" in out
    out = run_cli("passes", sample("cond_switch")).stdout
    assert PER_PASS_FLAG in out
    p = run_cli("passes", sample("mlp_train"), "--module", "nope", ok=False)
    assert p.returncode == 2 and "nope" in p.stderr and "Traceback" not in p.stderr


def test_cli_passes_diff_of_one_step(dumps):
    _, tl = dumps["mlp_train"]
    k = next(s.index for s in tl.steps if s.pass_name == "fusion")
    out = json.loads(run_cli("passes", sample("mlp_train"), "--json", "--diff", str(k)).stdout)
    assert out["summary"]["added"] - out["summary"]["removed"] == \
        tl.step(k).instructions - tl.step(k - 1).instructions
    assert any(c["kinds"][:2] == ["renamed", "fused"] for c in out["changed"])
    text = run_cli("passes", sample("mlp_train"), "--diff", str(k)).stdout
    assert " fused into " in text


# --------------------------------------------------------------------------- history

def test_history_follows_an_instruction_through_renames_and_fusion(dumps):
    d, tl = dumps["mlp_train"]
    k = next(s.index for s in tl.steps if s.pass_name == "fusion")
    diff = step_diff(d, tl, k)
    change = next(c for c in diff.changed if "fused" in c.kinds and "renamed" in c.kinds)
    last = len(tl) - 1
    events = instruction_history(d, tl, last, change.new.name)
    fused = [e for e in events if e.event == "fused"]
    assert fused and fused[0].index == k
    assert fused[0].name_before == change.old.name and fused[0].name_after == change.new.name
    assert [e.index for e in events] == sorted(e.index for e in events)
    # from the step before fusion, under its old name, the same event lies ahead
    ahead = instruction_history(d, tl, k - 1, change.old.name)
    assert any(e.index == k and e.event == "fused" for e in ahead)


def test_history_of_an_instruction_created_by_a_pass(dumps):
    d, tl = dumps["transformer_per_pass.tar.xz"]
    k = next(s.index for s in tl.steps if s.pass_name == "layout-assignment")
    copy = step_diff(d, tl, k).layout_conflicts[0].instruction
    events = instruction_history(d, tl, k, copy)
    assert events[0].event == "created" and events[0].index == k
    # the line the inspector shows says each thing once ('created: created (new)' was)
    assert events[0].line == "created: new"
    gone = next(e for e in events if e.event == "removed")
    assert gone.line == "removed"
    fused = next(e for e in events if e.event == "fused")
    assert fused.line == f"fused: {fused.detail}"


def test_step_changes_are_zero_on_identical_steps(dumps):
    d, tl = dumps["transformer_per_pass.tar.xz"]
    changes = step_changes(d, tl)
    for s, c in zip(tl.steps, changes):
        if s.identical:
            assert c == {"added": 0, "removed": 0, "changed": 0}


def test_module_counts_of_the_after_optimizations_module(dumps):
    d, tl = dumps["mlp_train"]
    m = d.parse(tl.step(len(tl) - 1).file)
    c = module_counts(m)
    assert c["instructions"] == m.instruction_count and c["computations"] == len(m.computations)


# --------------------------------------------------------------------------- views

def test_timeline_figure_points_carry_their_step_index(dumps):
    from viz import timeline_figure, timeline_rows
    d, tl = dumps["transformer_per_pass.tar.xz"]
    changes = step_changes(d, tl)
    fig = timeline_figure(tl, current=5, changes=changes)
    for trace in fig.data:
        assert list(trace.customdata) == list(trace.x)
    instr = next(t for t in fig.data if t.name == "instructions")
    assert list(instr.y) == [s.instructions for s in tl.steps]
    hidden = timeline_figure(tl, hide_identical=True)
    assert len(hidden.data[0].x) == len(tl.visible(True))
    rows = timeline_rows(tl, changes, hide_identical=True)
    assert [r["step"] for r in rows] == [s.index for s in tl.visible(True)]
    assert all(r["Δ"] is None or r["Δ"] == r["+"] - r["−"] for r in rows)
    # bytes in SI prefixes: plotly's default writes 1e9 as '1B' (billion), '1BB' with the
    # suffix, where a model's GB of tensors should read '1GB'
    assert fig.layout.yaxis2.ticksuffix == "B" and fig.layout.yaxis2.exponentformat == "SI"


def test_graph_decorations_colour_the_diff_and_mark_removals(dumps):
    from viz import GraphOptions, build_graph
    from viz import (
        ADDED_FILL,
        CHANGED_FILL,
        DIFF_LEGEND,
        REMOVED_BORDER,
        changed_nodes,
        diff_decorations,
        group_decorations,
        removed_anchors,
    )
    d, tl = dumps["mlp_train"]
    k = next(s.index for s in tl.steps if s.pass_name == "algsimp")
    diff = step_diff(d, tl, k)
    deco = diff_decorations(diff)
    for r in diff.added:
        assert deco[r.name]["fillcolor"] == ADDED_FILL
    for c in diff.changed:
        assert deco[c.new.name]["fillcolor"] == CHANGED_FILL
        assert deco[c.new.name]["tooltip"].startswith(c.describe())
    anchors = removed_anchors(diff)
    unmarked = anchors.get("", [])
    assert {r for k2, v in anchors.items() if k2 for r in v} == \
        {r.name for r in diff.removed} - set(unmarked)
    marked = [n for n, v in deco.items() if v.get("color") == REMOVED_BORDER]
    assert marked and all(n in diff.new_to_old or diff.is_added(n) for n in marked)
    assert {label for label, _ in DIFF_LEGEND} and len(DIFF_LEGEND) == 3
    entry = {i.name for i in diff.new.entry.instructions}
    added = next(r.name for r in diff.added if r.name in entry)
    view = build_graph(diff.new, None, GraphOptions(decorations=deco, focus=added, radius=1))
    assert 'fillcolor="' + ADDED_FILL + '"' in view.dot
    groups = group_decorations(build_graph(diff.new, None, GraphOptions()), deco)
    assert all(v["label"].startswith("diff: ") for v in groups.values())
    from viz import removed_ghosts
    ghosts = removed_ghosts(diff)
    old_entry = {i.name for i in diff.old.entry.instructions}
    assert {g.name for g in ghosts} == {r.name for r in diff.removed if r.name in old_entry}
    assert all(set(g.inputs) | set(g.outputs) <= entry for g in ghosts)
    keep = changed_nodes(diff, radius=1)
    assert keep <= entry and {r.name for r in diff.added if r.name in entry} <= keep


def test_text_diff_html_is_escaped_and_self_contained(dumps):
    from compiler_bridge.passes import text_diff
    from viz import text_diff_html
    d, tl = dumps["mlp_train"]
    k = next(s.index for s in tl.steps if s.pass_name == "fusion")
    diff = step_diff(d, tl, k)
    page = text_diff_html(text_diff(diff), "before fusion", "after <fusion>")
    assert "after &lt;fusion&gt;" in page and "<script" not in page and "http" not in page
    assert 'metadata={op_name=&quot;' in page and 'op_name="' not in page
    assert page.count("<details") == sum(1 for c in text_diff(diff) if c.status != "same") + 1


def test_shardy_export_keeps_the_entry_and_what_it_did_not_rewrite():
    """Shardy's export (``spmd-partitioner / shardy-xla``) writes the module anew: every
    name and the ENTRY's (main.8 -> main.6) change, and every instruction gains a
    ``sharding=``. The ENTRY is still the ENTRY, and what is added and removed is what the
    two texts' opcode counts say (custom calls and constants out, copies in); the rest
    pairs, its sharding an attribute that changed."""
    import re
    from collections import Counter

    d = open_dump(os.path.join(SAMPLES, "spmd_train_per_pass.tar.xz"))
    tl = pass_timeline(d, d.main)
    (step,) = [s for s in tl.steps if s.pass_name == "shardy-xla"]
    diff = step_diff(d, tl, step.index)
    prev = tl.step(tl.previous_ok(step.index))
    opcode = re.compile(r"^\s+(?:ROOT )?%?\S+ = .*? ([a-z][\w\-]*)\(", re.M)
    old, new = (Counter(opcode.findall(d.read_text(s.file))) for s in (prev, step))
    assert diff.old.entry.name != diff.new.entry.name
    assert diff.computation_map[diff.old.entry.name] == diff.new.entry.name
    assert Counter(r.opcode for r in diff.added) == new - old
    assert Counter(r.opcode for r in diff.removed) == old - new
    assert sum("sharding" in c.details.get("attributes", ("",))[0] for c in diff.changed) > 20
