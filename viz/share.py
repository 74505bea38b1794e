"""Pure builders for sharing: links, comment badges in the graph, report contents.

Nothing here touches Streamlit or the store; the page passes in what it read
(``ViewState``, comment counts, an ``Inspector``) and places the result on screen.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Iterable, Mapping

from compiler_bridge import HloModule

from .grouping import GroupIndex, Grouping
from .panels import Inspector, locate
from .state import ViewState, query_string

COMMENT_BORDER = "#7048e8"         # violet: no opcode category or diff colour uses it
COMMENT_MARK = "✎"                 # in DejaVu Sans, so Graphviz and browsers draw it
COMMENT_LEGEND = (f"{COMMENT_MARK} n: comments on the node (violet border)", COMMENT_BORDER)


def share_link(base_url: str | None, state: ViewState) -> str:
    """The full link that opens ``state`` on this server: the page's address (scheme,
    host, path; whatever query it had is replaced) and the state's query parameters."""
    base = (base_url or "").split("#", 1)[0].split("?", 1)[0]
    parts = urllib.parse.urlsplit(base)
    if not parts.path:                      # 'http://host:8501' -> 'http://host:8501/'
        base += "/"
    query = query_string(state.to_query())
    return f"{base}?{query}" if query else base


def merge_decorations(*layers: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """Decorations of several overlays in one: label lines and tooltips add up, other
    attributes of a later layer win (a comment's violet border over a diff's)."""
    out: dict[str, dict[str, str]] = {}
    for layer in layers:
        for key, dec in layer.items():
            cur = out.setdefault(key, {})
            for k, v in dec.items():
                if k in ("label", "tooltip") and cur.get(k):
                    cur[k] = f"{cur[k]}\n{v}"
                else:
                    cur[k] = v
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def comment_decorations(module: HloModule, counts: Mapping[str, int]
                        ) -> dict[str, dict[str, str]]:
    """``GraphOptions.decorations`` for commented instructions: a "✎ n" label line and a
    violet border. A comment on an instruction inside a fusion also marks the fusion
    (the node drawn while it is closed), counting every comment inside it."""
    marks: dict[str, int] = {}
    for name, n in counts.items():
        if n <= 0:
            continue
        marks[name] = marks.get(name, 0) + n
        loc = locate(module, name)
        if loc is not None and loc.anchor != name:
            for gid in loc.expand:                    # every enclosing fusion
                fusion = gid[len("fusion:"):]
                marks[fusion] = marks.get(fusion, 0) + n
    return {name: {"color": COMMENT_BORDER, "penwidth": "3",
                   "label": f"{COMMENT_MARK} {n}",
                   "tooltip": _plural(n, "comment") + " (see the inspector)"}
            for name, n in marks.items()}


def comment_group_decorations(view: GroupIndex, decorations: Mapping[str, Mapping[str, str]]
                              ) -> dict[str, dict[str, str]]:
    """Groups (layer boxes, parts) holding instructions that ``comment_decorations``
    marked: how many comments are inside."""
    per_group: dict[str, int] = {}
    for name, dec in decorations.items():
        n = _count(dec)
        gid = view.group_of.get(name, "")
        while gid and n:
            per_group[gid] = per_group.get(gid, 0) + n
            info = view.groups.get(gid)
            gid = info.parent if info is not None else ""
    return {gid: {"color": COMMENT_BORDER, "penwidth": "3",
                  "label": f"{COMMENT_MARK} {n} inside",
                  "tooltip": _plural(n, "comment") + " on instructions inside"}
            for gid, n in per_group.items()}


def _count(dec: Mapping[str, str]) -> int:
    m = re.match(re.escape(COMMENT_MARK) + r" (\d+)", dec.get("label", ""))
    return int(m.group(1)) if m else 0


def closed_groups(grouped: Grouping, decorations: Mapping[str, Mapping[str, str]]
                  ) -> dict[str, Mapping[str, str]]:
    """Only the decorations of groups drawn as one node (open clusters carry none)."""
    closed = grouped.closed
    return {gid: d for gid, d in decorations.items() if gid in closed}


# --------------------------------------------------------------------------- report

def author(name: str, account: str, sign_in: bool) -> tuple[str, str]:
    """Who wrote a view or comment: (the name, what follows it). Where the server offers
    sign-in, a name typed into the form is marked as typed (anyone can type any name) and
    an account, shown by its own name, as signed in: they looked the same (issue 33)."""
    shown = account or name or "anonymous"
    if not sign_in:
        return shown, ""
    return shown, " ✓ signed in" if account else " (typed, not signed in)"


def report_inspector(info: Inspector, comments: Iterable = (),
                     sign_in: bool = False) -> dict[str, object]:
    """The selected instruction as the HTML report's table (plain strings, escaped there);
    ``sign_in``: the server offers it (comments' authors say whether they signed in)."""
    out: dict[str, object] = {
        "instruction": info.name, "opcode": info.opcode + (f" ({info.fusion_kind})"
                                                           if info.fusion_kind else ""),
        "computation": info.computation, "HLO": info.text, "shape": info.shape,
        "bytes": f"{info.bytes:,}",
    }
    layouts = [p.layout for p in info.parts if p.layout]
    if layouts:
        out["layout"] = " ".join(layouts)
    if info.op_name:
        out["op_name"] = info.op_name
    if info.source:
        out["source"] = "\n".join([info.source] + info.source_stack)
    if info.layout_change:
        out["layout change"] = info.layout_change
    out["operands"] = ", ".join(f"{r.name} ({r.shape})" for r in info.operands) or "-"
    out["users"] = ", ".join(r.name for r in info.users) or "-"
    if info.backend_config:
        out["backend_config"] = info.backend_config
    if info.fused_lines:
        out[f"fused computation {info.fused_computation}"] = "\n".join(info.fused_lines)
    notes = ["".join(author(c.author, c.account, sign_in)) + f" ({when(c.created_at)}): {c.text}"
             for c in comments]
    if notes:
        out["comments"] = "\n".join(notes)
    return out


def when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def file_stem(*parts: str) -> str:
    """A file name stem from a module name, stage and computation."""
    text = ".".join(p for p in parts if p)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:120] or "hlolens"
