"""The page toolkit every part uses: the Navigator (the view, read from the URL, written
back by ``go``), sections that turn a failure into a message, markdown escaping, names of
stages, widgets whose callbacks move the view (a graph overlay's picker, a diff's tables),
and readers for a picked table row or chart point.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial

import streamlit as st

from compiler_bridge import DumpError, HloParseError
from compiler_bridge.dumps import AFTER, AFTER_CODEGEN, BEFORE, BEFORE_BUFFER_ASSIGNMENT, STABLEHLO
from compiler_bridge.passes import Step
from compiler_bridge.steps import GRAPH_PASS
from viz import LayoutError, ViewState

from .component import center_on


log = logging.getLogger("hlolens")

GRAPH_KEY = "graph"          # the graph component's key; no session_state entry has this name
GRAPH_HEIGHT = 680
STAGES = {BEFORE: "before optimizations", AFTER: "after optimizations",
          BEFORE_BUFFER_ASSIGNMENT: "before buffer assignment", AFTER_CODEGEN: "after codegen", STABLEHLO: "StableHLO (as HLO)"}     # the last: MLIR that jaxlib converted
MAX_CODE = 150_000           # characters of IR shown at once


# --------------------------------------------------------------------------- errors

def describe(e: BaseException) -> str:
    """A one-paragraph message for an exception (no traceback)."""
    if isinstance(e, KeyError) and e.args:
        return str(e.args[0])
    if isinstance(e, OSError) and e.strerror:        # never the server's paths
        name = os.path.basename(str(e.filename).rstrip("/")) if e.filename else ""
        return f"{e.strerror}: {name}" if name else e.strerror
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
        st.error(f"**{what}** failed: {code(describe(e))}")


# Every line break Python's ``str.splitlines`` knows. Markdown ends a line at \n, \r and
# \r\n (and a paragraph at two of them): a name holding a bare \r left its inline code
# span or heading and the rest of it became markdown of its own (issue 33, item 2). The
# others are treated alike, so no line break of any kind reaches markdown from a name.
LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
SHOWN_BREAK = "\u21b5"       # ↵: where a one-line text had a line break


def one_line(text: str) -> str:
    """``text`` on one line: each line break (any kind) shown as ↵."""
    return LINE_BREAK.sub(SHOWN_BREAK, text)


def md(text: str) -> str:
    """Text shown as is in markdown, on one line (names with '_', '*', '<' stay what they
    are; a line break is shown as ↵, so the text never leaves its line, heading or span)."""
    # Streamlit's markdown is GitHub's: a bare http://…, www.… or name@host becomes a
    # link whatever is escaped; an invisible word joiner inside each keeps it text
    text = _AUTOLINK.sub("\\1\u2060", one_line(text))
    # markdown's punctuation, and more that Streamlit's markdown reads: '$' starts LaTeX,
    # '=' a heading's underline, '&' an entity, ':' an emoji or icon (':material/…:')
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$=&:])", r"\\\1", text)


_AUTOLINK = re.compile(r"(?i)(\b(?:https?|ftp|mailto)(?=:)|\bwww(?=\.)|[^\s@](?=@\w))")


def code(text: str) -> str:
    """Text shown verbatim inside markdown (file names are full of underscores); text of
    several lines (any line break) as a block of its own, which nothing in it can end."""
    text = text.replace("`", "'")
    if LINE_BREAK.search(text):
        return "\n```\n" + LINE_BREAK.sub("\n", text) + "\n```\n"
    return f"`{text}`"

# --------------------------------------------------------------------------- labels

def clip(text: str, n: int) -> str:
    """``text``, cut to ``n`` characters with its length said."""
    return text if len(text) <= n else text[: n - 1] + f"… ({len(text):,} characters)"


def stage_label(step: Step, short: bool = False) -> str:
    """'before optimizations', '17 · layout-assignment · HLO_passes_through_… (0017)';
    a TF graph dump: '1 · mark_for_compilation'."""
    if step.kind == GRAPH_PASS:
        return f"{step.index} · {step.pass_name}" + (" · same nodes" if step.identical
                                                      and not short else "")
    if step.kind != "pass":
        return STAGES.get(step.kind, step.kind)
    if short:
        return f"step {step.index} · {step.pass_name}"
    tail = " · same text" if step.identical else " · ⚠ does not parse" if step.error else ""
    return f"{step.index} · {step.pass_name} · {step.pipeline} ({step.sequence:04d}){tail}"


# --------------------------------------------------------------------------- navigation

_WRITTEN = "hlolens-written"     # the queries this session wrote to the URL, newest last


class Navigator:
    """The view state of this run; ``go`` writes it to the URL (the only writer).

    Every rerun request carries the browser's address, and a run starts from it; a request
    sent before the browser received the URL of the run before it carries an older one.
    A run that finds a URL this session wrote before its last write starts from the last
    write instead (and puts the address right): otherwise a pan reported during a step
    change would take the view back a step."""

    def __init__(self) -> None:
        query = st.query_params.to_dict()
        written = st.session_state.get(_WRITTEN) or []
        if written and query != written[-1][0] and any(query == q for q, _ in written[:-1]):
            self.state = written[-1][1]
            st.query_params.from_dict(written[-1][0])
        else:
            self.state = ViewState.from_query(query)

    def go(self, state: ViewState, center: str = "") -> None:
        if center:
            center_on(GRAPH_KEY, center)
        if state != self.state:
            self.state = state
            query = state.to_query()
            st.query_params.from_dict(query)
            # recorded once the write is on its way (a run stopped inside it wrote nothing)
            written = (st.session_state.get(_WRITTEN) or [])[-7:]
            st.session_state[_WRITTEN] = written + [(query, state)]


def selected_row(key: str, n: int) -> int | None:
    """The row picked in the single-row dataframe ``key``, if any and within ``n``."""
    value = st.session_state.get(key)
    try:
        picked = value["selection"]["rows"] if value is not None else None
    except (KeyError, TypeError):
        return None
    return picked[0] if picked and 0 <= picked[0] < n else None


def selected_points(event) -> list:
    """The points of a plotly chart's selection event (none if it has none)."""
    try:
        return event["selection"]["points"] or []
    except (KeyError, TypeError):
        return []


def go(fn, *args) -> None:
    """A widget callback: apply ``fn(state, *args)`` to the URL's state."""
    nav = Navigator()
    result = fn(nav.state, *args)
    state, center = result if isinstance(result, tuple) else (result, "")
    nav.go(state, center)


def go_widget(fn, key: str, *args) -> None:
    """A widget callback whose new value is in ``st.session_state[key]``."""
    value = st.session_state.get(key)
    if value is None:
        return
    go(fn, value, *args)


def go_option(fn, key: str, options, *args) -> None:
    """Like ``go_widget`` for a selectbox: only a value among ``options`` counts.

    Streamlit keeps a selectbox's value as its *label*; when the labels change between
    runs (counts that differ from step to step, another module's steps) the stale label
    comes back as a value of its own and fires the callback. Those are ignored here.
    """
    value = st.session_state.get(key)
    if value is None or value not in options:
        return
    go(fn, value, *args)


def go_pick(fn, key: str, *args) -> None:
    """Like ``go_widget`` for a pick list (hits, operands): the pick is used once and the
    list shows no choice again, so picking the same entry later works too."""
    go_widget(fn, key, *args)
    st.session_state[key] = None


_RERUN_PAGE = "hlolens-rerun-page"


def rerun_page() -> None:
    """From a widget callback in a part that reruns alone (the workspace): rerun the
    whole page instead, e.g. after saving a view, which the sidebar lists."""
    st.session_state[_RERUN_PAGE] = True


def page_rerun_asked() -> bool:
    """Whether a callback asked for the whole page (once: the question is consumed)."""
    return bool(st.session_state.pop(_RERUN_PAGE, False))


def controlled(key: str, value, labels=None) -> None:
    """Make a keyed widget show ``value`` (the URL's) before it is drawn.

    ``labels``: what a selectbox shows for its options. The browser keeps the label it
    showed, so when the labels change while the value stays (another stage's counts for
    one computation name) the value is written again, which sends the new label."""
    seen = f"{key}·labels"
    sig = hash(tuple(labels)) if labels is not None else None
    if st.session_state.get(key) != value or (sig is not None
                                              and st.session_state.get(seen) != sig):
        st.session_state[key] = value
    if sig is not None:
        st.session_state[seen] = sig


# --------------------------------------------------------------------------- widgets

def overlay_picker(label: str, key: str, value: str, options: Iterable[str],
                   names: Mapping[str, str], setter: Callable, help: str) -> None:
    """Sidebar: how the graph is coloured (runtimes, memory), one of ``options`` named by
    ``names``; a pick goes to the URL through ``setter(state, option)``."""
    controlled(key, value)
    st.sidebar.segmented_control(
        label, list(options), key=key, required=True,
        format_func=lambda o: names.get(o, o), on_change=go_widget,
        args=(setter, key), width="stretch", help=help)


DIFF_TABLES = {"changed": "Changed", "added": "Added", "removed": "Removed",
               "fusions": "Fusions", "layout changes": "Layout changes",
               "layout conflicts": "Layout conflicts"}
RowClick = Callable[[str, list[dict], str], None]    # (table key, rows, table kind)


def diff_table(tables: Mapping[str, list[dict]], pick_key: str, table_key: str,
               on_row: RowClick, prefer: str = "",
               above: Callable[[str, list[dict]], None] | None = None) -> list[dict] | None:
    """A diff as tables (``viz.stepper.diff_tables``): a picker of the kinds that have rows
    (``prefer`` first picked when it has), then that kind's rows; a click on a row calls
    ``on_row(its table's key, rows, kind)``. ``above(kind, rows)`` draws between the two.
    Returns the rows shown, or None when every table is empty (nothing drawn)."""
    kinds = [k for k in DIFF_TABLES if tables.get(k)]
    if not kinds:
        return None
    if st.session_state.get(pick_key) not in kinds:
        st.session_state[pick_key] = prefer if prefer in kinds else kinds[0]
    count = {k: len(tables[k]) for k in kinds}
    st.segmented_control("Table", kinds, key=pick_key, required=True,
                         format_func=lambda k: f"{DIFF_TABLES[k]} ({count[k]:,})",
                         label_visibility="collapsed")
    kind = st.session_state[pick_key]
    rows = tables[kind]
    if above is not None:
        above(kind, rows)
    key = f"{table_key}:{kind}"
    st.dataframe(rows, hide_index=True, key=key, on_select=partial(on_row, key, rows, kind),
                 selection_mode="single-row", height=min(38 + 35 * len(rows), 420))
    return rows
