"""The interactive graph view: our own ``st.components.v2`` component (no build step).

``graph_view(svg, selected=..., viewport=..., key=...)`` shows an SVG laid out by Graphviz
with pan (drag) and zoom (wheel); clicks on ``node:<name>`` / ``group:<id>`` elements and
the settled viewport come back as ``GraphEvent``s from ``graph_events(key)``.

Three mounts make one view (see graph_view.js): the SVG itself with the inspector headers
of its nodes (``cards``), whose data stays byte-identical across reruns so Streamlit
resends only a hash; a tiny command mount carrying what changes often (selection
highlight, viewport to restore, a node to centre on); and ``node_card``, the inspector's
header, which a click fills in the browser at once. Events are state values with a
sequence id, so a rerun never handles one twice.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

_DIR = Path(__file__).parent
_JS = (_DIR / "graph_view.js").read_text(encoding="utf-8")
_CSS = (_DIR / "graph_view.css").read_text(encoding="utf-8")
# every element of a component carries its JS: the command and card mounts, which change
# on every click, are a second component with a few lines that hand them to the graph's
_component = st.components.v2.component("hlolens_graph_view", js=_JS, css=_CSS)
_light = st.components.v2.component(
    "hlolens_graph_part", js=(_DIR / "light.js").read_text(encoding="utf-8"),
    css=(_DIR / "card.css").read_text(encoding="utf-8"))
_nonces = itertools.count(1)

DEFAULT_HEIGHT = 640


@dataclass(frozen=True)
class GraphEvent:
    """One thing the user did in the graph."""

    kind: str            # 'click', 'dblclick' or 'viewport'
    target: str = ""     # 'node:<instruction>' or 'group:<group id>' for clicks
    viewport: str = ""   # 'x,y,w,h' of the settled SVG viewBox, for 'viewport'
    seq: str = ""

    @property
    def is_node(self) -> bool:
        return self.target.startswith("node:")

    @property
    def name(self) -> str:
        """The instruction name or group id the click landed on."""
        if self.target.startswith("node:"):
            return self.target[5:]
        if self.target.startswith("group:"):
            return self.target[6:]
        return ""


def svg_id(svg: str) -> str:
    return hashlib.sha1(svg.encode("utf-8")).hexdigest()[:16]


def _seen_key(key: str) -> str:
    return f"hlolens-seen:{key}"


def _center_key(key: str) -> str:
    return f"hlolens-center:{key}"


def graph_events(key: str) -> list[GraphEvent]:
    """Events the graph mounted under ``key`` reported since the last call (oldest first).

    Call it before drawing anything that depends on the selection: the state values of
    a keyed component are readable before it mounts in this run. Mark each one ``handled`` once its effect is written (to the URL): a run can be stopped
    inside any Streamlit call, and the next run starts from the browser's URL, so an event
    marked before its effect reached the browser would be lost.
    """
    raw = st.session_state.get(key)
    if not isinstance(raw, dict):
        return []
    seen = st.session_state.get(_seen_key(key), {})
    out: list[GraphEvent] = []
    click = _valid(raw.get("click"))
    if click is not None and click["seq"] != seen.get("click"):
        target = str(click.get("id", ""))
        kind = "dblclick" if click.get("dbl") else "click"
        out.append(GraphEvent(kind, target if target.startswith(("node:", "group:")) else "",
                              seq=click["seq"]))
    vp = _valid(raw.get("viewport"))
    if vp is not None and vp["seq"] != seen.get("viewport"):
        out.insert(0, GraphEvent("viewport", viewport=str(vp.get("value", ""))[:200],
                                 seq=vp["seq"]))
    return out


def handled(key: str, event: GraphEvent) -> None:
    """``event`` (from ``graph_events(key)``) is applied: the next run skips it."""
    seen = st.session_state.setdefault(_seen_key(key), {})
    seen["viewport" if event.kind == "viewport" else "click"] = event.seq


def _valid(value: Any) -> dict | None:
    if isinstance(value, dict) and isinstance(value.get("seq"), (str, int)):
        return value
    return None


def center_on(key: str, element_id: str) -> None:
    """Ask the graph under ``key`` to centre ``node:<name>`` / ``group:<id>`` on its next draw."""
    st.session_state[_center_key(key)] = {"target": element_id, "nonce": next(_nonces)}


def _noop() -> None:
    return None


def graph_view(svg: str, *, selected: str = "", viewport: str = "", key: str,
               height: int = DEFAULT_HEIGHT, cards: str = "", home: str = "") -> str:
    """Mount the graph view; returns the SVG's id (what the page reports as drawn).

    ``selected`` is an instruction name or a group id to highlight, ``viewport`` an
    'x,y,w,h' viewBox to restore (from the URL) when the SVG is first drawn; ``cards``
    the JSON text of the drawn nodes' inspector headers (name -> card), for ``node_card``;
    ``home`` the SVG id of the node to open on, readable, when the graph is too big to read
    whole and nothing else places it (``viz.home``).
    """
    if "__" in key:
        raise ValueError("a component key must not contain '__'")
    sid = svg_id(svg)
    center = st.session_state.pop(_center_key(key), None) or {}
    with st.container(gap=None):
        # the command first, so the graph finds it when its SVG arrives
        _light(key=f"{key}-cmd", height="content",
                   data={"mode": "command", "channel": key, "svg_id": sid,
                         "selected": selected, "viewport": viewport, "home": home,
                         "center": center.get("target", ""), "nonce": center.get("nonce", 0)})
        _component(key=key, height=height,
                   data={"svg": svg, "svg_id": sid, "channel": key, "height": height,
                         "cards": cards},
                   on_click_change=_noop, on_viewport_change=_noop)
    return sid


def preload() -> None:
    """An empty mount first on the page: the browser fetches Streamlit's code for
    components (and Arrow's, which it needs) with the page's first elements. Asked for
    with the graph, it queued behind every widget's code above the graph on the browser's
    six connections and came about a second later (issue 32, item 16)."""
    _light(key="hl-preload", height=0, data={"mode": "preload"})


def node_card(key: str, selected: str, card: dict[str, Any] | None) -> None:
    """The inspector's header for ``selected`` (``card``: ``viz.panels.card``'s JSON, or None
    to show nothing), drawn by the browser; a click in the graph under ``key`` fills it from
    the graph's cards before this run's answer arrives."""
    _light(key=f"{key}-card", height="content",
               data={"mode": "card", "channel": key, "selected": selected, "card": card})


def link_box(link: str, key: str = "share-link") -> None:
    """The address of the view on screen with a copy button. The browser shows its own URL
    (always the view on screen, even after a part of the page reran alone); ``link`` is
    what Python means it to be (the same, read by tests)."""
    _light(key=key, height="content", data={"mode": "link", "link": link})


def remember_cookie(cookie: str, ids: list[str], key: str) -> None:
    """Write ``ids`` into the browser's cookie ``cookie`` (a year; read back from
    ``st.context.cookies`` at the next page load)."""
    _light(key=key, height=0, data={"mode": "remember", "cookie": cookie, "ids": ids})


__all__ = ["DEFAULT_HEIGHT", "GraphEvent", "center_on", "graph_events", "graph_view",
           "preload",
           "handled", "link_box", "node_card", "remember_cookie", "svg_id"]
