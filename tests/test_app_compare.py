"""The comparison on the page (Streamlit's AppTest): ``--dump A --compare B``, the link
that carries it, a recompilation, swapping sides, a baseline that is gone; and the view
transitions behind them (``viz.navigation``)."""

from __future__ import annotations

import pytest
from conftest import sample
from tests.support.apptest import APP, exported_html, ok, open_expander, texts
from streamlit.testing.v1 import AppTest

from compiler_bridge import compare_dumps, open_dump
from compiler_bridge.dumps import Store
from viz import ViewState
from viz import navigation as N

A, B = "flags_default", "flags_no_fusion_emitters"


def _app(monkeypatch, query: dict | None = None, compare: str = "") -> AppTest:
    monkeypatch.setenv("HLOLENS_DUMP", sample(A))
    if compare:
        monkeypatch.setenv("HLOLENS_COMPARE", compare)
    else:
        monkeypatch.delenv("HLOLENS_COMPARE", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    ok(at)
    return at


def _query(at: AppTest) -> dict:
    return {k: v for k, v in at.query_params.items()}


def _tabs(at: AppTest) -> list[str]:
    return [t.label for t in at.tabs]


def test_dump_a_compare_b_shows_b_against_baseline_a(monkeypatch):
    at = _app(monkeypatch, compare=sample(B))
    at.run()                      # the first run moved the URL to the comparison
    ok(at)
    q = _query(at)
    store = Store()
    assert store.get(q["base"]).name == A and store.get(q["dump"]).name == B
    page = texts(at)
    expected = compare_dumps(open_dump(sample(A)), open_dump(sample(B)),
                             module_b="0000").reports[0]
    c = expected.comparison
    assert f"{c.counts_a.instructions:,} → {c.counts_b.instructions:,} instructions" in page
    assert "xla\\_cpu\\_use\\_fusion\\_emitters" in page or \
        "xla_cpu_use_fusion_emitters" in page
    assert _tabs(at)[:3] == ["Comparison", "Changes", "Text diff"]
    # stop comparing: the plain explorer again, and the CLI's --compare is not re-applied
    at.button(key="compare-stop").click().run()
    ok(at)
    assert "base" not in _query(at) and "Comparison" not in _tabs(at)


def test_with_compare_a_link_to_a_view_still_opens_that_view(monkeypatch):
    a = Store().add_path(sample(A)).share_id
    at = _app(monkeypatch, {"dump": a, "selected": "add.70"}, compare=sample(B))
    at.run()
    ok(at)
    q = _query(at)
    assert (q["dump"], q["selected"]) == (a, "add.70") and "base" not in q


def test_a_link_with_both_dumps_opens_the_comparison(monkeypatch):
    store = Store()
    a = store.add_path(sample(A)).share_id
    b = store.add_path(sample(B)).share_id
    at = _app(monkeypatch, {"dump": b, "base": a, "selected": "add.49"})
    assert "with baseline" in texts(at)
    assert "Comparison" in _tabs(at)
    # the inspector says what the selected instruction was in the baseline
    assert "taken out of wrapped\\_add into main\\.17" in texts(at) or \
        "taken out of wrapped_add into main.17" in texts(at)


def test_a_baseline_that_is_gone_is_a_message(monkeypatch):
    store = Store()
    b = store.add_path(sample(B)).share_id
    at = _app(monkeypatch, {"dump": b, "base": "nosuchdump0000"})
    assert any("baseline dump of this comparison is not here" in e.value for e in at.error)
    assert not at.exception


def test_recompilations_compare_from_the_sidebar(monkeypatch):
    at = open_expander(_app(monkeypatch), "Compare with…")
    assert "compiled 2 times" in texts(at)
    at.button(key="recompiled:jit_train_step").click().run()
    ok(at)
    q = _query(at)
    assert q["base"] == q["dump"] and q["base_module"] == "0000" and q["module"] == "0002"
    assert "two compiles in this dump" in texts(at)
    # swap: 0002 becomes the baseline
    at.button(key="compare-swap").click().run()
    ok(at)
    q = _query(at)
    assert (q["module"], q["base_module"]) == ("0000", "0002")


# --------------------------------------------------------------------------- transitions

def test_old_links_read_as_before_and_new_fields_are_written_only_when_set():
    assert "base" not in ViewState(dump="x").to_query()
    assert ViewState.from_query({"dump": "x", "module": "0000"}).base == ""
    s = ViewState(dump="b", base="a", base_module="0002")
    assert ViewState.from_query(s.to_query()) == s
    assert "v" not in s.to_query()          # no field changed its encoding


@pytest.mark.parametrize("module", ["0002", "jit_other"])
def test_another_module_keeps_the_baseline_and_pairs_again(module):
    s = ViewState(dump="b", module="0000", base="a", base_module="0000", selected="x")
    new = N.choose_module(s, module)
    assert (new.base, new.base_module, new.selected, new.module) == ("a", "", "", module)


def test_swap_and_stop():
    s = ViewState(dump="b", module="0000", base="a", changed_only=True, selected="x")
    swapped = N.swap_sides(s, "0007")
    assert (swapped.dump, swapped.module, swapped.base, swapped.base_module) == \
        ("a", "0007", "b", "0000")
    assert swapped.changed_only
    stopped = N.choose_base(s, "")
    assert (stopped.base, stopped.base_module, stopped.changed_only) == ("", "", False)
    assert stopped.selected == "x"


def test_the_baseline_side_lists_its_own_pass_history(monkeypatch):
    # mlp_train (per-pass files) as the baseline of the same program dumped by JAX 0.4.30
    from compiler_bridge.passes import instruction_history, pass_timeline
    store = Store()
    base = store.add_path(sample("mlp_train")).share_id
    shown = store.add_path(sample("legacy_jax0430")).share_id
    mlp, legacy = open_dump(sample("mlp_train")), open_dump(sample("legacy_jax0430"))
    diff = compare_dumps(mlp, legacy).reports[0].comparison.diff
    tl = pass_timeline(mlp, mlp.main)
    last = tl.index_of("after_optimizations")
    # an instruction of this compile whose baseline partner some pass step changed
    module = legacy.parse(legacy.main.after_optimizations.path)
    name, partner, events = next(
        (n, o, ev) for n, o in sorted(diff.new_to_old.items())
        if module.find(n) is not None and module.find(n).opcode != "parameter"
        and (ev := instruction_history(mlp, tl, last, o)))
    at = _app(monkeypatch, {"dump": shown, "base": base, "selected": name})
    page = texts(at)
    assert f"{len(events)} pass step" in page
    first = events[0]
    at.button(key=f"base-hist:{partner}:0").click().run()
    ok(at)
    q = _query(at)
    assert (q["dump"], q["base"]) == (base, shown)
    assert q["stage"] == tl.step(first.index).stage
    assert q["selected"] == (first.name_after or first.name_before)


def test_a_side_without_memory_totals_says_why(monkeypatch, tmp_path):
    # the module shown is one file (its after-optimizations text, as a bug report
    # attaches it): no buffer assignment, so its memory column is '?' — and the page
    # says why, not a bare '?'
    lone = tmp_path / "jit_train_step.txt"
    lone.write_bytes(open(sample(B) + "/module_0000.jit_train_step.cpu_after_optimizations"
                          ".txt", "rb").read())
    at = _app(monkeypatch, compare=str(lone))
    at.run()
    ok(at)
    assert "base" in _query(at)
    page = texts(at)
    assert "Memory" in page
    assert "This dump has no memory totals" in page and "no buffer-assignment file" in page, \
        page[page.find("Memory"):][:600]


def test_the_html_report_of_a_comparison_says_what_it_is_compared_with(monkeypatch):
    # the graph on screen is coloured by the comparison: the report names the baseline,
    # the summary and the flags that differ, and its legend has the comparison's colours
    def opened():
        at = _app(monkeypatch, compare=sample(B))
        at.run()                  # the first run moved the URL to the comparison
        ok(at)
        return at
    page = exported_html(monkeypatch, opened)
    c = compare_dumps(open_dump(sample(A)), open_dump(sample(B)),
                      module_b="0000").reports[0].comparison
    assert f"Compared with baseline {A}" in page, page[:2000]
    assert f"{c.counts_a.instructions:,} → {c.counts_b.instructions:,} instructions" in page
    assert "xla_cpu_use_fusion_emitters" in page
    assert "only in the baseline (ghost node)" in page


def test_a_links_unknown_baseline_module_names_the_baseline_and_pairs_instead(monkeypatch,
                                                                              tmp_path):
    """The message named the baseline by its store folder (a 64-digit content hash),
    and not what the page did instead."""
    import re

    from tests.support.fresh import compile_program
    a, _ = compile_program(tmp_path / "a", "f = lambda x: jnp.exp(x) @ x\n"
                                           "ARGS = (jnp.ones((8, 8)),)")
    b, _ = compile_program(tmp_path / "b", "f = lambda x: jnp.tanh(jnp.exp(x) @ x)\n"
                                           "ARGS = (jnp.ones((8, 8)),)")
    store = Store()
    base = store.add_path(str(a), name="before-tanh").share_id
    shown = store.add_path(str(b), name="after-tanh").share_id
    at = _app(monkeypatch, {"dump": shown, "base": base, "base_module": "nope"})
    page = texts(at)
    assert "Baseline before-tanh: no module 'nope'; modules are " in page, page
    assert "by name and structure instead." in page
    assert not re.search(r"[0-9a-f]{64}", page)
    assert "Comparison" in _tabs(at)          # paired as without base_module


def test_a_links_baseline_module_without_hlo_text_is_named_by_the_baselines_name(
        monkeypatch, tmp_path):
    """A TPU compile's dump whose module kept its options but lost its HLO text and
    StableHLO (a dump copied in part; Shardy's per-pass folder read as a module of its own
    was such a module). A link pairing with it said "Cannot compare with dump:
    CannotCompare: ... '<64-digit hash>: module 0000.jit_f jit_f has no HLO text'": the
    store's folder and Python's quotes; it names the baseline by its name."""
    import re

    from tests.support.backend_fresh import compile_for
    from tests.support.fresh import compile_program
    tpu, _ = compile_for("v5e", tmp_path / "tpu", 'PROGRAMS = {"f": (lambda x: jnp.tanh(x)'
                         '.sum(axis=0), (S((8, 128), on("x", "y")),), {})}')
    for p in [*tpu.glob("module_0000.*.txt"), *tpu.glob("module_0000.*/module.mlir")]:
        p.unlink()
    cpu, _ = compile_program(tmp_path / "cpu", "f = lambda x: jnp.tanh(x).sum(axis=0)\n"
                                               "ARGS = (jnp.ones((8, 128)),)")
    textless = next(m for m in open_dump(str(tpu)).modules
                    if m.first("after_optimizations") is None and not m.passes)
    store = Store()
    base = store.add_path(str(tpu), name="on-v5e").share_id
    shown = store.add_path(str(cpu), name="on-cpu").share_id
    at = AppTest.from_file(APP, default_timeout=120)
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    for k, v in {"dump": shown, "base": base, "base_module": textless.id}.items():
        at.query_params[k] = v
    at.run()
    ok(at)
    page = texts(at)
    assert f"on-v5e: module {textless.label} has no HLO text" in page, page
    assert not re.search(r"[0-9a-f]{64}", page) and "'" not in page.split("has no HLO")[0][-80:]
