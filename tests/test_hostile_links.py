"""Every value a link carries reaches the page escaped (issue 17): a URL parameter with
markdown or HTML in it never turns into a link, an image (fetched on load) or markup.

The page's text is rendered the way the browser renders it (CommonMark; raw HTML only in
the elements that allow it) and searched for the tags a payload would make."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest
from conftest import sample
from markdown_it import MarkdownIt
from tests.support.apptest import app

from viz import ViewState

PAYLOAD = ("x` **Session expired** [sign in](http://evil.example/login) "
           "![](http://evil.example/pixel.png) <img src=http://evil.example/i.png>")
_STRICT = MarkdownIt("commonmark", {"html": False})
_HTML = MarkdownIt("commonmark", {"html": True})


def _rendered(at) -> list[str]:
    """HTML of every markdown-bearing element on the page, as the browser would draw it."""
    out = []
    for kind in ("markdown", "caption", "warning", "info", "error", "success"):
        for el in getattr(at, kind):
            allow = bool(getattr(el.proto, "allow_html", False))
            out.append((_HTML if allow else _STRICT).render(str(el.value)))
    for el in list(at.button) + list(at.get("download_button")):
        out.append(_STRICT.render(str(el.label)))
    for el in at.expander:
        out.append(_STRICT.render(str(el.label)))
    return out


@pytest.mark.parametrize("field", [f.name for f in fields(ViewState) if f.name != "dump"])
def test_a_url_parameter_never_becomes_markup(monkeypatch, field):
    at = app(sample("transformer"), monkeypatch, {field: PAYLOAD})
    for html in _rendered(at):
        assert "evil.example" not in html or ("<a " not in html and "<img" not in html), html
        assert "<strong>Session expired</strong>" not in html, html


def test_a_saved_views_name_never_becomes_markup(monkeypatch):
    """A view saved under a name with markdown in it: the toast that confirms it and the
    sidebar's list show the name as text."""
    from tests.support.apptest import open_popover
    at = open_popover(app(sample("transformer"), monkeypatch), "pop-save")
    at.text_input(key="save-name").input(PAYLOAD)
    at.text_input(key="save-author").input("Eve")
    next(b for b in at.get("button") if b.label == "Save").click().run()
    shown = [_STRICT.render(str(t.value)) for t in at.toast] + _rendered(at)
    assert any("Session expired" in html for html in shown)       # it was shown, as text
    for html in shown:
        assert "<a " not in html and "<img" not in html, html
        assert "<strong>Session expired</strong>" not in html, html


def test_a_notes_web_address_is_a_working_link_and_nothing_else_is(monkeypatch):
    """Issue 17: a URL in a note became a broken link (its escapes showed). It is now a
    link to exactly what it shows; markdown links and images in a note stay text."""
    import re

    from tests.support.apptest import open_popover
    at = open_popover(app(sample("transformer"), monkeypatch), "pop-save")
    at.text_input(key="save-name").input("with a link")
    at.text_area(key="save-note").input("see https://example.com/a-b_(c).html for more. "
                                        + PAYLOAD)
    next(b for b in at.get("button") if b.label == "Save").click().run()
    notes = [h for h in _rendered(at) if "example.com" in h]
    assert notes, _rendered(at)
    html = notes[0]
    assert ('<a href="https://example.com/a-b_(c).html">https://example.com/a-b_(c).html</a>'
            in html)
    assert "<img" not in html and "<strong>" not in html
    for href, shown in re.findall(r'<a href="([^"]*)">([^<]*)</a>', html):
        assert href == shown                     # no link that shows one thing, goes elsewhere


def test_a_dumps_names_op_names_sources_and_comments_never_become_markup(monkeypatch,
                                                                          tmp_path):
    """Issue 17, item 3 beyond the URL: a dump whose folder name, op_names and source
    files carry markdown and HTML, a node's comment too, all reach the page as text."""
    from hostile_inputs import markdown_dump
    from tests.support.apptest import query

    folder = markdown_dump(str(tmp_path))
    at = app(folder, monkeypatch, {"selected": "ynn_fusion.29"})
    assert any("evil.example" in h for h in _rendered(at))      # the names are on the page
    at.text_area(key="comment-text:ynn_fusion.29").input(PAYLOAD)
    at.text_input(key="comment-author").input(PAYLOAD)
    next(b for b in at.get("button") if b.label == "Comment").click().run()
    import os

    from compiler_bridge.dumps import Store
    assert Store(os.environ["HLOLENS_DATA"]).comments(query(at)["dump"])
    for group in ("layers", "source"):
        at.query_params["group"] = group
        at.run()
        for html in _rendered(at):
            # a bare web address in a comment is a link to exactly what it shows (as in
            # notes); nothing else becomes a link, an image or markup
            assert "<img" not in html, html
            for href, shown in re.findall(r'<a href="([^"]*)">([^<]*)</a>', html):
                assert href == shown, html
            assert "<a " not in re.sub(r'<a href="([^"]*)">\1</a>', "", html), html
            assert "<strong>Session expired</strong>" not in html, html
