"""The page the browser first loads, with the code of the first page's widgets asked for
from its first byte.

Streamlit's ``index.html`` names only the code of its frame; the code of each kind of
widget (a select box, a slider, the component's runtime...) is fetched when the first
element of that kind arrives, after the page's script ran, on the browser's six
connections: a waterfall of ~60 files between the first delta and the graph (issue 32,
item 16). :func:`install` (run by ``ui.serve`` before the server starts) serves
``index.html`` at the app's address with a ``<link rel="modulepreload">`` for each of those
files, found at start from Streamlit's own asset manifest (``manifest.json``: each chunk's
file and the chunks it imports) by the names of the widget kinds below, so no file name
(they carry content hashes) is written here. The browser fetches them while it runs
Streamlit's own code and the script runs. The static files themselves (~120 a fresh page)
come from memory, read once (:class:`_Served`). Every other request is Streamlit's.
"""

from __future__ import annotations

import html
import json
import logging
import mimetypes
import os
from typing import Any

log = logging.getLogger(__name__)

# The kinds of element the opening page of a dump draws (pickers, number input, toggles,
# search box and buttons; markdown with HTML; the graph component), by their chunk's name
# in Streamlit's manifest. The upload and paste box is drawn only when *Open a dump* is
# opened: its file uploader and text area are not preloaded.
FIRST_PAGE = ("BidiComponent", "Selectbox", "NumberInput", "Checkbox", "TextInput",
              "ButtonGroup", "Button", "rehype-raw")

_ENTRY = "index.html"
_YEAR = 365 * 24 * 3600          # what Streamlit gives its hashed files


def static_dir() -> str:
    from streamlit import file_util

    return file_util.get_static_dir()


def first_page_chunks(folder: str, names: tuple[str, ...] = FIRST_PAGE) -> list[str]:
    """The files (``static/js/...``, relative to ``folder``) of the chunks named ``names``
    and of every chunk they import, less those ``index.html`` already loads; dependencies
    first. Raises ``ValueError`` naming the manifest and the chunk when a name is not in it
    (Streamlit renamed a widget)."""
    path = os.path.join(folder, "manifest.json")
    with open(path, encoding="utf-8") as f:
        manifest: dict[str, Any] = json.load(f)
    by_name = {v.get("name"): k for k, v in manifest.items()
               if isinstance(v, dict) and v.get("isDynamicEntry")}
    missing = [n for n in names if n not in by_name]
    if missing or _ENTRY not in manifest:
        raise ValueError(f"{path}: no dynamic chunk named {', '.join(missing)}"
                         if missing else f"{path}: no entry {_ENTRY!r}")

    def closure(keys: list[str]) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()

        def visit(key: str) -> None:
            if key in seen:
                return
            seen.add(key)
            for dep in manifest[key].get("imports", []):
                visit(dep)
            out.append(manifest[key]["file"])

        for k in keys:
            visit(k)
        return out

    loaded = set(closure([_ENTRY]))
    return [f for f in closure([by_name[n] for n in names]) if f not in loaded]


def page(folder: str) -> bytes:
    """Streamlit's ``index.html`` with a module preload of each first-page chunk (the page
    unchanged when the manifest cannot be read: an upgrade of Streamlit costs speed, never
    the page)."""
    with open(os.path.join(folder, _ENTRY), encoding="utf-8") as f:
        text = f.read()
    try:
        files = first_page_chunks(folder)
    except (OSError, ValueError, KeyError, TypeError) as e:
        log.warning("index.html served without preloads: %s", e)
        return text.encode("utf-8")
    links = "".join(f'    <link rel="modulepreload" crossorigin href="./{html.escape(p)}">\n'
                    for p in files)
    head = text.rfind("</head>")
    if head < 0:
        log.warning("index.html served without preloads: %s has no </head>", _ENTRY)
        return text.encode("utf-8")
    return (text[:head] + links + "  " + text[head:]).encode("utf-8")


class _Served:
    """Streamlit's static files (an ASGI app) with two changes for a plain GET: the app's
    address (and ``index.html``) answers :func:`page`, and a file of the static folder
    comes from memory, read once: Starlette's file response opens, stats and reads each
    file through a worker thread, about 1.5 ms of the server's CPU a file, ~120 files a
    fresh page, while the page's script runs in the same process. Anything else (HEAD, a
    range, a path not in the folder) is Streamlit's."""

    def __init__(self, inner: Any, folder: str) -> None:
        self.inner = inner
        self.page = page(folder)
        self.folder = folder
        self.files: dict[str, str] = {}          # path under the mount -> content type
        for root, _dirs, names in os.walk(os.path.join(folder, "static")):
            for name in names:
                rel = os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/")
                kind = mimetypes.guess_type(name)[0]
                if kind:
                    self.files[rel] = kind
        self.held: dict[str, bytes] = {}

    def _answer(self, rel: str) -> tuple[bytes, str, str] | None:
        if rel in ("", _ENTRY):
            return self.page, "text/html; charset=utf-8", "no-cache"
        kind = self.files.get(rel)
        if kind is None:
            return None
        body = self.held.get(rel)
        if body is None:
            with open(os.path.join(self.folder, rel), "rb") as f:
                body = self.held[rel] = f.read()
        if kind.startswith("text/") or kind.endswith(("javascript", "json")):
            kind += "; charset=utf-8"
        return body, kind, f"public, immutable, max-age={_YEAR}"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (scope["type"] == "http" and scope.get("method") == "GET"
                and not any(k == b"range" for k, _ in scope.get("headers", ()))):
            path, root = scope.get("path", ""), scope.get("root_path", "")
            rel = (path[len(root):] if root and path.startswith(root) else path).lstrip("/")
            try:
                got = self._answer(rel)
            except OSError:
                got = None
            if got is not None:
                body, kind, cache = got
                await send({"type": "http.response.start", "status": 200, "headers": [
                    (b"content-type", kind.encode()),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", cache.encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.inner(scope, receive, send)


def install() -> None:
    """Serve the page with preloads, and the static files from memory, in place of
    Streamlit's static files (idempotent)."""
    from starlette.routing import Mount
    from streamlit.web.server.starlette import starlette_app

    make = starlette_app.create_streamlit_static_assets_routes
    if getattr(make, "hlolens_preload", False):
        return

    def create_streamlit_static_assets_routes(base_url: str | None) -> list:
        return [Mount(r.path, app=_Served(r.app, static_dir()), name=r.name)
                if isinstance(r, Mount) else r for r in make(base_url=base_url)]

    create_streamlit_static_assets_routes.hlolens_preload = True  # type: ignore[attr-defined]
    starlette_app.create_streamlit_static_assets_routes = create_streamlit_static_assets_routes
