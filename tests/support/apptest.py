"""The page through Streamlit's AppTest, as the tests drive it: open the app on a dump, click
a node the way the browser reports it (the graph component's state value ``click``), open a
popover or a tab, select a table row or a chart point, and read what the page wrote."""

from __future__ import annotations

import json
import os
import re

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.state.common import user_key_from_element_id
from streamlit.testing.v1 import AppTest

from tests.support.samples import ROOT
from ui.kit import GRAPH_KEY

APP = os.path.join(ROOT, "app.py")


def app(dump: str, monkeypatch, query: dict | None = None) -> AppTest:
    monkeypatch.setenv("HLOLENS_DUMP", dump)
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    ok(at)
    return at


def ok(at: AppTest) -> None:
    """No exception, and no part of the page failed (``page.section`` turns a failure
    into an error message '**<part>** failed: ...', so look for those too)."""
    assert not at.exception, [e.value for e in at.exception]
    failed = [e.value for e in at.error if "** failed:" in e.value]
    assert not failed, failed


_seq = iter(range(1, 1_000_000))


def click(at: AppTest, target: str, dbl: bool = False) -> AppTest:
    at.session_state[GRAPH_KEY] = {"click": {"id": target, "dbl": dbl, "seq": f"t{next(_seq)}"}}
    at.run()
    ok(at)
    return at


def mount(at: AppTest, mode: str) -> dict:
    """The data of the light component's mount of this ``mode`` (what the browser draws)."""
    for c in at.get("bidi_component"):
        data = json.loads(c.proto.json or "{}")
        if data.get("mode") == mode:
            return data
    return {}


def card(at: AppTest) -> dict:
    """The inspector's header, which the browser draws from the card mount's data."""
    return mount(at, "card").get("card") or {}


def open_popover(at: AppTest, key: str) -> AppTest:
    """Open a popover that fills only when opened (Link, Save view, Export), as a click."""
    at.session_state[key] = True
    at.run()
    ok(at)
    return at


def exported_html(monkeypatch, at_factory) -> str:
    """The Export popover's HTML report of the page ``at_factory()`` opens (a download
    built on click, outside the script's thread, as Streamlit builds it)."""
    return exported(monkeypatch, at_factory, ".html")


def exported(monkeypatch, at_factory, suffix: str) -> str:
    """The Export popover's download whose file name ends with ``suffix``, built as
    ``exported_html`` builds the report."""
    import threading

    from streamlit.runtime.media_file_manager import MediaFileManager
    made: dict[str, object] = {}
    real = MediaFileManager.add_deferred

    def keep(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        made[file_name or ""] = data_callable
        return real(self, data_callable, mimetype, coordinates, file_name, **kw)
    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    open_popover(at_factory(), "pop-export")
    build = next(fn for name, fn in made.items() if name.endswith(suffix))
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(build()))   # type: ignore[operator]
    worker.start()
    worker.join(60)
    return out[0]


def link(at: AppTest) -> str:
    """The link the Link box is for (the browser shows its own URL, which Python wrote)."""
    return mount(at, "link").get("link", "")


def texts(at: AppTest) -> str:
    """Everything the page wrote as markdown, code, captions and messages, and the
    inspector's header."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.code]
    parts += [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [w.value for w in at.warning] + [i.value for i in at.info]
    parts += [str(v) for v in card(at).values()]
    raw = "\n".join(str(p) for p in parts)
    # and as read on the page: without markdown's backslash escapes and word joiners
    return raw + "\n" + re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", raw).replace("\u2060", "")


def query(at: AppTest) -> dict:
    return {k: at.query_params[k] for k in at.query_params}


def open_tab(at: AppTest, name: str = "Runtimes") -> AppTest:
    key = details_key(at)
    at.session_state[key] = name
    at.run()
    ok(at)
    return at


def send(at: AppTest, key_prefix: str, value: dict) -> AppTest:
    """What the browser sends when a row of a dataframe or a point of a chart (keyed
    ``key_prefix...``) is selected: that widget's state, with every other widget's."""
    el = next(e for e in at._tree if getattr(e, "proto", None) is not None
              and str(getattr(e.proto, "id", "")).split("-", 2)[-1].startswith(key_prefix))
    states = at._tree.get_widget_states()
    w = WidgetState()
    w.id = el.proto.id
    w.string_value = json.dumps(value)
    states.widgets.append(w)
    at._run(states)
    ok(at)
    return at


def select_row(at: AppTest, key_prefix: str, row: int) -> AppTest:
    return send(at, key_prefix, {"selection": {"rows": [row], "columns": [], "cells": []}})


def select_point(at: AppTest, key_prefix: str, name: str, module: str = "0000") -> AppTest:
    point = {"curve_number": 3, "point_number": 0, "point_index": 0, "x": 1.0, "y": 1.0,
             "customdata": [name, module]}
    return send(at, key_prefix, {"selection": {"points": [point], "point_indices": [0],
                                               "box": [], "lasso": []}})


def plain(text: str) -> str:
    """Markdown as read: escapes dropped."""
    return re.sub(r"\\(.)", r"\1", text)


def details_key(at: AppTest) -> str:
    """The detail tabs' key (it names the tabs, which other features add to)."""
    return next(k for k in at.session_state if str(k).startswith("details:"))


def svg_of(at: AppTest) -> str:
    """The SVG the graph component was given in this run ('' if none)."""
    for el in at.get("bidi_component"):
        data = json.loads(el.proto.json or "{}")
        if data.get("svg"):
            return data["svg"]
    return ""


def node_svg(svg: str, element_id: str) -> str:
    """The SVG of one node (``node:<name>`` / ``group:<id>``)."""
    m = re.search(r'<g id="' + re.escape(element_id) + r'" class="node">(.*?)</g>', svg, re.S)
    assert m, f"{element_id} is not drawn"
    return m.group(1)


def node_text(svg: str, element_id: str) -> str:
    return " ".join(re.findall(r">([^<>]*)</text>", node_svg(svg, element_id)))


def open_expander(at: AppTest, label: str) -> AppTest:
    """Open the expander labelled ``label`` that fills only when opened (*Open a dump*,
    *Compare with…*, *Compile for a target…*), as a click."""
    box = next(e for e in at.get("expander") if e.label == label)
    key = user_key_from_element_id(box.proto.id)
    assert key, f"{label}: not an expander that fills when opened ({box.proto.id!r})"
    at.session_state[key] = True
    at.run()
    ok(at)
    return at


def uploader(at: AppTest, prefix: str):
    """The file uploader whose key starts with ``prefix``; *Open a dump* is opened first
    when it is closed (over a dump)."""
    found = [u for u in at.get("file_uploader") if u.key.startswith(prefix)]
    if not found:
        open_expander(at, "Open a dump")
        found = [u for u in at.get("file_uploader") if u.key.startswith(prefix)]
    return found[0]
