"""Sharing in the page (AppTest): the store behind every dump, links, saved views,
comments (inspector and graph badges), a link whose dump is gone, the upload cap, exports,
and an app restarted on the same data folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, sample
from streamlit.testing.v1 import AppTest
from tests.support.apptest import (APP, app, click, link, ok, open_popover, query, texts,
                                   uploader)

from compiler_bridge import open_dump
from compiler_bridge.dumps import Store
from viz import graph_for
from viz import COMMENT_BORDER, share_link
from viz import ViewState


def data_dir() -> str:
    return os.environ["HLOLENS_DATA"]          # a temporary folder (conftest)


def submit(at: AppTest, label: str) -> AppTest:
    """Click a form's submit button (AppTest names them FormSubmitter:<form>-<label>)."""
    button = next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:")
                  and b.key.endswith("-" + label))
    button.click().run()
    ok(at)
    return at


def test_a_dump_given_with_dump_is_in_the_store_and_the_url_names_it(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    share_id = query(at)["dump"]
    stored = Store(data_dir()).get(share_id)
    assert stored.name == "transformer" and stored.modules[0]["name"] == "jit_train_step"
    # the same link in a session of a server started without --dump
    monkeypatch.delenv("HLOLENS_DUMP")
    other = AppTest.from_file(APP, default_timeout=90)
    other.query_params["dump"] = share_id
    other.query_params["selected"] = "ynn_fusion.29"
    other.run()
    ok(other)
    assert not other.exception and not other.error
    assert "%ynn_fusion.29 = f32[2,32]{1,0} fusion(" in texts(other)


def test_the_link_box_holds_the_whole_view(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29"})
    click(at, "node:ynn_fusion.29", dbl=True)
    shown = link(open_popover(at, "pop-link"))
    state = ViewState.from_query(query(at))
    assert shown == share_link(None, state)
    assert f"dump={state.dump}" in shown and "selected=ynn_fusion.29" in shown
    assert "expanded=fusion:ynn_fusion.29" in shown
    assert share_link("http://lens:8501/?old=1", state).startswith("http://lens:8501/?dump=")


def test_save_a_view_and_restore_it(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29",
                                                  "grouping": "source"})
    open_popover(at, "pop-save")
    at.text_input(key="save-name").input("layer norm fusion")
    at.text_area(key="save-note").input("the reduce_sum <b>here</b>")
    at.text_input(key="save-author").input("Ada")
    submit(at, "Save")
    share_id = query(at)["dump"]
    (view,) = Store(data_dir()).views(share_id)
    assert view.name == "layer norm fusion" and view.author == "Ada"
    assert view.query["selected"] == "ynn_fusion.29" and view.query["grouping"] == "source"
    # move away, then restore it from the list
    click(at, "node:batch_0_.1")
    at.button_group(key="pick-grouping").set_value("flat").run()
    ok(at)
    assert query(at)["selected"] == "batch_0_.1"
    at.button(key=f"view:{view.id}").click().run()
    ok(at)
    q = query(at)
    assert q["selected"] == "ynn_fusion.29" and q["grouping"] == "source"
    assert q["dump"] == share_id
    assert "on screen" in at.button(key=f"view:{view.id}").label    # the view on screen
    # the author's name is remembered for the next form
    assert at.text_input(key="comment-author").value == "Ada"


def test_saved_views_are_listed_for_everyone_who_opens_the_dump(monkeypatch):
    at = app(sample("transformer"), monkeypatch)
    share_id = query(at)["dump"]
    Store(data_dir()).save_view(share_id, "attention <script>x</script>",
                                {"dump": share_id, "selected": "ynn_fusion.8"},
                                note="look [here](http://evil.example)", author="Bo")
    other = app(sample("transformer"), monkeypatch, {"dump": share_id})
    assert any(e.label == "Saved views (1)" for e in other.expander)
    button = next(b for b in other.button if b.key and b.key.startswith("view:"))
    assert "\\<script\\>" in button.label                     # shown as text, escaped
    captions = "\n".join(c.value for c in other.caption)
    # no live markdown link: the brackets stay text, the address links to what it shows
    assert "\\[here\\]\\(<http://evil.example>\\)" in captions
    button.click().run()
    ok(other)
    assert query(other)["selected"] == "ynn_fusion.8"


def test_a_saved_view_and_a_comment_can_be_deleted(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29"})
    share_id = query(at)["dump"]
    store = Store(data_dir())
    v = store.save_view(share_id, "oops", {"dump": share_id})
    c = store.add_comment(share_id, "0000", "ynn_fusion.29", "wrong node")
    at.run()
    ok(at)
    assert any(e.label == "Saved views (1)" for e in at.expander)
    assert any(e.label == "✎ Comments (1)" for e in at.expander)
    at.button(key=f"view-del:{v.id}:yes").click().run()
    ok(at)
    assert store.views(share_id) == []
    assert any(e.label == "Saved views (0)" for e in at.expander)
    at.button(key=f"comment-del:{c.id}:yes").click().run()
    ok(at)
    assert store.comments(share_id) == []
    assert any(e.label == "✎ Comments (0)" for e in at.expander)


def test_a_comment_shows_in_the_inspector_and_as_a_badge(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29"})
    at.text_area(key="comment-text:ynn_fusion.29").input("why kCustom? <img src=x>")
    at.text_input(key="comment-author").input("Cy")
    submit(at, "Comment")
    share_id = query(at)["dump"]
    (c,) = Store(data_dir()).comments(share_id, module="0000")
    assert (c.node, c.author, c.text) == ("ynn_fusion.29", "Cy", "why kCustom? <img src=x>")
    assert any(e.label == "✎ Comments (1)" for e in at.expander)
    page = texts(at)
    assert "**Cy**" in page and "why kCustom? \\<img src\\=x\\>" in page
    assert "comments on the node" in page                       # the legend
    # the graph draws the badge: on the node, and on a closed box that holds it
    dump = open_dump(sample("transformer"))
    view = graph_for(dump, ViewState(), comments={"ynn_fusion.29": 1})
    assert "✎ 1" in view.dot and COMMENT_BORDER in view.dot
    box = next(g for n, g in view.group_of.items() if n == "ynn_fusion.29")
    closed = graph_for(dump, ViewState(expanded=(box,)), comments={"ynn_fusion.29": 1})
    assert "✎ 1 inside" in closed.dot
    # a comment on an instruction inside a fusion marks the (closed) fusion node
    inner = graph_for(dump, ViewState(), comments={"reduce_sum.27": 2})
    assert "✎ 2" in inner.dot


def test_an_empty_comment_is_refused(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29"})
    submit(at, "Comment")
    assert any("Write something first" in w.value for w in at.warning)
    assert Store(data_dir()).comments(query(at)["dump"]) == []


def test_a_link_to_a_dump_that_is_gone_says_so_and_lists_the_dumps(monkeypatch):
    monkeypatch.setenv("HLOLENS_LIST_ALL", "1")        # a team server: every dump listed
    at = app(sample("transformer"), monkeypatch)
    share_id = query(at)["dump"]
    monkeypatch.delenv("HLOLENS_DUMP")
    gone = AppTest.from_file(APP, default_timeout=90)
    gone.query_params["dump"] = "Zx9-no-such-dump"
    gone.query_params["selected"] = "dot.1"
    gone.run()
    ok(gone)
    assert not gone.exception
    (message,) = [e.value for e in gone.error]
    assert "not here" in message and "not in this HLO Lens store" in message
    offer = gone.button(key=f"gone:{share_id}")
    assert "transformer" in offer.label
    offer.click().run()
    ok(gone)
    assert query(gone)["dump"] == share_id and not gone.error


def test_an_upload_over_the_cap_is_a_clear_message(monkeypatch):
    from ui import opening
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    monkeypatch.setattr(opening, "upload_cap", lambda: 1000)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    ok(at)
    box = uploader(at, "upload-files")
    box.upload("big.zip", b"PK\x03\x04" + b"0" * 5000).run()
    assert not at.exception
    message = "\n".join(e.value for e in at.error)
    assert "big.zip" in message and "over this server's upload cap" in message
    assert Store(data_dir()).list() == []



def test_an_upload_1500_folders_deep_is_a_clear_message(monkeypatch):
    """Issue 33, item 10: a zip member 1,500 folders deep showed a raw RecursionError."""
    import io
    import zipfile
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("/".join(["d"] * 1500) + "/module_0000.f.before_optimizations.txt", "x")
    box = uploader(at, "upload-files")
    box.upload("deep.zip", buf.getvalue()).run()
    assert not at.exception
    message = "\n".join(e.value for e in at.error)
    assert "deep.zip" in message and "1,500 folders deep" in message, message
    assert "RecursionError" not in message and Store(data_dir()).list() == []


def test_a_stored_dump_opens_on_a_full_disk(monkeypatch):
    """Issue 33, item 10: with the store's disk full, a link to a stored dump showed
    'disk I/O error'. It opens, with its saved views; saving one says why it cannot."""
    from tests.support.faults import disk_full
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    store = Store(data_dir())
    stored = store.add_path(sample("cond_switch"))
    store.save_view(stored.share_id, "kept view", {"dump": stored.share_id})
    disk_full(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["dump"] = stored.share_id
    at.run()
    ok(at)
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="pick-module").options[0].startswith("★ jit_route · 0000")
    assert any(b.label.startswith("kept view") for b in at.button), [b.label for b in at.button]
    open_popover(at, "pop-save")
    at.text_input(key="save-name").input("new view")
    submit(at, "Save")
    assert any("cannot be written now" in w.value for w in at.warning), \
        [w.value for w in at.warning]


@pytest.mark.parametrize("sign_in", [True, False])
def test_a_typed_author_is_marked_where_there_is_sign_in(monkeypatch, sign_in):
    """Issue 33, item 10: with sign-in configured, a name typed into the form looked the
    same as a signed-in account. Views and comments now say which is which; without
    sign-in on the server every name is typed, and none is marked."""
    at = app(sample("transformer"), monkeypatch)
    share_id = query(at)["dump"]
    store = Store(data_dir())
    store.save_view(share_id, "typed", {"dump": share_id}, author="ann")
    store.save_view(share_id, "signed", {"dump": share_id}, author="bo",
                    account="bo")
    store.add_comment(share_id, "0000", "ynn_fusion.29", "typed one", author="ann")
    store.add_comment(share_id, "0000", "ynn_fusion.29", "signed one",
                      author="bo", account="bo")
    at = AppTest.from_file(APP, default_timeout=90)
    if sign_in:
        at.secrets["auth"] = {"client_id": "x"}
    at.query_params.update({"dump": share_id, "selected": "ynn_fusion.29"})
    at.run()
    ok(at)
    lines = [str(m.value).replace("**", "") for m in list(at.caption) + list(at.markdown)
             if re.match(r"(\*\*)?(ann|bo)\b", str(m.value))]
    assert len(lines) == 4, lines                      # two views, two comments
    typed = [x for x in lines if x.startswith("ann")]
    signed = [x for x in lines if x.startswith("bo")]
    assert len(typed) == len(signed) == 2
    if sign_in:
        assert all(x.startswith("ann (typed, not signed in) · ") for x in typed), typed
        assert all(x.startswith("bo ✓ signed in · ") for x in signed), signed
    else:
        assert not any("signed in" in x for x in lines), lines

def test_exports_are_offered(monkeypatch):
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29"})
    open_popover(at, "pop-export")
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Graph as SVG", "Graph as DOT", "HTML report", "Repro bundle (zip)",
                      "Model Explorer graph JSON", "Model Explorer node data JSON"]


def test_the_html_report_is_self_contained_and_escaped(monkeypatch, tmp_path):
    from ui import model, sharing
    from viz import render_svg
    at = app(sample("transformer"), monkeypatch, {"selected": "ynn_fusion.29"})
    state = ViewState.from_query(query(at))
    store = Store(data_dir())
    store.add_comment(state.dump, "0000", "ynn_fusion.29", "</td><script>alert(1)</script>")
    stored = store.get(state.dump)
    dump = open_dump(store.folder(state.dump))
    opened = model.Opened(dump, state.dump, stored.name, "", state.dump)
    module = dump.stage(dump.main)
    from compiler_bridge.passes import pass_timeline
    shown = model.Shown(dump.main, "after_optimizations", dump.main.after_optimizations.path,
                       module, pass_timeline(dump, dump.main), 1)
    view = graph_for(dump, state)
    from viz import panels
    info = panels.inspect(module, "ynn_fusion.29")
    monkeypatch.setattr(sharing, "store", lambda: store)
    report = sharing._report(opened, shown, view, render_svg(view.dot),
                                model.Inspected("ynn_fusion.29", info, None), state,
                                lambda: [{"kernel": "<b>k</b>", "us": 1.0}],
                                "http://lens/?dump=" + state.dump)
    assert "http://lens/?dump=" in report             # the link, as text
    assert "<script>alert" not in report and "&lt;script&gt;alert(1)" in report
    assert "&lt;b&gt;k&lt;/b&gt;" in report             # the runtime rows hook
    assert "transformer.py:42" in report
    body = report.replace("http://lens/?dump=" + state.dump, "")
    assert "http://" not in body and "https://" not in body


def test_an_app_restarted_on_the_same_data_folder_lists_dumps_and_views(tmp_path):
    """Two separate processes on one HLOLENS_DATA: the first adds a dump and a saved
    view, the second (a new server process) lists both."""
    data = str(tmp_path / "data")
    first = textwrap.dedent(f"""
        import json, os
        from streamlit.testing.v1 import AppTest
        from compiler_bridge.dumps import Store
        at = AppTest.from_file({APP!r}, default_timeout=90)
        at.query_params["selected"] = "ynn_fusion.29"
        at.run()
        assert not at.exception and not at.error
        sid = at.query_params["dump"]
        at.session_state["pop-save"] = True
        at.run()
        at.text_input(key="save-name").input("after restart")
        at.text_input(key="save-author").input("Di")
        next(b for b in at.button if b.key and b.key.endswith("-Save")).click().run()
        print(json.dumps({{"sid": sid, "views": len(Store().views(sid))}}))
    """)
    second = textwrap.dedent(f"""
        import json
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({APP!r}, default_timeout=90)
        at.run()
        assert not at.exception and not at.error
        stored = [b.key for b in at.button if b.key and b.key.startswith("stored:")]
        at2 = AppTest.from_file({APP!r}, default_timeout=90)
        at2.query_params["dump"] = stored[0].split(":", 1)[1]
        at2.run()
        views = [b.label for b in at2.button if b.key and b.key.startswith("view:")]
        print(json.dumps({{"stored": stored, "views": views,
                          "errors": [e.value for e in at2.error]}}))
    """)
    env = dict(os.environ, HLOLENS_DATA=data, HLOLENS_DUMP=sample("transformer"),
               PYTHONPATH=ROOT, HLOLENS_LIST_ALL="1")   # a team server: lists every dump
    out = subprocess.run([sys.executable, "-c", first], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    made = json.loads(out.stdout.strip().splitlines()[-1])
    assert made["views"] == 1
    env.pop("HLOLENS_DUMP")                          # restarted without --dump
    out = subprocess.run([sys.executable, "-c", second], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["stored"] == [f"stored:{made['sid']}"]
    assert seen["views"] == ["after restart"] and seen["errors"] == []


def test_a_dump_dump_removed_from_the_store_is_added_again(monkeypatch):
    at = app(sample("cond_switch"), monkeypatch)
    share_id = query(at)["dump"]
    Store(data_dir()).remove(share_id)
    again = app(sample("cond_switch"), monkeypatch)
    assert query(again)["dump"] != share_id and not again.error
    assert "jit_route" in texts(again)


def test_a_link_to_a_dump_that_lost_a_file_names_it_and_shows_the_rest(monkeypatch, tmp_path):
    """Issue 17, item 6: the app silently showed another stage when a stored file was
    deleted. Now it names the lost file, asks for the dump again, and shows what is left."""
    import shutil
    copy = str(tmp_path / "scan_while")
    shutil.copytree(sample("scan_while"), copy)
    at = app(copy, monkeypatch)
    share_id = query(at)["dump"]
    store = Store(data_dir())
    lost = "module_0000.jit_step.cpu_after_optimizations.txt"
    os.remove(os.path.join(store.folder(share_id), lost))
    monkeypatch.delenv("HLOLENS_DUMP")
    later = AppTest.from_file(APP, default_timeout=90)
    later.query_params["dump"] = share_id
    store._checked.clear()
    from ui import opening
    opening.store()._checked.clear()                 # the app's store: no 5 s grace
    later.run()
    ok(later)
    (warning,) = [w.value for w in later.warning if "lost" in w.value]
    from ui.kit import md
    assert md(lost) in warning and "Upload the same dump again" in warning
    assert data_dir() not in warning
    assert "before optimizations" in texts(later)    # what is left, and which stage it is


def test_a_visitor_is_listed_their_own_dumps_not_everyones(monkeypatch):
    """Issue 17, item 7: a wrong ?dump= page listed every stored dump to anyone. Links
    are the capability: a visitor sees the dumps they uploaded or opened."""
    monkeypatch.delenv("HLOLENS_LIST_ALL", raising=False)
    owner = app(sample("transformer"), monkeypatch)
    share_id = query(owner)["dump"]
    monkeypatch.delenv("HLOLENS_DUMP")
    stranger = AppTest.from_file(APP, default_timeout=90)
    stranger.query_params["dump"] = "Zx9-no-such-dump"
    stranger.run()
    ok(stranger)
    assert not [b for b in stranger.button if b.key and b.key.startswith("gone:")]
    assert "No dumps of yours yet" in texts(stranger)
    # the owner's session (their browser) lists it, on the same kind of page
    owner.query_params["dump"] = "Zx9-no-such-dump"
    owner.run()
    assert owner.button(key=f"gone:{share_id}")
    # once the stranger opens it by its link, it is theirs to find again
    stranger.query_params["dump"] = share_id
    stranger.run()
    stranger.query_params["dump"] = "Zx9-no-such-dump"
    stranger.run()
    assert stranger.button(key=f"gone:{share_id}")


def test_a_link_to_a_module_the_dump_lacks_names_the_dump_and_what_is_shown(monkeypatch,
                                                                            tmp_path):
    """The message named the dump by its store folder (a 64-digit content hash) and not
    what the page showed instead: '53ec…0fa: no module 'nope'; modules are …'."""
    from tests.support.fresh import compile_program
    dump, _ = compile_program(tmp_path, "f = lambda x: jnp.sin(x) * 2\nARGS = (jnp.ones(3),)")
    at = app(str(dump), monkeypatch, {"module": "nope"})
    main = open_dump(str(dump)).main
    said = [w.value for w in at.warning if "nope" in w.value]
    assert said, texts(at)
    page = texts(at)
    assert "Dump dump: no module 'nope'; modules are " in page
    assert f"showing {main.label}." in page
    assert not re.search(r"[0-9a-f]{64}", page)


def test_the_svg_and_dot_exports_say_what_they_show(monkeypatch, tmp_path):
    """The downloaded SVG and DOT named nothing (the SVG's only title was Graphviz's 'G'):
    each now says its dump, module, stage and computation, as the HTML report does, with
    a dump name holding '<', '&' and quotes kept as text."""
    import xml.etree.ElementTree as ET

    import jax
    import jax.numpy as jnp
    import hlolens
    from tests.support.apptest import exported
    name = 'run <3> & "fast"'
    dump = hlolens.write_dump(jax.jit(lambda x: jnp.tanh(x) * 2), jnp.ones(8),
                              out=str(tmp_path / name))
    entry = open_dump(dump)
    entry = entry.stage(entry.main).entry.name
    want = f"Dump {name}, module 0000 jit__lambda, after optimizations, computation {entry}."
    svg = exported(monkeypatch, lambda: app(dump, monkeypatch), ".svg")
    root = ET.fromstring(svg)
    assert root[0].tag == "{http://www.w3.org/2000/svg}title" and root[0].text == want
    dot = exported(monkeypatch, lambda: app(dump, monkeypatch), ".dot")
    assert dot.splitlines()[0] == "// HLO Lens: " + want
    assert dot.splitlines()[1].startswith("digraph")
