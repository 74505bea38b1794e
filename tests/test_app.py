"""The explorer page through Streamlit's AppTest: URL state, pickers, inspector, errors.

A click in the graph is simulated the way the browser reports it: the graph component's
state value ``click`` (``{"id": "node:<name>", "dbl": bool, "seq": ...}``) under its key.
"""

from __future__ import annotations

import glob
import os
import shutil

import pytest
from conftest import read, sample
from streamlit.testing.v1 import AppTest

from tests.support.apptest import APP, app, click, ok, query, texts, uploader

from compiler_bridge import open_dump
from ui.kit import GRAPH_KEY

@pytest.fixture
def two_module_dump(tmp_path) -> str:
    """cond_switch (module 0000) plus the transformer renamed to module 0002."""
    out = tmp_path / "dump"
    shutil.copytree(sample("cond_switch"), out)
    src = sample("transformer")
    for path in glob.glob(os.path.join(src, "module_0000.jit_train_step*")):
        name = os.path.basename(path).replace("module_0000.", "module_0002.", 1)
        if os.path.isdir(path):
            shutil.copytree(path, out / name)
        else:
            shutil.copy(path, out / name)
    return str(out)


def test_opens_the_main_module_after_optimizations(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    module = at.selectbox(key="pick-module")
    assert module.value == "0000"
    assert "jit_train_step" in module.options[0]
    assert at.selectbox(key="pick-stage").value == "after_optimizations"
    assert "main." in at.selectbox(key="pick-computation").value
    assert set(query(at)) == {"dump"}  # the dump's share id; defaults stay out of the URL
    assert not at.error


def test_module_picker_lists_the_main_program_first_with_counts(monkeypatch, two_module_dump):
    at = app(two_module_dump, monkeypatch)
    picker = at.selectbox(key="pick-module")
    label = picker.options[0]          # the transformer: the largest program comes first
    assert label.startswith("★ jit_train_step · 0002")
    assert "755 instructions, 81 fusions" in label
    assert "jit_route · 0000" in picker.options[1]
    picker.select("0000").run()
    assert query(at)["module"] == "0000"
    assert "jit_route" in texts(at)


def test_stage_picker_switches_to_before_optimizations(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    at.selectbox(key="pick-stage").select("before_optimizations").run()
    assert query(at)["stage"] == "before_optimizations"
    assert "before optimizations" in texts(at)
    assert not at.exception


def test_click_on_a_node_selects_it_in_the_url_and_inspector(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    click(at, "node:ynn_fusion.29")
    assert query(at)["selected"] == "ynn_fusion.29"
    page = texts(at)
    assert "%ynn_fusion.29 = f32[2,32]{1,0} fusion(" in page          # the HLO line
    assert "transformer.py:42" in page                               # file:line
    assert "jit(train_step)/jvp()/reduce_sum" in page                # op_name
    assert "fused_computation.29" in page                            # the fused computation


def test_double_click_on_a_fusion_opens_it_and_again_closes_it(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    click(at, "node:ynn_fusion.29", dbl=True)
    assert query(at)["expanded"] == "fusion:ynn_fusion.29"
    click(at, "group:fusion:ynn_fusion.29", dbl=True)
    assert "expanded" not in query(at)


def test_click_inside_an_open_fusion_shows_the_fused_instruction(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"expanded": "fusion:ynn_fusion.29"})
    click(at, "node:reduce_sum.27")
    q = query(at)
    assert q["selected"] == "reduce_sum.27" and q["expanded"] == "fusion:ynn_fusion.29"
    page = texts(at)
    assert "%reduce_sum.27 = f32[2,32]{1,0} reduce(" in page
    assert "transformer.py:42" in page


def test_group_click_and_open_button(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    click(at, "group:L:jit(train_step)/jvp()")
    assert query(at)["selected"] == "L:jit(train_step)/jvp()"
    toggle = at.button(key="toggle:L:jit(train_step)/jvp()")
    toggle.click().run()
    assert "L:jit(train_step)/jvp()" in query(at).get("expanded", "")


def test_operand_pill_moves_the_selection(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29"})
    pills = at.button_group(key="refs:Operands:ynn_fusion.29")
    assert pills.options[0].startswith("batch_0_.1 · f32[2,32,64]")
    pills.set_value("batch_0_.1").run()
    assert query(at)["selected"] == "batch_0_.1"


def test_double_click_on_a_while_steps_into_its_body_and_breadcrumb_leads_back(monkeypatch):
    dump = open_dump(sample("scan_while"))
    module = dump.stage(dump.main, "after_optimizations")
    loop = next(i for i in module.entry.instructions if i.opcode == "while")
    at = app(sample("scan_while"), monkeypatch)
    click(at, f"node:{loop.name}", dbl=True)
    assert query(at)["computation"] == loop.body
    crumbs = [b for b in at.button if b.key and b.key.startswith("crumb:")]
    assert len(crumbs) >= 2 and f"{loop.name} › body" in crumbs[-1].label
    crumbs[0].click().run()
    assert "computation" not in query(at)


def test_viewport_reported_by_the_graph_lands_in_the_url(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    at.session_state[GRAPH_KEY] = {"viewport": {"value": "10,20,300,200", "seq": "v1"}}
    at.run()
    assert query(at)["viewport"] == "10,20,300,200"


def test_url_restores_the_view(monkeypatch):
    at = app(sample("transformer"), monkeypatch,
             {"selected": "reduce_sum.27", "expanded": "fusion:ynn_fusion.29",
              "grouping": "source"})
    assert at.button_group(key="pick-grouping").value == "source"
    assert "%reduce_sum.27 = f32[2,32]{1,0} reduce(" in texts(at)


def _dots_in_file_order() -> list[str]:
    """The transformer's dot instructions in the order XLA printed them (its HLO text)."""
    import glob
    import re
    text = read(glob.glob(sample("transformer") + "/*cpu_after_optimizations.txt")[0])
    return re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = \S+ dot\(", text, re.M)


def test_search_enter_goes_to_the_first_hit_and_focus_stays_off(monkeypatch):
    """Issue 32, item 14: Enter in the search box goes to the first hit (no instruction is
    named 'dot', so the first dot in the file); picking another hit goes there; neither
    turns on focus mode, which the user did not ask for."""
    dots = _dots_in_file_order()
    at = app(sample("transformer"), monkeypatch)
    at.text_input(key="search-q").input("dot").run()
    q = query(at)
    assert q["selected"] == dots[0] and "focus" not in q
    assert any(g.startswith("fusion:ynn_fusion") for g in q["expanded"].split("~"))
    assert f"%{dots[0]} = " in texts(at)
    pick = at.selectbox(key="search-pick:False:dot")
    assert [o.split(" · ")[0] for o in pick.options if " · dot · " in o] == dots
    pick.select(dots[1]).run()
    q = query(at)
    assert q["selected"] == dots[1] and "focus" not in q
    assert f"%{dots[1]} = " in texts(at)


def test_search_with_focus_on_keeps_it_on_around_the_hit(monkeypatch):
    """Focus mode the user turned on stays on: its neighbourhood follows the hit (the
    fusion that holds the dot)."""
    dots = _dots_in_file_order()
    at = app(sample("transformer"), monkeypatch, {"selected": "reduce_sum.27",
                                                  "focus": "reduce_sum.27"})
    at.text_input(key="search-q").input("dot").run()
    q = query(at)
    assert q["selected"] == dots[0]
    assert q["focus"].startswith("ynn_fusion") and f"fusion:{q['focus']}" in q["expanded"]


def test_a_single_search_hit_needs_no_pick(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "reduce_sum.27"})
    at.text_input(key="search-q").input("ynn_fusion.17").run()
    assert query(at)["selected"] == "ynn_fusion.17"
    assert not [s for s in at.selectbox if str(s.key).startswith("search-pick")]
    at.query_params["selected"] = "reduce_sum.27"       # elsewhere again: one click back
    at.run()
    go = at.button(key="search-pick:False:ynn_fusion.17")
    assert "ynn_fusion.17" in go.label
    go.click().run()
    assert query(at)["selected"] == "ynn_fusion.17" and "focus" not in query(at)


def test_bad_regex_is_a_message(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    at.toggle(key="search-re").set_value(True)
    at.text_input(key="search-q").input("dot(").run()
    assert not at.exception
    assert any("bad regular expression" in w.value for w in at.warning)


def test_kernel_ir_is_shown_for_a_cpu_fusion(monkeypatch):
    at = app(sample("cond_switch"), monkeypatch, {"selected": "broadcast_add_fusion.1"})
    expanders = [e.label for e in at.expander]
    assert any("LLVM IR (optimized)" in x for x in expanders), expanders
    assert not any("define" in c.value for c in at.code)     # read only when opened
    at.session_state["kernel:broadcast_add_fusion.1"] = True
    at.run()
    assert any("define" in c.value and "@broadcast_add_fusion.1(" in c.value for c in at.code)


def test_module_that_fails_to_parse_names_the_file_and_keeps_the_rest(monkeypatch, tmp_path):
    out = tmp_path / "broken"
    shutil.copytree(sample("cond_switch"), out)
    after = glob.glob(str(out / "*cpu_after_optimizations.txt"))[0]
    with open(after, "a", encoding="utf-8") as f:
        f.write("\n%oops = f32[8 broken(\n")
    at = app(str(out), monkeypatch)
    errors = "\n".join(e.value for e in at.error)
    assert os.path.basename(after) in errors
    assert not at.exception
    at.selectbox(key="pick-stage").select("before_optimizations").run()
    assert not at.exception
    assert at.selectbox(key="pick-computation").value   # the module is shown


def test_a_folder_that_is_no_dump_is_a_message(monkeypatch, tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    at = app(str(tmp_path), monkeypatch)
    assert any("holds no HLO modules" in e.value for e in at.error)
    assert not at.exception


def test_a_missing_path_is_a_message(monkeypatch, tmp_path):
    at = app(str(tmp_path / "nope"), monkeypatch)
    assert any("no such file" in e.value for e in at.error)


def test_unknown_names_in_the_url_are_messages(monkeypatch):
    at = app(sample("transformer"), monkeypatch,
             {"module": "9999", "selected": "no_such_op", "computation": "nope"})
    page = texts(at)
    assert "no module '9999'" in page
    assert "no_such_op" in page and "is not in" in page
    assert "has no computation" in page
    assert not at.exception


def test_no_dump_shows_the_welcome(monkeypatch):
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("HLO Lens" in t.value for t in at.title)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def test_a_folder_upload_opens_in_the_store(monkeypatch, tmp_path):
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    src = sample("cond_switch")
    files = [(f"cond_switch/{n}", _read(os.path.join(src, n)), "text/plain")
             for n in sorted(os.listdir(src)) if os.path.isfile(os.path.join(src, n))]
    uploader(at, "upload-folder").set_value(files).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    share_id = query(at)["dump"]
    assert at.selectbox(key="pick-module").options[0].startswith("★ jit_route · 0000")
    # another session opening the link finds the dump in the store
    other = AppTest.from_file(APP, default_timeout=90)
    other.query_params["dump"] = share_id
    other.run()
    assert not other.exception and not other.error
    assert "jit_route" in texts(other)


def test_an_archive_with_a_broken_module_names_the_file(monkeypatch, tmp_path):
    import io
    import zipfile
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    src = sample("cond_switch")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n in sorted(os.listdir(src)):
            full = os.path.join(src, n)
            if not os.path.isfile(full):
                continue
            data = _read(full)
            if n.endswith("cpu_after_optimizations.txt"):
                data = data[: len(data) // 2]          # cut off mid-computation
                broken = n
            z.writestr(f"dump/{n}", data)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    uploader(at, "upload-files").upload("cond_switch.zip", buf.getvalue()).run()
    assert not at.exception
    errors = "\n".join(e.value for e in at.error)
    assert broken in errors
    at.selectbox(key="pick-stage").select("before_optimizations").run()
    assert not at.exception
    assert "jit_route" in texts(at)


def test_a_non_dump_upload_is_an_error_banner(monkeypatch, tmp_path):
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    uploader(at, "upload-files").upload("picture.png", b"\x89PNG\r\n").run()
    assert not at.exception
    assert any("picture.png" in e.value and "no XLA dump files" in e.value for e in at.error)
    assert "dump" not in query(at)


def test_a_slow_layout_never_blocks_the_page(monkeypatch):
    import time as _time

    from ui import graph
    from viz import layout
    real = layout.render_svg

    def slow(dot: str) -> str:
        _time.sleep(1.5)
        return real(dot)
    monkeypatch.setattr(layout, "render_svg", slow)
    monkeypatch.setattr(graph, "LAYOUT_WAIT", 0.05)
    at = app(sample("mlp_train"), monkeypatch, {"grouping": "flat"})
    assert any("still laying out" in w.value for w in at.warning)
    assert at.selectbox(key="pick-computation").value     # the rest of the page draws
    deadline = _time.time() + 60                # the layout goes on in the background
    while any("still laying out" in w.value for w in at.warning) and _time.time() < deadline:
        _time.sleep(0.5)
        at.run()
    assert not any("still laying out" in w.value for w in at.warning)
    assert "laid out in" in texts(at)


def test_node_budget_is_in_the_url_and_limits_the_view():
    from viz import set_budget
    from viz import ViewState
    assert set_budget(ViewState(), 20).budget == 50
    assert ViewState.from_query({"budget": "2500"}).budget == 2500
    assert ViewState.from_query({"budget": "junk"}).budget == 1500
    assert ViewState(budget=800).to_query() == {"budget": "800"}


def test_node_budget_control_writes_the_url(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    at.number_input(key="pick-budget").set_value(800).run()
    ok(at)
    assert query(at)["budget"] == "800"
    again = app(sample("transformer"), monkeypatch, query(at))
    assert again.number_input(key="pick-budget").value == 800


def test_a_run_from_a_lagging_address_keeps_the_newest_view(monkeypatch):
    """Rerun requests carry the browser's URL, which can lag a run behind: a run that
    starts from an address this session wrote before its last write keeps the last view
    (and writes it back); an address it never wrote (a user's edit) is taken as asked."""
    at = app(sample("transformer"), monkeypatch)
    click(at, "node:ynn_fusion.29")
    stale = query(at)
    click(at, "node:ynn_fusion.28")
    assert query(at)["selected"] == "ynn_fusion.28"
    for k in list(at.query_params):
        del at.query_params[k]
    for k, v in stale.items():
        at.query_params[k] = v
    at.run()
    ok(at)
    assert query(at)["selected"] == "ynn_fusion.28"
    at.query_params["selected"] = "batch_0_.1"
    at.run()
    ok(at)
    assert query(at)["selected"] == "batch_0_.1"
