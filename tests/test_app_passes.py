"""The pass explorer in the page (AppTest): stage picker with every step, the stepper,
compare target and "only what changed" in the URL, diff tabs, history, error steps, and
a dump without per-pass files (before vs after).

``mlp_train`` is a real per-pass dump (32 snapshots written with --xla_dump_hlo_pass_re=.*).
"""

from __future__ import annotations

import glob
import os
import shutil

import pytest
from conftest import sample
from tests.support.apptest import (app, click, details_key, link, ok, open_popover, query,
                                   texts)

from compiler_bridge import open_dump
from compiler_bridge.passes import PER_PASS_FLAG, pass_timeline, step_diff
from viz import ADDED_FILL, CHANGED_FILL
from viz import graph_for
from viz import ViewState

@pytest.fixture(scope="module")
def mlp():
    dump = open_dump(sample("mlp_train"))
    return dump, pass_timeline(dump, dump.main)


def test_stage_picker_offers_every_pass_step(monkeypatch, mlp):
    _, tl = mlp
    at = app(sample("mlp_train"), monkeypatch)
    picker = at.selectbox(key="pick-stage")
    # the module's StableHLO (module.mlir) first, then XLA's snapshots, numbered from 0
    assert picker.options[:2] == ["StableHLO (as HLO)", "before optimizations"]
    assert picker.options[-1] == "after optimizations"
    assert len(picker.options) == len(tl) + 1 == 35
    fusion = next(o for o in picker.options if " · fusion · " in o)
    assert fusion.startswith("25 · fusion · HLO_passes_after_layout_assignment (0024)")
    assert any(o.endswith("· same text") for o in picker.options)
    picker.select("pass:0024").run()
    assert query(at)["stage"] == "pass:0024"
    assert "step 25 · fusion" in texts(at)


def test_next_and_previous_skip_identical_steps_and_write_the_url(monkeypatch, mlp):
    _, tl = mlp
    visible = [s.index for s in tl.visible(True)]
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0003"})
    start = tl.index_of("pass:0003")
    for k in range(1, 4):
        at.button(key="pass-next").click().run()
        ok(at)
        assert not at.exception
        assert query(at)["stage"] == tl.step(visible[visible.index(start) + k]).stage
    at.button(key="pass-prev").click().run()
    ok(at)
    assert query(at)["stage"] == tl.step(visible[visible.index(start) + 2]).stage
    # with identical steps shown, next is simply the next step
    at.toggle(key="pass-hide").set_value(False).run()
    ok(at)
    here = tl.index_of(query(at)["stage"])
    at.button(key="pass-next").click().run()
    ok(at)
    assert query(at)["stage"] == tl.step(here + 1).stage


def test_slider_and_unpadded_step_in_the_url(monkeypatch, mlp):
    _, tl = mlp
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:17"})     # = pass:0017
    assert query(at)["stage"] == "pass:0017"
    assert at.select_slider(key="pass-slider").value == tl.index_of("pass:0017")
    at.select_slider(key="pass-slider").set_value(tl.index_of("pass:0024")).run()
    ok(at)
    assert query(at)["stage"] == "pass:0024"


def test_stepping_keeps_the_selection_and_open_groups(monkeypatch):
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0024"})
    click(at, "node:multiply_negate_fusion", dbl=True)
    click(at, "node:multiply_negate_fusion")
    at.button(key="pass-next").click().run()
    ok(at)
    q = query(at)
    assert q["stage"] == "pass:0025" and q["selected"] == "multiply_negate_fusion"
    assert q["expanded"] == "fusion:multiply_negate_fusion"
    assert "%multiply_negate_fusion = " in texts(at)


def test_the_fusion_step_is_diffed_against_the_previous_step(monkeypatch, mlp):
    dump, tl = mlp
    i = tl.index_of("pass:0024")
    d = step_diff(dump, tl, i)
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0024"})
    assert f"vs step {tl.previous_ok(i)}: {len(d.added)} added" in texts(at)
    assert "added in this step" in texts(at)                 # the diff legend
    # the graph the page draws is the diff-coloured one
    view = graph_for(dump, ViewState(stage="pass:0024"), timeline=tl)
    assert ADDED_FILL in view.dot and "+ new fusion" in view.dot
    # inside an opened fusion, the instructions fused into it are amber (changed: fused)
    opened = graph_for(dump, ViewState(stage="pass:0024",
                                       expanded=("fusion:multiply_negate_fusion",)),
                       timeline=tl)
    assert CHANGED_FILL in opened.dot


def test_compare_target_and_only_changed_are_in_the_url(monkeypatch, mlp):
    dump, tl = mlp
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0024"})
    at.selectbox(key="pass-compare").select("before_optimizations").run()
    ok(at)
    assert query(at)["compare"] == "before_optimizations"
    assert "vs before optimizations:" in texts(at)
    at.toggle(key="pass-only").set_value(True).run()
    ok(at)
    assert query(at)["changed_only"] == "1"
    full = graph_for(dump, ViewState(stage="pass:0024", compare="before_optimizations"),
                     timeline=tl)
    only = graph_for(dump, ViewState(stage="pass:0024", compare="before_optimizations",
                                     changed_only=True), timeline=tl)
    assert any("showing" in n and "of" in n for n in only.notes)
    assert only.node_count <= full.node_count
    # a link with both opens the same
    again = app(sample("mlp_train"), monkeypatch, query(at))
    assert again.toggle(key="pass-only").value is True
    assert again.selectbox(key="pass-compare").value == "before_optimizations"
    again.selectbox(key="pass-compare").select("none").run()
    ok(again)
    assert "changed_only" not in query(again)               # nothing to compare: off


def test_changes_and_text_diff_tabs(monkeypatch):
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0024"})
    page = texts(at)
    assert "169 added, 0 removed, 154 changed (154 fused)" in page.replace("\\", "")
    options = at.button_group(key="diff-table").options
    assert any(o.startswith("Changed (154)") for o in options)
    assert any(o.startswith("Fusions (") for o in options)
    at.session_state[details_key(at)] = "Text diff"
    at.run()
    ok(at)
    html = "\n".join(h.value for h in at.get("html"))
    assert 'class="hl-diff"' in html and "→ fusion " in html      # where each op went
    assert "<script" not in html
    at.session_state[details_key(at)] = "Steps"
    at.run()
    ok(at)
    assert not at.exception


def test_layout_assignment_step_lists_layout_changes(monkeypatch, mlp):
    dump, tl = mlp
    d = step_diff(dump, tl, tl.index_of("pass:0017"))
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0017"})
    options = at.button_group(key="diff-table").options
    if d.layout_changes:
        assert any(o.startswith(f"Layout changes ({len(d.layout_changes)})") for o in options)


def test_history_of_a_fused_instruction_links_to_its_steps(monkeypatch, mlp):
    _, tl = mlp
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0024", "selected": "eq.15"})
    key = "history:0000:25:eq.15"
    at.session_state[key] = True                 # open the (lazy) history box
    at.run()
    ok(at)
    assert not at.exception
    buttons = [b for b in at.button if b.key and b.key.startswith("hist:eq.15:")]
    labels = [b.label for b in buttons]
    assert any("step 25" in x and "fused into multiply" in x.replace("\\", "") for x in labels)
    here = next(b for b in buttons if "step 25" in b.label)
    assert here.disabled                          # the step on screen
    other = next((b for b in buttons if not b.disabled), None)
    if other is not None:
        other.click().run()
        ok(at)
        assert query(at)["stage"] != "pass:0024"


def test_a_name_removed_by_the_step_is_explained(monkeypatch, mlp):
    dump, tl = mlp
    i = tl.index_of("pass:0008")           # algsimp removes instructions
    d = step_diff(dump, tl, i)
    assert d.removed
    gone = d.removed[0].name
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0008", "selected": gone})
    assert any("Removed by this step" in e.value for e in at.error)
    assert not at.exception


def test_an_error_step_shows_the_parser_message_and_the_rest_works(monkeypatch, tmp_path):
    out = tmp_path / "mlp"
    shutil.copytree(sample("mlp_train"), out)
    broken = glob.glob(str(out / "*.0024.*fusion*.txt"))[0]
    with open(broken, "a", encoding="utf-8") as f:
        f.write("\n%oops = f32[8 broken(\n")
    at = app(str(out), monkeypatch, {"stage": "pass:0024"})
    errors = "\n".join(e.value for e in at.error)
    assert os.path.basename(broken) in errors and "cannot be parsed" in errors
    assert any("⚠ does not parse" in o for o in at.selectbox(key="pick-stage").options)
    assert "stage=pass:0024" in link(open_popover(at, "pop-link"))   # the step is linkable
    at.button(key="pass-next").click().run()               # step away: all works
    assert not at.exception
    assert query(at)["stage"] == "pass:0025"
    assert "cannot be parsed" not in "\n".join(e.value for e in at.error)
    # the step after the broken one is compared with the last step that parsed
    assert "vs step 24:" in texts(at) or "vs step 23:" in texts(at)


def test_without_per_pass_files_before_and_after_are_compared_on_request(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    assert PER_PASS_FLAG in texts(at)
    assert len(at.selectbox(key="pick-stage").options) == 3   # with the StableHLO
    assert "added in this step" not in texts(at)            # plain explorer by default
    at.toggle(key="pass-vs-before").set_value(True).run()
    ok(at)
    assert query(at)["compare"] == "before_optimizations"
    page = texts(at)
    assert "added in this step" in page and "vs before optimizations:" in page
    at.session_state[details_key(at)] = "Text diff"
    at.run()
    ok(at)
    assert any('class="hl-diff"' in h.value for h in at.get("html"))


def test_show_it_in_the_graph_opens_boxes_instead_of_focusing(monkeypatch):
    dump = open_dump(sample("transformer"))
    box = "L:jit(train_step)/jvp()"                   # open by default: close it
    closed = ViewState(expanded=(box,))
    view = graph_for(dump, closed)
    module = dump.stage(dump.main)
    hidden = next(n for n, g in view.group_of.items()          # (not a folded constant)
                  if g == box and ("node:" + n) not in view.nodes
                  and module.find(n).opcode != "constant")
    at = app(sample("transformer"), monkeypatch, {"expanded": box, "selected": hidden})
    at.button(key=f"show:{hidden}").click().run()
    ok(at)
    q = query(at)
    assert "focus" not in q and q["selected"] == hidden
    assert box not in q.get("expanded", "")           # opened again (back to its default)
    after = graph_for(dump, ViewState.from_query(q))
    assert ("node:" + hidden) in after.nodes


def test_step_transitions_and_url_round_trip():
    from viz import navigation as N
    s = ViewState(dump="d", stage="pass:0024", selected="add.1", expanded=("fusion:f",),
                  viewport="1,2,3,4", focus="add.1")
    new, center = N.choose_step(s, "pass:0025")
    assert (new.stage, new.selected, new.expanded, new.focus) == \
        ("pass:0025", "add.1", ("fusion:f",), "add.1")
    assert new.viewport == "" and center == "node:add.1"
    assert N.choose_step(s, "pass:0024") == (s, "")
    fixed = N.set_compare(s, "before_optimizations")
    assert N.choose_step(fixed, "pass:0030")[0].compare == "before_optimizations"
    assert N.choose_step(fixed, "before_optimizations")[0].compare == ""   # not itself
    only = N.set_changed_only(s, True)
    assert only.changed_only and only.focus == ""
    assert not N.set_compare(only, "none").changed_only
    jumped, center = N.step_to(s, "pass:0003", "eq.2")
    assert (jumped.stage, jumped.selected, jumped.focus, center) == \
        ("pass:0003", "eq.2", "eq.2", "node:eq.2")
    q = only.to_query()
    assert q["changed_only"] == "1" and q["stage"] == "pass:0024"
    assert ViewState.from_query(q) == only
    assert ViewState.from_query({"changed_only": "yes"}).changed_only
    assert not ViewState.from_query({"changed_only": "0"}).changed_only
    restored = N.restore_view(ViewState(dump="mine"), {"dump": "other", "selected": "x"})
    assert restored.dump == "mine" and restored.selected == "x"
    # a module's pass step does not carry over to another module
    assert N.choose_module(s, "0002").stage == "after_optimizations"


def test_headless_render_draws_the_steps_diff_like_the_app(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT
    out = tmp_path / "step.dot"
    p = subprocess.run([sys.executable, "-m", "viz", "render", sample("mlp_train"),
                        "--stage", "pass:0024", "--changed-only", "--format", "dot",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    dot = out.read_text()
    assert ADDED_FILL in dot and "showing" in p.stderr
    plain = tmp_path / "plain.dot"
    subprocess.run([sys.executable, "-m", "viz", "render", sample("mlp_train"), "--stage",
                    "pass:0024", "--compare", "none", "--format", "dot", "--out", str(plain)],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    assert ADDED_FILL not in plain.read_text()


def test_the_next_step_is_laid_out_ahead(monkeypatch, mlp):
    """While a step is looked at, the next one's layout is made in the background: Next
    then finds it ready, and lays nothing out (a Graphviz that fails would fail the
    graph). How fast that is lives in bench/, not in a caption's milliseconds."""
    import time

    from viz import prefetching
    _, tl = mlp
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0003", "grouping": "flat"})
    at.button(key="pass-next").click().run()        # not after a page load: after a step
    ok(at)
    deadline = time.time() + 60
    while prefetching() and time.time() < deadline:
        time.sleep(0.1)
    assert not prefetching()
    looked_at = query(at)["stage"]

    def no_graphviz(*args, **kwargs):
        raise AssertionError("laid out again")
    monkeypatch.setattr("viz.layout._render", no_graphviz)
    at.button(key="pass-next").click().run()
    ok(at)
    assert query(at)["stage"] != looked_at                          # the next step
    assert any("laid out in" in c.value for c in at.caption)      # the graph was drawn
