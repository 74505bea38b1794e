"""Sharing parts of the page: the link, saved views, comments, exports.

Every dump on screen lives in the store (``compiler_bridge.dumps``) under a random share
id, which the URL carries as ``dump``; the rest of the URL is the ``ViewState``. So the
link is the state, saved views are states with a name, and comments hang on (dump,
module, instruction). User-written text (view names, notes, comments, author names) is
shown escaped, never as markdown or HTML.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from functools import partial

import streamlit as st

from compiler_bridge import DumpError, HloModule
from compiler_bridge.dumps import Comment, SavedView

from viz import (
    COMMENT_LEGEND,
    REMOVED_BORDER,
    GraphView,
    author,
    ViewState,
    diff_for,
    diff_legend,
    diff_summary,
    file_stem,
    html_report,
    model_explorer_graphs,
    model_explorer_node_data,
    report_inspector,
    share_link,
    titled_dot,
    titled_svg,
    when,
)
from viz import navigation as N

from . import visitor
from .component import link_box
from .data import store
from .kit import STAGES, Navigator, code, describe, go, md, rerun_page, section, stage_label
from .model import Inspected, Opened, Shown

log = logging.getLogger("hlolens")
AUTHOR = "hlolens-author"       # session: the name last typed in a form


_URL = re.compile(r"https?://[^\s<>`\\]+[^\s<>`\\.,;:!?'\")\]]")


def _line(line: str) -> str:
    """One line of user text as markdown: the text as written, its web addresses as links
    (CommonMark autolinks, whose insides are not markdown; escaped, they broke)."""
    out, at = [], 0
    for m in _URL.finditer(line):
        out += [md(line[at:m.start()]), f"<{m.group(0)}>"]
        at = m.end()
    return "".join(out + [md(line[at:])])


def _text(text: str) -> str:
    """User text as markdown that shows exactly that text (line breaks kept)."""
    return "  \n".join(_line(line) for line in text.splitlines()) or "—"


def _author(name: str, account: str, strong: bool = False) -> str:
    """Who wrote a view or comment, as markdown (marked as typed or signed in where the
    server offers sign-in)."""
    shown, mark = author(name, account, visitor.sign_in_offered())
    return (f"**{md(shown)}**" if strong else md(shown)) + mark


# --------------------------------------------------------------------------- comments

def comments_of(opened: Opened, module_id: str) -> list[Comment]:
    if not opened.share_id:
        return []
    try:
        return store().comments(opened.share_id, module=module_id)
    except (DumpError, OSError) as e:
        log.warning("comments of %s: %s", opened.share_id, e)
        return []


def comment_counts(module_comments: list[Comment]) -> dict[str, int]:
    """Instruction -> number of comments, for the graph's badges."""
    out: dict[str, int] = {}
    for c in module_comments:
        out[c.node] = out.get(c.node, 0) + 1
    return out


def comments(nav: Navigator, opened: Opened, shown: Shown, inspected: Inspected,
             module_comments: list[Comment]) -> None:
    """In the inspector: the selected node's comments (``module_comments``: read
    once per run) and a form to add one."""
    name = inspected.name
    if not name or ":" in name:
        return
    with inspected.slot, section("Comments"):
        mine = [c for c in module_comments if c.node == name]
        box = st.expander(f"✎ Comments ({len(mine)})", expanded=bool(mine),
                          key=f"comments:{shown.dump_module.id}:{name}")
        with box:
            for c in mine:
                st.markdown(f"{_author(c.author, c.account, strong=True)} · {when(c.created_at)}  \n"
                            f"{_text(c.text)}")
                if opened.share_id and store().may_delete(opened.share_id, c,
                                                          visitor.deleter()):
                    _delete_control(f"comment-del:{c.id}", "this comment",
                                    _delete_comment, (opened.share_id, c.id, name))
            if not opened.share_id:
                st.caption("Comments need the dump in the store; this one could not be "
                           "added to it.")
                return
            _seed_author("comment-author")
            with st.form(f"comment:{name}", border=False):
                st.text_area("Add a comment", key=f"comment-text:{name}", max_chars=5000,
                             height=80, placeholder="What is going on here?")
                st.text_input("Your name", key="comment-author", max_chars=100,
                              disabled=bool(visitor.account()))
                st.form_submit_button("Comment", on_click=_add_comment,
                                      args=(opened.share_id, shown.dump_module.id, name))
        msg = st.session_state.pop(f"comment-msg:{name}", "")
        if msg:
            st.warning(msg)


def _seed_author(key: str) -> None:
    who = visitor.account()
    if who:                                # signed in: notes carry the account's name
        st.session_state[key] = who
    elif key not in st.session_state:
        st.session_state[key] = st.session_state.get(AUTHOR, "")


def _remember_author(author: str) -> None:
    """The name typed in one form fills the others (in callbacks, before they draw)."""
    st.session_state[AUTHOR] = author
    for key in ("save-author", "comment-author"):
        st.session_state[key] = author


def _add_comment(share_id: str, module_id: str, name: str) -> None:
    text = st.session_state.get(f"comment-text:{name}", "")
    author = visitor.account() or st.session_state.get("comment-author", "").strip()
    if not text.strip():
        st.session_state[f"comment-msg:{name}"] = "Write something first."
        return
    try:
        store().add_comment(share_id, module_id, name, text, author=author,
                            account=visitor.account())
    except (DumpError, OSError) as e:
        st.session_state[f"comment-msg:{name}"] = f"Not saved: {md(describe(e))}"
        return
    _remember_author(author)
    st.session_state[f"comment-text:{name}"] = ""
    st.toast(f"Comment added to {md(name)}")


# --------------------------------------------------------------------------- views

def saved_views(nav: Navigator, opened: Opened) -> None:
    """Sidebar: the saved views of this link, for everyone who opens it; one click restores."""
    if not opened.share_id:
        return
    try:
        views = store().views(opened.share_id)
    except (DumpError, OSError) as e:
        st.sidebar.caption(f"Saved views cannot be read: {md(describe(e))}")
        return
    box = st.sidebar.expander(f"Saved views ({len(views)})", expanded=bool(views),
                              key="saved-views")
    with box:
        if not views:
            st.caption("None yet: *Save view* (beside the search box) keeps this view "
                       "under a name, for everyone who opens this link.")
            return
        for v in reversed(views):
            # never disabled: a click in the graph changes the view without rerunning the
            # sidebar, so "on screen" is as of the page's last whole run
            here = N.restore_view(nav.state, v.query) == nav.state   # any link version
            st.button(md(v.name) + (" · on screen" if here else ""), key=f"view:{v.id}",
                      type="tertiary",
                      on_click=go, args=(N.restore_view, v.query),
                      help=_view_help(v), width="stretch")
            line = f"{_author(v.author, v.account)} · {when(v.created_at)} · {_where(v)}"
            if v.note:
                line += f"  \n{_text(v.note)}"
            st.caption(line)
            if store().may_delete(opened.share_id, v, visitor.deleter()):
                _delete_control(f"view-del:{v.id}", f"the view “{md(v.name)}”", _delete_view,
                                (opened.share_id, v.id, v.name))
        msg = st.session_state.pop("view-del-msg", "")
        if msg:
            st.warning(msg)


def _delete_control(key: str, what: str, on_click, args: tuple) -> None:
    """A small 'Delete' that asks once more: a saved view or comment is everyone's."""
    with st.popover("Delete", type="tertiary", key=key):
        st.caption(f"Delete {what} for everyone who opens this link?")
        st.button("Delete", key=key + ":yes", type="primary", on_click=on_click, args=args)


def _delete_view(share_id: str, view_id: int, name: str) -> None:
    try:
        store().delete_view(share_id, view_id, by=visitor.deleter())
    except (DumpError, OSError) as e:
        st.session_state["view-del-msg"] = f"Not deleted: {md(describe(e))}"
        return
    st.toast(f"Deleted the saved view {md(name)}")


def _delete_comment(share_id: str, comment_id: int, node: str) -> None:
    try:
        store().delete_comment(share_id, comment_id, by=visitor.deleter())
    except (DumpError, OSError) as e:
        st.session_state[f"comment-msg:{node}"] = f"Not deleted: {md(describe(e))}"
        return
    st.toast(f"Deleted a comment on {md(node)}")


def _where(v: SavedView) -> str:
    q = ViewState.from_query(v.query)
    stage = STAGES.get(q.stage, q.stage.replace("pass:", "pass "))
    parts = [f"module {md(q.module)}" if q.module else "", md(stage),
             code(q.selected) if q.selected else ""]
    return " · ".join(p for p in parts if p)


def _view_help(v: SavedView) -> str:
    return "Restore this view: " + md(", ".join(f"{k}={x}" for k, x in v.query.items()
                                                 if k != "dump")[:300])


def _save_view(share_id: str) -> None:
    name = st.session_state.get("save-name", "").strip()
    note = st.session_state.get("save-note", "")
    author = visitor.account() or st.session_state.get("save-author", "").strip()
    if not name:
        st.session_state["save-msg"] = "Give the view a name."
        return
    state = Navigator().state
    try:
        store().save_view(share_id, name, state.to_query(), note=note, author=author,
                          account=visitor.account())
    except (DumpError, OSError) as e:
        st.session_state["save-msg"] = f"Not saved: {md(describe(e))}"
        return
    _remember_author(author)
    st.session_state["save-name"] = ""
    st.session_state["save-note"] = ""
    st.toast(f"Saved the view “{md(name)}”")
    rerun_page()                      # the sidebar lists the saved views


# --------------------------------------------------------------------------- toolbar

def toolbar(where, nav: Navigator, opened: Opened, shown: Shown | None,
            view: GraphView | None, svg: str, inspected: Inspected | None,
            runtime_rows: Callable[[], list[dict] | None] | None = None,
            runtime_legend: Callable[[], list[tuple[str, str]]] | None = None,
            compared: list[str] | None = None,
            runtime_measured: Callable[[], dict[str, float] | None] | None = None) -> None:
    """Beside the search box: Link (the full link, with a copy button), Save view, Export
    (not for a step that does not parse: ``shown`` None). ``runtime_rows`` / ``runtime_legend``:
    the kernel table and the runtime overlay's colours for the HTML report (called when
    it is downloaded); ``compared``: what the report says of a comparison on screen;
    ``runtime_measured``: measured µs per instruction for Model Explorer's node data."""
    state = nav.state
    # each popover fills only when opened (on_change="rerun"): closed, they cost a page
    # load and every click nothing
    with where.container(horizontal=True, horizontal_alignment="right", gap="small"):
        link = st.popover("Link", icon=":material/link:", help="A link to exactly this view",
                          key="pop-link", on_change="rerun")
        if link.open:
            with link:
                _link(opened, state)
        save = st.popover("Save view", icon=":material/bookmark_add:", key="pop-save",
                          on_change="rerun",
                          help="Keep this view under a name, for everyone who opens this link")
        if save.open:
            with save:
                _save_form(opened)
        if shown is not None:
            export = st.popover("Export", icon=":material/download:", key="pop-export",
                                on_change="rerun",
                                help="The graph, a report, the module's files")
            if export.open:
                with export:
                    _exports(opened, shown, view, svg, inspected, state, runtime_rows,
                             runtime_legend, compared, runtime_measured)


def _link(opened: Opened, state: ViewState) -> None:
    link = share_link(st.context.url, state)
    st.markdown("**Link to this view**")
    link_box(link)
    if opened.share_id:
        st.caption("Anyone who can reach this server opens exactly this view: dump, module, "
                   "step, selection, open groups, zoom. Nothing to upload.")
    else:
        st.caption("This dump is not in the store, so the link works only while this "
                   "server runs with the same --dump.")


def _save_form(opened: Opened) -> None:
    if not opened.share_id:
        st.caption("Saving views needs the dump in the store; this one could not be added.")
        return
    _seed_author("save-author")
    with st.form("save-view", border=False):
        st.text_input("Name", key="save-name", max_chars=200,
                      placeholder="e.g. layout copy before the big dot")
        st.text_area("Note", key="save-note", max_chars=2000, height=80,
                     placeholder="What to look at (optional)")
        st.text_input("Your name", key="save-author", max_chars=100,
                      disabled=bool(visitor.account()))
        st.form_submit_button("Save", type="primary", on_click=_save_view,
                              args=(opened.share_id,))
    msg = st.session_state.pop("save-msg", "")
    if msg:
        st.warning(msg)


def _exports(opened: Opened, shown: Shown, view: GraphView | None, svg: str,
             inspected: Inspected | None, state: ViewState,
             runtime_rows: Callable[[], list[dict] | None] | None,
             runtime_legend: Callable[[], list[tuple[str, str]]] | None = None,
             compared: list[str] | None = None,
             runtime_measured: Callable[[], dict[str, float] | None] | None = None) -> None:
    m = shown.dump_module
    step = shown.timeline.step(shown.index) if shown.timeline is not None else None
    stage = (f"step{step.index}" if step is not None and step.kind == "pass"
             else shown.stage.replace("_optimizations", ""))
    stem = file_stem(m.name, stage, view.computation if view is not None else "")
    if view is not None and svg:
        what = _what(opened, shown, view)
        st.download_button("Graph as SVG", data=partial(titled_svg, svg, what),
                           file_name=stem + ".svg",
                           mime="image/svg+xml", on_click="ignore", width="stretch",
                           icon=":material/image:")
        st.download_button("Graph as DOT", data=partial(titled_dot, view.dot, what),
                           file_name=stem + ".dot",
                           mime="text/vnd.graphviz", on_click="ignore", width="stretch",
                           icon=":material/account_tree:")
        report = partial(_report, opened, shown, view, svg, inspected, state, runtime_rows,
                         share_link(st.context.url, state), runtime_legend=runtime_legend,
                         compared=compared)
        st.download_button("HTML report", data=report, file_name=stem + ".html",
                           mime="text/html", on_click="ignore", width="stretch",
                           icon=":material/description:",
                           help="One self-contained file (no network): the graph, the "
                                "selected node, the runtime table when there is one")
    else:
        st.caption("The graph exports appear once the graph is laid out.")
    st.download_button("Repro bundle (zip)", data=partial(opened.dump.repro_bundle, m.id),
                       file_name=file_stem(m.id, m.name) + ".repro.zip",
                       mime="application/zip", on_click="ignore", width="stretch",
                       icon=":material/folder_zip:",
                       help=f"Every file of module {m.label} (and the dump's traces)")
    st.download_button("Model Explorer graph JSON",
                       data=partial(_json, model_explorer_graphs, shown.module),
                       file_name=stem + ".me-graph.json", mime="application/json",
                       on_click="ignore", width="stretch", icon=":material/hub:")
    st.download_button("Model Explorer node data JSON",
                       data=partial(_node_data, shown.module, runtime_measured),
                       file_name=stem + ".me-node-data.json", mime="application/json",
                       on_click="ignore", width="stretch", icon=":material/data_object:",
                       help="Measured µs per execution of each instruction when the dump "
                            "has a trace (after optimizations), else its output bytes")


def _json(fn, module: HloModule) -> str:
    return json.dumps(fn(module))


def _node_data(module: HloModule,
               measured: Callable[[], dict[str, float] | None] | None) -> str:
    """Model Explorer's node data: measured µs where there are some, else output bytes."""
    return json.dumps(model_explorer_node_data(module, measured() if measured else None))


def _stage(shown: Shown) -> str:
    step = shown.timeline.step(shown.index) if shown.timeline is not None else None
    return stage_label(step) if step is not None else STAGES.get(shown.stage, shown.stage)


def _what(opened: Opened, shown: Shown, view: GraphView) -> str:
    """What an export shows: dump, module, stage, computation."""
    return (f"Dump {opened.name}, module {shown.dump_module.label}, {_stage(shown)}, "
            f"computation {view.computation}.")


def _report(opened: Opened, shown: Shown, view: GraphView, svg: str,
            inspected: Inspected | None, state: ViewState,
            runtime_rows: Callable[[], list[dict] | None] | None, link: str = "",
            runtime_legend: Callable[[], list[tuple[str, str]]] | None = None,
            compared: list[str] | None = None) -> str:
    """The self-contained HTML report (built when the button is clicked); ``compared``:
    what it says of the comparison on screen, whose diff colours the graph."""
    m = shown.dump_module
    info = inspected.info if inspected is not None else None
    notes = [_what(opened, shown, view)]
    if link and opened.share_id:
        notes.append(f"Open this view in HLO Lens: {link}")
    legend = list(view.legend)
    d = None
    if compared:
        notes.extend(compared)
    elif shown.timeline is not None:
        try:
            d = diff_for(opened.dump, state.with_(stage=shown.stage), shown.timeline)
        except Exception:                          # the report goes out without the diff
            d = None
        if d is not None:
            notes.append("Changes: " + diff_summary(d))
    if compared or d is not None:
        legend = [(name, "#ffc9c9" if color == REMOVED_BORDER else color)
                  for name, color in diff_legend(bool(compared))] + legend
    on_module = comments_of(opened, m.id)
    if on_module:
        legend.append(COMMENT_LEGEND)
    notes.extend(view.notes)
    mine = [c for c in on_module if info is not None and c.node == info.name]
    rows = runtime_rows() if runtime_rows is not None else None
    if runtime_legend is not None:
        legend = runtime_legend() + legend
    return html_report(title=f"{m.name} · {_stage(shown)}", svg=svg, view_query=state.to_query(),
                       inspector=report_inspector(info, mine, visitor.sign_in_offered())
                       if info is not None else None,
                       runtime_rows=rows, legend=legend, notes=notes)
