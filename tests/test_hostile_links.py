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


# Where each field of a link shows on the page, with what else the link needs for it to
# show (``base`` "self": the dump's own share id, a recompilation of itself)
SHOWN = {"module": {}, "stage": {}, "computation": {}, "selected": {}, "focus": {},
         "base": {}, "base_module": {"base": "self"}, "trace": {"overlay": "measured"}}
# fields whose value is one of a few words or a number: ``from_query`` drops anything else
DROPPED = ("grouping", "radius", "overlay", "changed_only", "budget", "memory")
# kept by ``from_query``, never written on the page: each test below says where it goes
ELSEWHERE = ("expanded", "viewport", "compare")


def test_every_field_of_a_link_is_checked_here():
    """A field added to ViewState fails here until one of the tests below covers it."""
    assert (set(SHOWN) | set(DROPPED) | set(ELSEWHERE)
            == {f.name for f in fields(ViewState)} - {"dump"})


def _no_markup(at) -> None:
    for html in _rendered(at):
        assert "evil.example" not in html or ("<a " not in html and "<img" not in html), html
        assert "<strong>Session expired</strong>" not in html, html


@pytest.mark.parametrize("field", sorted(SHOWN))
def test_a_url_parameter_never_becomes_markup(monkeypatch, field):
    """The payload reaches the page (its words and its web address, as text), and no
    link, image or bold text comes of it."""
    from tests.support.apptest import texts
    query = {field: PAYLOAD, **SHOWN[field]}
    if query.get("base") == "self":
        from tests.support.apptest import query as url
        query["base"] = url(app(sample("transformer"), monkeypatch))["dump"]
    at = app(sample("transformer"), monkeypatch, query)
    page = texts(at)
    # the trace id is cut at 64 characters, before the web address
    assert "**Session expired**" in page and (field == "trace" or "evil.example" in page)
    _no_markup(at)


@pytest.mark.parametrize("field", DROPPED)
def test_a_url_parameter_that_is_not_a_value_of_its_field_is_dropped(monkeypatch, field):
    assert getattr(ViewState.from_query({field: PAYLOAD}), field) == getattr(ViewState(), field)
    at = app(sample("transformer"), monkeypatch, {field: PAYLOAD})
    from tests.support.apptest import query
    assert field not in query(at)
    _no_markup(at)


def test_an_expanded_group_no_graph_has_opens_nothing(monkeypatch):
    from tests.support.apptest import svg_of
    plain = svg_of(app(sample("transformer"), monkeypatch))
    at = app(sample("transformer"), monkeypatch, {"expanded": PAYLOAD})
    assert svg_of(at) == plain and "evil.example" not in plain
    _no_markup(at)


def test_a_viewport_reaches_only_the_graph_which_reads_four_numbers(monkeypatch):
    """The viewport goes to the graph component's command (graph_view.js's parseBox reads
    four numbers or nothing), never into the page's text."""
    from tests.support.apptest import mount, texts
    at = app(sample("transformer"), monkeypatch, {"viewport": PAYLOAD})
    assert mount(at, "command").get("viewport") == PAYLOAD
    assert "evil.example" not in texts(at)
    _no_markup(at)


def test_a_compare_target_that_is_no_stage_compares_with_the_previous_step(monkeypatch):
    """An unknown stage to diff against: the pass stepper compares with the step before, as
    with no ``compare`` at all."""
    at = app(sample("mlp_train"), monkeypatch, {"stage": "pass:0024", "compare": PAYLOAD})
    assert at.selectbox(key="pass-compare").value == ""
    _no_markup(at)


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


# ----------------------------------------------------------------- line breaks (issue 33)

# every line break Python's str.splitlines knows; markdown ends a line at \n, \r and \r\n
LINE_BREAKS = {"LF": "\n", "CR": "\r", "CRLF": "\r\n", "VT": "\v", "FF": "\f", "FS": "\x1c",
               "GS": "\x1d", "RS": "\x1e", "NEL": "\x85", "LS": "\u2028", "PS": "\u2029"}
_URL = "http://127.0.0.1:8899/"


def broken(b: str, url: str = _URL) -> str:
    """Two line breaks, then an image (fetched on load) and a link: markdown of its own
    once the text leaves its line or its inline code span."""
    return f"z{b}{b}![i]({url}p.png) [l]({url}l)"


def _injected(at) -> list[str]:
    """Elements with an image, or a link that is not a bare web address shown as itself
    (what notes and comments make of one)."""
    return [h for h in _rendered(at)
            if "<img" in h or "<a " in re.sub(r'<a href="([^"]*)">\1</a>', "", h)]


def _reached(at, b: str, url: str = _URL) -> bool:
    """The payload is on the page whole, its line breaks shown: as ↵ in a line of text, as
    line breaks inside a code block, or as Python writes them in a quoted name ('\\r'),
    in the text as read (escapes taken out)."""
    from tests.support.apptest import texts
    p = broken(b, url)
    shown = {p.replace(b, "\u21b5"), p.replace(b, "\n"), repr(p)[1:-1]}
    page = texts(at)
    return any(s in page for s in shown)


@pytest.mark.parametrize("b", LINE_BREAKS.values(), ids=LINE_BREAKS.keys())
@pytest.mark.parametrize("field", ["module", "stage", "computation", "selected", "focus",
                                   "base"])
def test_no_line_break_in_a_url_parameter_makes_markup(monkeypatch, field, b):
    """Issue 33, item 2: ``?focus=z%0D%0D![i](…)`` left its inline code span at the two
    carriage returns (the escaping knew only \\n), and the page fetched the image. Only
    fields whose value reaches the page are here, and that it reached is asserted."""
    at = app(sample("transformer"), monkeypatch, {field: broken(b)})
    assert _reached(at, b), [h for h in _rendered(at) if "8899" in h]
    assert not _injected(at)


@pytest.mark.parametrize("b", LINE_BREAKS.values(), ids=LINE_BREAKS.keys())
def test_no_line_break_in_a_saved_view_or_comment_makes_markup(monkeypatch, tmp_path, b):
    """Stored text is shown to every later visitor: a saved view's name, note, author and
    selection (the sidebar says where it points), a comment's text and author."""
    import os

    from compiler_bridge.dumps import Store
    from tests.support.apptest import query

    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    at = app(sample("transformer"), monkeypatch)
    share_id = query(at)["dump"]
    store = Store(os.environ["HLOLENS_DATA"])
    p = broken(b)
    store.save_view(share_id, p, {"dump": share_id, "selected": p}, note=p, author=p)
    store.add_comment(share_id, "0000", "ynn_fusion.29", p, author=p)
    at = app(sample("transformer"), monkeypatch, {"dump": share_id,
                                                  "selected": "ynn_fusion.29"})
    # name (a button's label), author and selection (a caption), comment author
    shown = [str(x.label) for x in at.button if "8899" in str(x.label)]
    assert shown and all(s.startswith("z\u21b5\u21b5\\!\\[i\\]") for s in shown), shown
    assert _reached(at, b)
    # as read: the view's author, selection and note, the comment's text and author
    read = [re.sub(r"<(http[^>]*)>|\\([!-/:-@\[-`{-~])", r"\1\2", str(m.value))
            .replace("\u2060", "") for m in list(at.markdown) + list(at.caption)]
    assert sum(h.count(f"![i]({_URL}p.png)") for h in read) >= 5, [h for h in read if "8899" in h]
    assert not _injected(at)
    for s in shown:
        assert "<img" not in _STRICT.render(s) and "<a " not in _STRICT.render(s)


@pytest.mark.parametrize("b", LINE_BREAKS.values(), ids=LINE_BREAKS.keys())
def test_no_line_break_in_a_zip_members_name_makes_markup(monkeypatch, tmp_path, b):
    """A zip whose folder and module file names hold the line breaks and markdown (a name
    has no '/': the image and link are relative ones): the dump's name, the module's, the
    picker and the store's list show it as text."""
    import os
    import zipfile

    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    p = broken(b, url="")
    src = sample("cond_switch")
    path = tmp_path / (p + ".zip")
    with zipfile.ZipFile(path, "w") as z:
        for n in sorted(os.listdir(src)):
            if os.path.isfile(os.path.join(src, n)):
                z.write(os.path.join(src, n), f"{p}/{n.replace('jit_route', 'jit_' + p)}")
    at = app(str(path), monkeypatch)
    assert _reached(at, b, url="")
    assert not _injected(at)


def test_a_name_never_leaves_its_line_or_makes_a_heading_or_latex():
    """md() output is one line whatever the line breaks; '=' under a note's line made it
    a heading, '$…$' is LaTeX in Streamlit's markdown; both come out escaped."""
    from ui.kit import code, md
    for b in LINE_BREAKS.values():
        assert len(md(f"a{b}b").splitlines()) == 1
        assert code(f"a{b}b").count("```") == 2           # a block nothing in it ends
    assert "<h1>" not in _STRICT.render("title  \n" + md("==="))
    assert md("$x^2$") == "\\$x^2\\$"


@pytest.mark.parametrize("radius", ["0", "999"])
def test_a_links_hops_beyond_the_sliders_range_focus_with_them(monkeypatch, tmp_path, radius):
    """A link keeps 0 to 20 hops (``viz.state.RADIUS``); the hops slider went from 1 to 8,
    and a link's 0 or 20 failed the whole graph (StreamlitValueBelowMinError). The slider
    now stretches to the link's hops, and the graph is drawn with them."""
    from tests.support.apptest import query
    from tests.support.fresh import compile_program
    dump, _ = compile_program(tmp_path, "f = lambda x: jnp.tanh(jnp.sin(x) * 2) + x\n"
                                        "ARGS = (jnp.ones(3),)")
    from compiler_bridge import open_dump
    d = open_dump(str(dump))
    root = d.stage(d.main).entry.root.name
    at = app(str(dump), monkeypatch, {"selected": root, "focus": root, "radius": radius})
    want = min(int(radius), 20)
    assert at.slider(key="pick-radius").value == want
    assert query(at)["radius"] == str(want)


def test_a_links_node_budget_below_the_inputs_range_is_the_one_shown(monkeypatch, tmp_path):
    """A link keeps a budget of 50 to 6,000 nodes (``viz.state.BUDGET``); the sidebar's
    input started at 100 and showed 100 while the graph was drawn with the link's 50."""
    from tests.support.apptest import query
    from tests.support.fresh import compile_program
    dump, _ = compile_program(tmp_path, "f = lambda x: jnp.tanh(x) * 2\nARGS = (jnp.ones(3),)")
    at = app(str(dump), monkeypatch, {"budget": "1"})
    assert query(at)["budget"] == "50"
    assert at.number_input(key="pick-budget").value == 50


def test_a_links_focus_on_a_node_the_computation_lacks_is_said_not_claimed(monkeypatch):
    """A link focused on a node this computation does not have (another stage's, or
    renamed since): the graph draws everything, and the caption above it said 'Focused
    on x' regardless; it says the node is not there."""
    from compiler_bridge import open_dump
    d = open_dump(sample("scan_while"))
    entry = d.stage(d.main).entry
    at = app(sample("scan_while"), monkeypatch, {"focus": "no-such-node.7"})
    captions = [c.value for c in at.caption]
    assert not any(c.startswith("Focused on") for c in captions), captions
    assert any("no-such-node.7" in c and "is not in" in c and entry.name in c
               for c in captions), captions
    at = app(sample("scan_while"), monkeypatch, {"selected": entry.root.name,
                                          "focus": entry.root.name})
    assert any(c.startswith("Focused on") and entry.root.name in c
               for c in (c.value for c in at.caption))
