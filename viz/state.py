"""ViewState: everything that defines what a user sees, as one serializable value.

The URL, saved views and exports all go through ``to_query`` / ``from_query``; no view
reads ``st.query_params`` or ``st.session_state`` directly.

Links are versioned (``VERSION``, the query's ``v``), so that a link or saved view written
by older code still opens the view it did. Version 1 (no ``v``) joined the ``expanded``
group ids with '~' as they were, and a long group id, which holds a '~' (see
``viz.grouping``), came apart; version 2 percent-escapes '%' and '~' inside each id. A
query is written with ``v`` when it holds a field whose encoding changed since version 1;
every other field reads the same in both. Fields added later (``base``,
``base_module``: a comparison of two compiles) default to empty and are written only
when set, so older links read as they did.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field, fields, replace
from typing import ClassVar, Mapping

GROUPINGS = ("layers", "source", "flat")
OVERLAYS = ("", "measured", "predicted", "ratio")
MEMORY_OVERLAYS = ("", "defined", "live")   # bytes an instruction defines / live across it
RADIUS = (0, 20)       # focus hops, lowest and highest
BUDGET = (50, 6000)    # visible nodes, lowest and highest
VERSION = 2            # the link format ``to_query`` writes; no ``v`` means version 1
CHANGED_SINCE_V1 = ("expanded",)   # fields whose encoding differs from version 1


def _escape(item: str) -> str:
    return item.replace("%", "%25").replace("~", "%7E")


def _unescape(item: str) -> str:
    return item.replace("%7E", "~").replace("%7e", "~").replace("%25", "%")


def query_string(query: Mapping[str, str]) -> str:
    """Query parameters as a link writes them (percent-encoded; ':', '~', ',' and '/'
    kept as they read): the share link and the HTML report's view."""
    return urllib.parse.urlencode(query, safe=":~,/")


def clamp(value: int | str, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(int(value), bounds[1]))


@dataclass(frozen=True)
class ViewState:
    dump: str = ""                 # the dump's key (a path or a share id)
    module: str = ""               # module id ('0006') or name
    stage: str = "after_optimizations"   # before_/after_optimizations, or 'pass:<seq>'
    computation: str = ""          # '' = the module's ENTRY
    selected: str = ""             # an instruction name or a group id
    expanded: tuple[str, ...] = field(default_factory=tuple)   # expanded group ids
    grouping: str = "layers"       # how big computations are grouped
    focus: str = ""                # show only the k-hop neighbourhood of this node
    radius: int = 2
    overlay: str = ""              # runtime overlay: '', 'measured', 'predicted', 'ratio'
    trace: str = ""                # the trace runtimes come from: '' = the dump's own
                                   # (else the newest uploaded one), or an uploaded trace's id
    viewport: str = ""             # 'x,y,w,h' of the SVG viewBox, set by the browser
    compare: str = ""              # the stage to diff against: '' = the previous step
                                   # (per-pass dumps), 'none' = no diff, or a stage
    changed_only: bool = False     # draw only what the step changed and its neighbours
    budget: int = 1500             # most nodes drawn before groups are kept closed
    memory: str = ""               # memory overlay: '', 'defined', 'live' (bytes)
    base: str = ""                 # comparing two compiles: the baseline dump's key ('' =
                                   # no comparison; the dump itself for a recompilation)
    base_module: str = ""          # its module ('' = the partner pairing finds)

    version: ClassVar[int] = VERSION   # of the links this code writes

    def to_query(self) -> dict[str, str]:
        """Query parameters, defaults left out, lists joined with '~' (each item escaped),
        and ``v`` when a field written differently from version 1 is there."""
        out: dict[str, str] = {}
        default = ViewState()
        for f in fields(self):
            value = getattr(self, f.name)
            if value == getattr(default, f.name):
                continue
            if isinstance(value, tuple):
                out[f.name] = "~".join(_escape(x) for x in value)
            elif isinstance(value, bool):
                out[f.name] = "1" if value else "0"
            else:
                out[f.name] = str(value)
        if any(name in out for name in CHANGED_SINCE_V1):
            out["v"] = str(VERSION)
        return out

    @classmethod
    def from_query(cls, query: Mapping[str, str | list[str]]) -> ViewState:
        """Read query parameters of any version (none: version 1); anything malformed
        falls back to its default."""
        def one(key: str) -> str:
            v = query.get(key, "")
            if isinstance(v, list):
                v = v[-1] if v else ""
            return str(v)

        try:
            version = int(one("v") or 1)
        except ValueError:
            version = VERSION
        kwargs: dict = {}
        for f in fields(cls):
            raw = one(f.name)
            if not raw:
                continue
            if f.name == "expanded":
                items = raw.split("~")
                if version >= 2:
                    items = [_unescape(x) for x in items]
                kwargs[f.name] = tuple(dict.fromkeys(x for x in items if x))
            elif f.name == "radius":
                try:
                    kwargs[f.name] = clamp(raw, RADIUS)
                except ValueError:
                    pass
            elif f.name == "budget":
                try:
                    kwargs[f.name] = clamp(raw, BUDGET)
                except ValueError:
                    pass
            elif f.name == "grouping":
                if raw in GROUPINGS:
                    kwargs[f.name] = raw
            elif f.name == "changed_only":
                kwargs[f.name] = raw.lower() in ("1", "true", "yes", "on")
            elif f.name == "overlay":
                if raw in OVERLAYS:
                    kwargs[f.name] = raw
            elif f.name == "memory":
                if raw in MEMORY_OVERLAYS:
                    kwargs[f.name] = raw
            elif f.name == "trace":
                kwargs[f.name] = raw[:64]
            else:
                kwargs[f.name] = raw[:2000]
        return cls(**kwargs)

    def with_(self, **changes) -> ViewState:
        return replace(self, **changes)

    def toggle_expanded(self, group: str) -> ViewState:
        if group in self.expanded:
            return replace(self, expanded=tuple(g for g in self.expanded if g != group))
        return replace(self, expanded=self.expanded + (group,))
