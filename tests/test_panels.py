"""The explorer's pure parts on the sample dumps: panels and navigation rules."""

from __future__ import annotations

import pytest
from conftest import sample

from compiler_bridge import open_dump
from compiler_bridge.hlo import layout_changes
from viz import navigation as N
from viz import panels as P
from viz import ViewState


@pytest.fixture(scope="module")
def transformer():
    dump = open_dump(sample("transformer"))
    return dump, dump.stage(dump.main, "after_optimizations")


@pytest.fixture(scope="module")
def cond_switch():
    dump = open_dump(sample("cond_switch"))
    return dump, dump.stage(dump.main, "after_optimizations")


@pytest.fixture(scope="module")
def scan_while():
    dump = open_dump(sample("scan_while"))
    return dump, dump.stage(dump.main, "after_optimizations")


# --------------------------------------------------------------------------- modules

def test_module_choices_put_the_main_program_first_with_counts(transformer):
    dump, module = transformer
    stats = {dump.main.id: module.stats()}
    choices = P.module_choices(dump.modules, dump.main.id, stats)
    assert choices[0].is_main and choices[0].instructions == module.stats()["instructions"]
    assert choices[0].label.startswith("★ jit_train_step · 0000 — ")
    assert f"{module.stats()['fusions']} fusions" in choices[0].label


def test_module_choices_say_which_module_cannot_be_read(transformer):
    dump, _ = transformer
    choices = P.module_choices(dump.modules, None, {}, {dump.main.id: "boom"})
    assert "cannot be read" in choices[0].label and choices[0].error == "boom"


def test_module_summary_counts_match_the_parser(transformer):
    _, module = transformer
    s = P.module_summary(module)
    stats = module.stats()
    assert (s.instructions, s.fusions, s.computations) == \
        (stats["instructions"], stats["fusions"], stats["computations"])
    assert s.opcodes == stats["opcodes"]
    assert sum(s.fusion_kinds.values()) == s.fusions
    assert s.layout_changes == len(layout_changes(module))
    assert s.parameters == len(module.entry.parameters)


def test_opcode_histogram_has_one_bar_per_opcode_up_to_top(transformer):
    _, module = transformer
    s = P.module_summary(module)
    fig = P.opcode_histogram(s, top=5)
    bars = fig.data[0]
    assert len(bars.y) == 6 and bars.y[0].endswith("other opcodes")
    assert bars.y[-1] == next(iter(s.opcodes))            # the most frequent on top


# --------------------------------------------------------------------------- search

def test_search_finds_dot_ops_exact_opcode_first(transformer):
    _, module = transformer
    r = P.search(module, "dot")
    assert r.hits and not r.error
    dots = [h for h in r.hits if h.opcode == "dot"]
    assert len(dots) == sum(1 for i in module.instructions() if i.opcode == "dot")
    assert r.hits[0].opcode == "dot"
    assert all(h.field in ("name", "opcode", "op_name", "shape") for h in r.hits)


def test_search_matches_shapes_and_op_names(transformer):
    _, module = transformer
    assert any(h.field == "shape" for h in P.search(module, "f32[64,192]").hits)
    assert any(h.field == "op_name" for h in P.search(module, "transpose(jvp").hits)
    hits = P.search(module, "self_attention|layer_norm", regex=True).hits
    assert hits and {h.field for h in hits} == {"source"}   # Python function names
    assert P.search(module, "   ").hits == []


def test_bad_regex_is_an_error_message_not_an_exception(transformer):
    _, module = transformer
    r = P.search(module, "dot(", regex=True)
    assert r.hits == [] and r.error.startswith("bad regular expression")


# --------------------------------------------------------------------------- inspector

def test_inspector_of_a_fusion(transformer):
    _, module = transformer
    info = P.inspect(module, "ynn_fusion.29")
    assert info.text.startswith("%ynn_fusion.29 = f32[2,32]{1,0} fusion(")
    assert info.source.startswith("/work/main/sample_dumps/programs/transformer.py:42")
    assert info.op_name == "jit(train_step)/jvp()/reduce_sum"
    assert info.fusion_kind == "kCustom" and info.fused_computation == "fused_computation.29"
    assert any(line.startswith("ROOT %reduce_sum.27") for line in info.fused_lines)
    assert [r.name for r in info.operands] == ["batch_0_.1", "constant.51"]
    assert info.users and info.bytes == 2 * 32 * 4
    assert '"__ynn_fusion"' in info.backend_config
    assert info.parts[0].layout == "{1,0}"


def test_inspector_names_the_layout_change(transformer):
    _, module = transformer
    change = layout_changes(module)[0]
    info = P.inspect(module, change.instruction)
    assert info.layout_change == change.reason


def test_inspector_lists_called_computations(scan_while):
    _, module = scan_while
    loop = next(i for i in module.entry.instructions if i.opcode == "while")
    info = P.inspect(module, loop.name)
    assert ("body", loop.body) in info.called and ("condition", loop.condition) in info.called
    assert P.inspect(module, "no_such_instruction") is None


def test_legacy_inline_source_locations():
    dump = open_dump(sample("legacy_jax0430"))
    module = dump.stage(dump.main, "after_optimizations")
    inst = next(i for i in module.instructions() if i.metadata.source_file)
    info = P.inspect(module, inst.name)
    assert info.source.startswith(f"{inst.metadata.source_file}:{inst.metadata.source_line}")


# --------------------------------------------------------------------------- computations

def test_breadcrumb_leads_from_entry_through_the_while(scan_while):
    _, module = scan_while
    loop = next(i for i in module.entry.instructions if i.opcode == "while")
    crumbs = P.breadcrumb(module, loop.body)
    assert crumbs[0].computation == module.entry.name and crumbs[0].label.startswith("ENTRY")
    assert crumbs[-1].computation == loop.body and crumbs[-1].via == loop.name
    assert crumbs[-1].label == f"{loop.name} › body"
    assert len(P.breadcrumb(module, None)) == 1


def test_computation_choices_start_with_entry_and_skip_fusions(cond_switch):
    _, module = cond_switch
    choices = P.computation_choices(module)
    assert choices[0].name == module.entry.name
    assert not any(c.is_fusion for c in choices)
    assert any("branch" in c.label for c in choices)
    assert len(P.computation_choices(module, include_fused=True)) == len(module.computations)


def test_locate_opens_the_fusion_around_a_fused_instruction(transformer):
    _, module = transformer
    loc = P.locate(module, "reduce_sum.27")
    assert loc.computation == module.entry.name
    assert loc.expand == ("fusion:ynn_fusion.29",) and loc.anchor == "ynn_fusion.29"
    assert P.locate(module, "ynn_fusion.29").expand == ()


# --------------------------------------------------------------------------- kernels

def test_cpu_kernel_files_follow_xla_names(cond_switch):
    dump, _ = cond_switch
    files = P.kernel_files(dump.main, "broadcast_add_fusion.1")
    assert files[0].name.endswith("broadcast_add_fusion.1_kernel_module.ir-with-opt.ll")
    assert files[-1].kind == "llvm_ir_no_opt"
    wrapped = P.kernel_files(dump.main, "wrapped_tanh")
    assert wrapped[0].name.endswith("__compute_module_wrapped_tanh.ir-with-opt.ll")
    assert P.kernel_files(dump.main, "tuple.1") == []
    assert [f.kernel for f in P.shared_kernel_files(dump.main)] == ["part_00"]


def test_extract_function_from_llvm_ir(cond_switch):
    dump, _ = cond_switch
    f = P.kernel_files(dump.main, "broadcast_add_fusion.1")[0]
    text = dump.read_text(f.path)
    body = P.extract_function(text, "broadcast_add_fusion.1", "llvm")
    assert body.startswith("define ") and "@broadcast_add_fusion.1(" in body.splitlines()[0]
    assert body.rstrip().endswith("}")
    assert P.extract_function(text, "nothing_here", "llvm") is None


def test_extract_function_from_ptx():
    ptx = (".version 8.0\n.target sm_80\n"
           ".visible .entry loop_add_fusion_1(\n .param .u64 p0\n)\n{\n  { .reg .b32 r; }\n"
           "  ret;\n}\n.visible .entry other(\n)\n{\n ret;\n}\n")
    body = P.extract_function(ptx, "loop_add_fusion.1", "ptx")
    assert body.startswith(".visible .entry loop_add_fusion_1(") and body.endswith("}")
    assert "other" not in body


# --------------------------------------------------------------------------- navigation

def test_choosing_a_module_starts_the_view_over():
    s = ViewState(dump="k", module="0000", selected="x", expanded=("fusion:a",), focus="x",
                  viewport="1,2,3,4", grouping="source")
    new = N.choose_module(s, "0002")
    assert new == ViewState(dump="k", module="0002", grouping="source")
    assert N.choose_module(s, "0000") is s


def test_choosing_a_grouping_keeps_fusion_toggles_only():
    s = ViewState(expanded=("fusion:a", "L:jit(f)"), viewport="1,2,3,4")
    assert N.choose_grouping(s, "flat").expanded == ("fusion:a",)


def test_graph_events(transformer):
    _, module = transformer
    s = ViewState()
    new, center = N.on_graph_event(s, module, "click", "node:ynn_fusion.29")
    assert new.selected == "ynn_fusion.29" and center == ""
    new, center = N.on_graph_event(s, module, "dblclick", "node:ynn_fusion.29")
    assert new.expanded == ("fusion:ynn_fusion.29",) and center == "group:fusion:ynn_fusion.29"
    closed, center = N.on_graph_event(new, module, "dblclick", "group:fusion:ynn_fusion.29")
    assert closed.expanded == () and center == "node:ynn_fusion.29"
    new, _ = N.on_graph_event(s, module, "dblclick", "group:L:jit(train_step)")
    assert new.expanded == ("L:jit(train_step)",) and new.selected == "L:jit(train_step)"
    new, _ = N.on_graph_event(s, module, "viewport", "", "1,2,3,4")
    assert new.viewport == "1,2,3,4"


def test_double_click_on_a_while_steps_into_its_body(scan_while):
    _, module = scan_while
    loop = next(i for i in module.entry.instructions if i.opcode == "while")
    new, _ = N.on_graph_event(ViewState(selected="x"), module, "dblclick", f"node:{loop.name}")
    assert new.computation == loop.body and new.selected == ""


def test_go_to_a_fused_instruction_opens_and_focuses(transformer):
    _, module = transformer
    new, center = N.go_to(ViewState(computation=""), module, "reduce_sum.27")
    assert new.selected == "reduce_sum.27" and new.focus == "ynn_fusion.29"
    assert new.expanded == ("fusion:ynn_fusion.29",) and new.computation == ""
    assert center == "node:reduce_sum.27"


def test_selecting_in_focus_mode_moves_the_focus():
    s = ViewState(focus="a", selected="a")
    assert N.select(s, "b")[0].focus == "b"
    assert N.select(ViewState(selected="a"), "b")[0].focus == ""
    assert N.set_focus(ViewState(selected="a"), True)[0].focus == "a"
    assert N.set_focus(ViewState(selected="fusion:a"), True)[0].focus == ""   # groups: no


def test_a_backtracking_regex_finishes(transformer):
    """`(\\w+\\W?)+#` backtracks exponentially in Python's `re` on every op_name (it held
    the interpreter, and every visitor's page, for minutes); the search runs patterns on
    a linear-time engine. A hang detector, not a speed goal: the bound is generous."""
    import threading
    _, module = transformer
    out = []
    worker = threading.Thread(target=lambda: out.append(
        P.search(module, r"((\w+\W?)+)+#", regex=True)), daemon=True)
    worker.start()
    worker.join(60)
    assert out, "the search did not finish"
    assert out[0].error == "" and out[0].total == 0


def test_a_regex_feature_the_engine_lacks_is_a_message(transformer):
    _, module = transformer
    got = P.search(module, r"(dot)\1", regex=True)
    assert got.hits == [] and "bad regular expression" in got.error and "\\1" in got.error


# RE2 runs it in linear time, at thousands of steps per character: about 30 s over the
# deep op_name's 1.5 MB (a catastrophic search burned 113-176 s of CPU, issue 33)
COSTLY = "[s/0-9].{1000}[s/0-9].{1000}[s/0-9]{1000}#"


@pytest.fixture(scope="module")
def deep_module(tmp_path_factory):
    from hostile_inputs import deep_op_name_dump
    dump = open_dump(deep_op_name_dump(str(tmp_path_factory.mktemp("deep"))))
    main = dump.main
    return dump.parse(main.after_optimizations.path)


def test_a_costly_regex_stops_at_its_budget_and_says_so(deep_module):
    import time
    start = time.monotonic()
    got = P.search(deep_module, COSTLY, regex=True, budget=0.5)
    assert time.monotonic() - start < 10                  # not the 30 s it would take
    assert got.error == "" and "stopped after its 0.5 s budget" in got.stopped
    assert "instructions searched" in got.stopped
    # a pattern within the budget searches everything, and the hits are those of the text
    whole = P.search(deep_module, "s199999/op", regex=True, budget=30)
    assert whole.stopped == "" and whole.total == 1


def test_the_page_says_a_regex_search_stopped(monkeypatch, tmp_path):
    from hostile_inputs import deep_op_name_dump

    from tests.support.apptest import app, plain
    monkeypatch.setattr(P, "SEARCH_BUDGET", 0.5)
    at = app(deep_op_name_dump(str(tmp_path)), monkeypatch)
    at.toggle(key="search-re").set_value(True)
    at.text_input(key="search-q").input(COSTLY).run()
    assert not at.exception
    warned = [plain(w.value) for w in at.warning]
    assert any("Search stopped" in w and "stopped after its 0.5 s budget" in w and
               "instructions searched" in w for w in warned), warned
