"""Two visitors of one server (two AppTest sessions: each its own browser, with its own
list of links). Links are the capability: a visitor is offered only the dumps their
browser uploaded or opened, under their own links (issue 33, item 1).
"""

from __future__ import annotations

import io
import os
import zipfile

from conftest import sample
from streamlit.testing.v1 import AppTest
from tests.support.apptest import APP, ok, open_expander, query, uploader

from compiler_bridge.dumps import Store


def zipped(name: str) -> bytes:
    """A sample dump as a visitor uploads it: a zip of its folder."""
    src = sample(name)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for root, _, files in os.walk(src):
            for fn in sorted(files):
                full = os.path.join(root, fn)
                z.write(full, f"{name}/{os.path.relpath(full, src)}")
    return buf.getvalue()


def visitor(monkeypatch) -> AppTest:
    """A fresh browser on a server started without --dump, listing only its own dumps."""
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    monkeypatch.delenv("HLOLENS_LIST_ALL", raising=False)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    ok(at)
    return at


def upload(at: AppTest, name: str, data: bytes) -> str:
    """Upload an archive from the sidebar; the share id the page then shows."""
    uploader(at, "upload-files").upload(name, data).run()
    ok(at)
    assert not at.error, [e.value for e in at.error]
    return query(at)["dump"]


def baselines(at: AppTest) -> list[str]:
    """The labels of the *Baseline dump* picker's options (AppTest shows labels only)."""
    if not [s for s in at.selectbox if s.key == "compare-base"]:
        open_expander(at, "Compare with…")          # it fills only when open
    return at.selectbox(key="compare-base").options


def stored_buttons(at: AppTest) -> set[str]:
    """The share ids of the sidebar's Stored list (in *Open a dump*, filled when open)."""
    open_expander(at, "Open a dump")
    return {b.key.split(":", 1)[1] for b in at.button if b.key and b.key.startswith("stored:")}


def test_visitor_b_is_never_offered_visitor_as_upload(monkeypatch):
    """Visitor B, in a fresh browser, uploads a dump: the Baseline dump picker of *Compare
    with…* listed every stored dump, A's too, and picking it put A's link in the URL."""
    a = visitor(monkeypatch)
    a_id = upload(a, "cond_switch.zip", zipped("cond_switch"))
    b = visitor(monkeypatch)
    b_id = upload(b, "scan_while.zip", zipped("scan_while"))
    assert baselines(b) == ["nothing (no comparison)",
                            "scan_while.zip (this dump: another module)"]
    assert stored_buttons(b) == {b_id}
    # A's browser still finds theirs, and is offered no dump of B's
    a.run()
    ok(a)
    assert stored_buttons(a) == {a_id}
    assert not [o for o in baselines(a) if o.startswith("scan_while")]
    # B's own second upload is offered to B
    upload(b, "transformer.zip", zipped("transformer"))
    assert [o for o in baselines(b) if o.startswith("scan_while.zip · ")]


def test_visitor_b_uploading_as_bytes_gets_a_link_of_their_own(monkeypatch):
    """Uploading the same bytes handed B A's link, with A's saved views (and, without
    sign-in, the right to delete them). Now the files are stored once and B gets a link,
    views and comments of their own."""
    data = zipped("cond_switch")
    a = visitor(monkeypatch)
    a_id = upload(a, "cond_switch.zip", data)
    store = Store(os.environ["HLOLENS_DATA"])
    store.save_view(a_id, "A's view", {"dump": a_id, "selected": "conditional"})
    store.add_comment(a_id, "0000", "conditional", "A's comment")
    b = visitor(monkeypatch)
    b_id = upload(b, "mine.zip", data)
    assert b_id != a_id
    assert store.get(b_id).hash == store.get(a_id).hash           # the files: once
    assert any(e.label == "Saved views (0)" for e in b.expander)
    assert not [x for x in b.button if x.key and x.key.startswith(("view:", "view-del:"))]
    assert stored_buttons(b) == {b_id}
    # nothing, and B's own dump under B's name: not A's link
    assert baselines(b) == ["nothing (no comparison)", "mine.zip (this dump: another module)"]
    # the same bytes again from B's browser: B's link again; A still sees A's view
    b_again = upload(b, "mine-again.zip", data)
    assert b_again == b_id
    a.run()
    ok(a)
    assert any(e.label == "Saved views (1)" for e in a.expander)
    assert stored_buttons(a) == {a_id}
