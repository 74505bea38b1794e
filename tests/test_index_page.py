"""The app's first page as ``python -m ui.serve`` serves it (issue 32, item 16): Streamlit's
``index.html`` with a module preload of the code of the first page's widgets, and its static
files from memory. Streamlit's own static routes, wrapped as ``ui.index_page.install`` wraps
them, driven over HTTP in process (Starlette's test client), checked against the files of
the installed Streamlit: which chunks a widget needs is read from the chunks' own ``import``
statements here, not from the manifest the app reads."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit.web.server.starlette import starlette_app, starlette_static_routes

from tests.support.samples import sample
from ui import index_page

STATIC = index_page.static_dir()
PRELOAD = re.compile(r'<link rel="modulepreload" crossorigin href="\./([^"]+)">')
IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*"\./([^"]+\.js)"')


def _client(monkeypatch, base_url: str | None = None) -> TestClient:
    monkeypatch.setattr(starlette_app, "create_streamlit_static_assets_routes",
                        starlette_static_routes.create_streamlit_static_assets_routes)
    index_page.install()
    routes = starlette_app.create_streamlit_static_assets_routes(base_url=base_url)
    return TestClient(Starlette(routes=routes))


def _imports(files: list[str]) -> set[str]:
    """``files`` (under static/js) and every chunk they import statically, by their text."""
    out: set[str] = set()
    todo = list(files)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        with open(os.path.join(STATIC, "static", "js", name), encoding="utf-8") as f:
            todo += IMPORT.findall(f.read())
    return out


def _chunk(name: str) -> str:
    found = [os.path.basename(p) for p in glob.glob(os.path.join(STATIC, "static", "js",
                                                                 f"{name}.*.js"))
             if re.fullmatch(re.escape(name) + r"\.[\w-]+\.js", os.path.basename(p))]
    assert len(found) == 1, (name, found)
    return found[0]


def _index_html() -> str:
    with open(os.path.join(STATIC, "index.html"), encoding="utf-8") as f:
        return f.read()


def test_the_page_preloads_exactly_the_code_of_the_first_page_widgets(monkeypatch):
    r = _client(monkeypatch).get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert r.headers["cache-control"] == "no-cache"
    page = r.text
    own = _index_html()
    added = [p for p in PRELOAD.findall(page) if p not in PRELOAD.findall(own)]
    entry = re.search(r'<script type="module" crossorigin src="\./static/js/([^"]+)"', own)
    assert entry is not None
    wanted = (_imports([_chunk(n) for n in index_page.FIRST_PAGE])
              - _imports([entry.group(1)]))
    assert sorted(added) == sorted(f"static/js/{n}" for n in wanted)
    assert len(added) == len(set(added)) and len(added) > 20
    # Streamlit's own page is all there, the preloads inside its head
    assert page.replace("".join(f'    <link rel="modulepreload" crossorigin href="./{p}">\n'
                                for p in added) + "  ", "") == own
    assert page.index(added[-1]) < page.index("</head>")


def test_the_page_at_a_base_url_and_as_index_html(monkeypatch):
    client = _client(monkeypatch, base_url="lens")
    for path in ("/lens/", "/lens/index.html"):
        r = client.get(path)
        assert r.status_code == 200
        assert len(PRELOAD.findall(r.text)) > len(PRELOAD.findall(_index_html())), path


def test_static_files_come_from_memory_byte_for_byte(monkeypatch):
    client = _client(monkeypatch)
    files = PRELOAD.findall(client.get("/").text)[-3:] + [
        p[len(STATIC) + 1:] for p in glob.glob(os.path.join(STATIC, "static", "css", "*.css"))
        + glob.glob(os.path.join(STATIC, "static", "media", "*.woff2"))[:1]]
    kinds = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
             ".woff2": "font/woff2"}
    for rel in files:
        with open(os.path.join(STATIC, rel), "rb") as f:
            disk = f.read()
        for _ in range(2):                         # read once, then held
            r = client.get("/" + rel)
            assert r.status_code == 200, rel
            assert r.content == disk, rel
            assert r.headers["content-type"] == kinds[os.path.splitext(rel)[1]], rel
            assert r.headers["cache-control"] == "public, immutable, max-age=31536000", rel


def test_what_memory_does_not_answer_is_streamlits(monkeypatch):
    client = _client(monkeypatch)
    rel = PRELOAD.findall(client.get("/").text)[-1]
    with open(os.path.join(STATIC, rel), "rb") as f:
        disk = f.read()
    part = client.get("/" + rel, headers={"Range": "bytes=0-9"})
    assert part.status_code == 206 and part.content == disk[:10]
    head = client.head("/" + rel)
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) == len(disk)
    # an unknown path: Streamlit's page (its own, for its client-side routes)
    other = client.get("/static/js/no-such-chunk.js")
    assert other.status_code == 200 and other.text == _index_html()


def test_a_manifest_without_a_widget_is_named_and_costs_only_the_preloads(tmp_path, caplog):
    shutil.copy(os.path.join(STATIC, "index.html"), tmp_path / "index.html")
    with open(os.path.join(STATIC, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    manifest = {k: v for k, v in manifest.items()
                if not (isinstance(v, dict) and v.get("name") == "Selectbox")}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ValueError, match=r"manifest\.json: no dynamic chunk named Selectbox"):
        index_page.first_page_chunks(str(tmp_path))
    assert index_page.page(str(tmp_path)).decode("utf-8") == _index_html()
    assert "served without preloads" in caplog.text and "Selectbox" in caplog.text


def test_a_file_is_read_once_then_served_from_memory(monkeypatch, tmp_path):
    """The static folder copied (index, manifest, one chunk): the chunk comes from the copy
    and, once read, from memory, whatever the disk says after."""
    rel = PRELOAD.findall(_index_html())[-1]
    for name in ("index.html", "manifest.json", rel):
        os.makedirs(os.path.dirname(tmp_path / name), exist_ok=True)
        shutil.copy(os.path.join(STATIC, name), tmp_path / name)
    (tmp_path / rel).write_text("export const first = 1;\n", encoding="utf-8")
    monkeypatch.setattr(index_page, "static_dir", lambda: str(tmp_path))
    client = _client(monkeypatch)
    assert client.get("/" + rel).text == "export const first = 1;\n"
    (tmp_path / rel).write_text("export const second = 2;\n", encoding="utf-8")
    assert client.get("/" + rel).text == "export const first = 1;\n"


def test_the_hops_slider_is_drawn_only_with_focus_on(monkeypatch):
    """A first page draws no slider (its code, with moment and numbro, is not among the
    preloads); focus on, the hops are there with the link's value, and they move the view."""
    from tests.support.apptest import app, query
    at = app(sample("transformer"), monkeypatch)
    assert not [s for s in at.slider if s.key == "pick-radius"]
    at = app(sample("transformer"), monkeypatch,
             {"focus": "ynn_fusion.17", "selected": "ynn_fusion.17", "radius": "3"})
    hops = at.slider(key="pick-radius")
    assert hops.value == 3
    hops.set_value(1).run()
    assert query(at)["radius"] == "1" and query(at)["focus"] == "ynn_fusion.17"


def test_closed_sidebar_expanders_draw_nothing_until_opened(monkeypatch):
    """A first page of a dump draws no file uploader, text area or tabs of *Open a dump*
    (their code is not among the preloads) and nothing of *Compare with…* or *Compile for
    a target…*; opened, each draws its widgets."""
    from tests.support.apptest import app, open_expander
    at = app(sample("transformer"), monkeypatch)
    opener_tabs = {"Folder", "Stored", "Paste"}           # "Files" is a details tab too
    assert not at.get("file_uploader") and not at.text_area
    assert not [t for t in at.tabs if t.label in opener_tabs]
    assert {e.label for e in at.expander} >= {"Open a dump", "Compare with…",
                                              "Compile for a target…"}
    keys = {w.key for w in [*at.selectbox, *at.button]}
    assert not keys & {"compare-base", "compile-target", "compile-mlir"}
    open_expander(at, "Open a dump")
    assert {u.key.split(":")[0] for u in at.get("file_uploader")} == {"upload-files",
                                                                      "upload-folder"}
    assert len(at.text_area) == 1 and {t.label for t in at.tabs} >= opener_tabs
    open_expander(at, "Compare with…")
    open_expander(at, "Compile for a target…")
    keys = {w.key for w in [*at.selectbox, *at.button]}
    assert keys >= {"compare-base", "compile-target", "compile-mlir"}
