"""Computation -> graph view: group it (``viz.grouping``), then write the DOT (``viz.dot``).

``draw`` turns one ``Grouping`` and its decorations into a ``GraphView``: the DOT text
and what the page needs to talk about it (which svg id shows which instruction, the
groups and which are open, the notes). ``build_graph`` does both steps in one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compiler_bridge.hlo import HloModule

from . import categories as C
from .dot import Decorations, emit
from .grouping import GhostNode, GraphOptions, GroupInfo, Grouping, group


@dataclass
class GraphView:
    computation: str
    dot: str
    node_count: int            # nodes drawn (instructions + collapsed groups)
    edge_count: int
    notes: list[str]
    groups: dict[str, GroupInfo]
    nodes: dict[str, str]      # svg id -> instruction name or group id
    legend: list[tuple[str, str]]
    layout_changes: list[str]  # instruction names highlighted as layout changes
    default_expanded: frozenset[str] = frozenset()
    shown_as: dict[str, str] = field(default_factory=dict)   # instruction -> svg id showing it
    group_of: dict[str, str] = field(default_factory=dict)   # instruction -> innermost group

    def reveal(self, name: str) -> list[str]:
        """Group ids to toggle so that instruction ``name`` is drawn as its own node."""
        out = []
        gid = self.group_of.get(name, "")
        while gid:
            info = self.groups.get(gid)
            if info is None:
                break
            if not info.expanded:
                out.append(gid)
            gid = info.parent
        return out[::-1]


def draw(grouped: Grouping, decorations: Decorations | None = None, selected: str = "",
         ghosts: Sequence[GhostNode] = ()) -> GraphView:
    """The graph view of a grouping, drawn with ``decorations`` (see ``viz.dot.emit``)."""
    d = emit(grouped, decorations, selected, ghosts)
    return GraphView(grouped.computation.name, d.dot, d.node_count, d.edge_count,
                     grouped.notes + d.notes, dict(grouped.groups), d.nodes, C.LEGEND,
                     d.layout_changes, grouped.default_expanded, d.shown_as,
                     dict(grouped.group_of))


def build_graph(module: HloModule, computation: str | None = None,
                options: GraphOptions | None = None) -> GraphView:
    """The graph view of one computation (the ENTRY when ``computation`` is empty)."""
    options = options or GraphOptions()
    return draw(group(module, computation, options), options.decorations, options.selected,
                options.ghosts)
