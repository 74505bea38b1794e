"""Grouping -> DOT text: the nodes, clusters and edges Graphviz lays out.

``emit`` draws a ``viz.grouping.Grouping``: open groups as clusters, closed ones as one
box node standing for everything inside, open fusions as dashed clusters holding their
fused computation, removed instructions (``ghosts``) as red dashed nodes. Decorations
(name or group id -> DOT attributes) colour and label what they name; edges between
whatever stands for each operand and user are merged, and hubs' edges thinned.

Ids in the SVG: ``node:<instruction>`` for instructions, ``group:<group id>`` for groups
(a collapsed group node or an open cluster); fusion groups are ``fusion:<instruction>``;
``ghost:<name>`` for removed instructions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compiler_bridge.hlo import HloComputation, HloInstruction, HloModule

from . import categories as C
from .grouping import GhostNode, Group, Grouping

MAX_LABEL = 48
Decorations = Mapping[str, Mapping[str, str]]


@dataclass
class Drawing:
    """The DOT text of a grouping and what it drew."""

    dot: str
    node_count: int            # nodes drawn (instructions + collapsed groups)
    edge_count: int
    notes: list[str]
    nodes: dict[str, str]      # svg id -> instruction name or group id
    layout_changes: list[str]  # instruction names highlighted as layout changes
    shown_as: dict[str, str]   # instruction -> svg id showing it


def quote(s: str) -> str:
    """A DOT double-quoted string (escapes quotes, backslashes and newlines)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_SHOWN = ("label", "tooltip", "xlabel")


def quote_text(s: str) -> str:
    """A label or tooltip: Graphviz reads ``&lt;`` in one as an entity, so an op_name that
    holds ``&lt;img&gt;`` drew as ``<img>``; the ampersand is escaped to show it as is."""
    return quote(s.replace("&", "&amp;"))


def _short(text: str, n: int = MAX_LABEL) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _shape_label(inst: HloInstruction) -> str:
    s = str(inst.shape)
    if inst.shape.is_tuple and len(s) > MAX_LABEL:
        return f"tuple of {len(inst.shape.tuple_shapes)}: " + _short(s, MAX_LABEL - 12)
    return _short(s)


class _Writer:
    def __init__(self, module: HloModule, selected: str, decorations: Decorations) -> None:
        self.module = module
        self.selected = selected
        self.decorations = decorations
        self.lines: list = []              # DOT lines, or (indent, dot id, attrs) for nodes
        self.node_attrs: dict[str, dict] = {}
        self.ids: dict[str, str] = {}      # svg id -> dot node id
        self.svg: dict[str, str] = {}      # svg id -> name
        self.n = 0
        self.layout_changes: list[str] = []

    def dot_id(self, svg_id: str) -> str:
        d = self.ids.get(svg_id)
        if d is None:
            self.n += 1
            d = self.ids[svg_id] = f"n{self.n}"
        return d

    def instruction(self, inst: HloInstruction, indent: str, fused_ops: int = 0) -> str:
        svg_id = "node:" + inst.name
        did = self.dot_id(svg_id)
        self.svg[svg_id] = inst.name
        cat = C.category(inst.opcode)
        fill = C.COLORS[cat]
        border = "#495057"
        penwidth = "1"
        style = "rounded,filled"
        opcode = inst.opcode
        if inst.opcode == "fusion":
            fused = self._fused(inst)
            hero = C.hero_category([i.opcode for i in fused.instructions]) if fused else C.FUSION
            fill = C.COLORS[hero] if hero != C.PARAMETER_CONSTANT else C.COLORS[C.FUSION]
            border = C.BORDERS[hero]
            penwidth = "2"
            n_ops = C.fused_ops(fused.instructions) if fused else 0
            opcode = f"fusion {inst.fusion_kind or ''} · {n_ops} ops".replace("  ", " ")
        else:
            if inst.opcode == "custom-call":    # what runs is its target (TopK, __cudnn$...)
                opcode = f"custom-call {inst.custom_call_target or ''}".rstrip()
            if inst.called_names:
                opcode = f"{opcode} → {', '.join(inst.called_names)[:40]}"
        label = f"{_short(inst.name)}\n{_short(opcode)}\n{_shape_label(inst)}"
        attrs = {"id": svg_id, "label": label, "fillcolor": fill, "color": border,
                 "penwidth": penwidth, "style": style,
                 "tooltip": _short(inst.text, 600)}
        if inst.opcode == "parameter":
            attrs["shape"] = "invhouse"
            attrs["style"] = "filled"
        if inst.is_root:
            attrs["peripheries"] = "2"
        change = C.layout_change_reason(inst, self.module)
        if change:
            attrs["color"] = "#e8590c"
            attrs["penwidth"] = "3"
            attrs["label"] += "\n⟲ layout change" + (" inside" if inst.opcode == "fusion" else "")
            attrs["tooltip"] = _short(f"⟲ {change}\n{inst.text}", 600)
            self.layout_changes.append(inst.name)
        if inst.name == self.selected:
            attrs["penwidth"] = "3.5"
            attrs["color"] = "#000000"
        self._decorate(attrs, inst.name)
        self.node(indent, did, attrs)
        return did

    def node(self, indent: str, did: str, attrs: dict) -> None:
        # kept as attrs until the end: edge thinning adds a line to some labels
        self.node_attrs[did] = attrs
        self.lines.append((indent, did, attrs))

    def text(self) -> str:
        return "\n".join(x if isinstance(x, str) else f"{x[0]}{x[1]} [{self._attrs(x[2])}];"
                         for x in self.lines)

    def _decorate(self, attrs: dict, key: str) -> None:
        dec = self.decorations.get(key)
        if not dec:
            return
        for k, v in dec.items():
            if k == "label":
                attrs["label"] += "\n" + v
            elif k == "tooltip":
                attrs["tooltip"] = v + "\n" + attrs.get("tooltip", "")
            else:
                attrs[k] = v

    def group_node(self, g: Group, indent: str) -> str:
        svg_id = "group:" + g.id
        did = self.dot_id(svg_id)
        self.svg[svg_id] = g.id
        kind = {"split": "part", "layer": "scope", "source": "call"}.get(g.kind, g.kind)
        extra = f", {g.fusions} fusions" if g.fusions else ""
        label = f"{_short(g.label, 60)}\n{g.size} instructions{extra}\n[{kind} ▸]"
        attrs = {"id": svg_id, "label": label, "shape": "box3d", "style": "filled",
                 "fillcolor": "#f8f9fa", "color": "#495057",
                 "tooltip": f"{g.label}: {g.size} instructions (double-click to open)"}
        if g.id == self.selected:
            attrs["penwidth"] = "3.5"
            attrs["color"] = "#000000"
        self._decorate(attrs, g.id)
        self.node(indent, did, attrs)
        return did

    def _fused(self, inst: HloInstruction) -> HloComputation | None:
        calls = inst.called_names
        return self.module.get_computation(calls[0]) if calls else None

    @staticmethod
    def _attrs(attrs: Mapping[str, str]) -> str:
        return ", ".join(f"{k}={quote_text(str(v)) if k in _SHOWN else quote(str(v))}"
                         for k, v in attrs.items())


def emit(grouped: Grouping, decorations: Decorations | None = None, selected: str = "",
         ghosts: Sequence[GhostNode] = ()) -> Drawing:
    """The DOT text of ``grouped``: ``decorations`` (instruction name or group id -> DOT
    attributes; a label or tooltip is added to the node's own), ``selected`` drawn with a
    heavy border, ``ghosts`` as red dashed nodes with their edges."""
    module, comp, order = grouped.module, grouped.computation, grouped.order
    fusion_open, folded = grouped.fusion_open, grouped.folded
    notes: list[str] = []
    w = _Writer(module, selected, decorations or {})
    rep: dict[str, str] = {}   # instruction name -> dot id of what stands for it
    w.lines.append("digraph G {")
    w.lines.append('  graph [rankdir=TB, newrank=true, mclimit=0.1, nslimit=1, nslimit1=1, '
                   'searchsize=30, ranksep=0.25, nodesep=0.12, fontname="Helvetica", '
                   'fontsize=10, bgcolor="transparent", outputorder=edgesfirst];')
    w.lines.append('  node [shape=box, fontname="Helvetica", fontsize=9, height=0.3, '
                   'margin="0.06,0.03"];')
    w.lines.append('  edge [arrowsize=0.5, color="#868e96"];')
    inner_edges: list[tuple[str, str, int]] = []
    cluster_n = [0]

    def draw_group(g: Group, indent: str, stand_in: str | None) -> None:
        for item in g.items(order):
            if isinstance(item, Group):
                if item.open and stand_in is None:
                    cluster_n[0] += 1
                    w.lines.append(f"{indent}subgraph cluster_{cluster_n[0]} {{")
                    label = quote_text(_short(item.label, 80) + f"  ({item.size})")
                    w.lines.append(f"{indent}  id={quote('group:' + item.id)}; "
                                   f"label={label}; "
                                   'style="rounded,filled"; fillcolor="#f8f9fa08"; '
                                   'color="#adb5bd"; fontsize=10; labeljust=l;')
                    w.svg["group:" + item.id] = item.id
                    draw_group(item, indent + "  ", None)
                    w.lines.append(f"{indent}}}")
                else:
                    did = stand_in or w.group_node(item, indent)
                    _assign(item, did, rep)
            else:
                if item.name in folded:
                    continue
                if stand_in is not None:
                    rep[item.name] = stand_in
                elif item.name in fusion_open:
                    rep[item.name] = emit_fusion(item, indent)
                else:
                    rep[item.name] = w.instruction(item, indent)

    def emit_fusion(inst: HloInstruction, indent: str) -> str:
        fused = module.computation(inst.called_names[0])
        cluster_n[0] += 1
        gid = "fusion:" + inst.name
        w.svg["group:" + gid] = gid
        w.lines.append(f"{indent}subgraph cluster_{cluster_n[0]} {{")
        title = f"{inst.name} · {inst.fusion_kind or 'fusion'} · {fused.name}"
        w.lines.append(f"{indent}  id={quote('group:' + gid)}; label={quote_text(title)}; "
                       'style="rounded,dashed"; color="#495057"; fontsize=10; labeljust=l;')
        inner: dict[str, str] = {}
        for fi in fused.instructions:
            inner[fi.name] = w.instruction(fi, indent + "  ")
        for fi in fused.instructions:
            for op in fi.operand_names:
                if op in inner:
                    inner_edges.append((inner[op], inner[fi.name], 1))
        w.lines.append(f"{indent}}}")
        # outer operand i feeds fused parameter i; the fused root stands for the fusion
        params = {p.parameter_number: p for p in fused.instructions if p.opcode == "parameter"}
        for k, op in enumerate(inst.operand_names):
            p = params.get(k)
            if p is not None:
                fusion_inputs.append((op, inner[p.name]))
        root_inst = fused.root
        return inner[root_inst.name] if root_inst is not None else w.instruction(inst, indent)

    fusion_inputs: list[tuple[str, str]] = []
    draw_group(grouped.root, "  ", None)

    # edges between whatever stands for each operand and user, merged
    edges: dict[tuple[str, str], int] = {}
    for inst in comp.instructions:
        dst = rep.get(inst.name)
        if dst is None:
            continue
        if inst.name in fusion_open:
            continue   # its inputs go to the fused parameters
        for op in inst.operand_names:
            src = rep.get(op)
            if src is None or src == dst:
                continue
            edges[(src, dst)] = edges.get((src, dst), 0) + 1
    for op, param_did in fusion_inputs:
        src = rep.get(op)
        if src is not None and src != param_did:
            edges[(src, param_did)] = edges.get((src, param_did), 0) + 1
    for s, d, n in inner_edges:
        edges[(s, d)] = edges.get((s, d), 0) + n
    ghost_edges = []
    for ghost in ghosts:
        svg_id = "ghost:" + ghost.name
        did = w.dot_id(svg_id)
        w.svg[svg_id] = ghost.name
        w.node("  ", did, {"id": svg_id, "label": _short(ghost.name) + "\n" + _short(ghost.label, 60),
                           "style": "rounded,dashed,filled", "fillcolor": "#fff5f5",
                           "color": "#e03131", "fontcolor": "#c92a2a", "penwidth": "1.5",
                           "tooltip": ghost.label})
        for src in ghost.inputs:
            if rep.get(src):
                ghost_edges.append((rep[src], did))
        for dst in ghost.outputs:
            if rep.get(dst):
                ghost_edges.append((did, rep[dst]))
    edges, hidden = _thin(edges, len(w.ids), w.node_attrs)
    if hidden:
        notes.append(f"{hidden} edges of nodes with many users or operands are not drawn "
                     "(their labels say how many); the inspector lists them all")
    for (s, d), n in edges.items():
        extra = f' [penwidth={min(1 + math.log2(n) / 2, 2.5):.1f}, tooltip="{n} edges"]' \
            if n > 1 else ""
        w.lines.append(f"  {s} -> {d}{extra};")
    for s, d in dict.fromkeys(ghost_edges):
        w.lines.append(f'  {s} -> {d} [style=dashed, color="#e03131"];')
    w.lines.append("}")

    by_dot = {d: svg for svg, d in w.ids.items()}
    shown_as = {name: by_dot[d] for name, d in rep.items() if d in by_dot}
    return Drawing(w.text(), len(w.ids), len(edges), notes, w.svg, w.layout_changes, shown_as)


MAX_FAN = 16       # edges drawn per node and direction before thinning starts
EDGE_BUDGET = 1200  # ...and Graphviz's cost grows with edges: thin harder past this


def _thin(edges: dict[tuple[str, str], int], nodes: int,
          attrs: Mapping[str, dict]) -> tuple[dict[tuple[str, str], int], int]:
    """Drop the edges of hubs (a tuple of 280 outputs, a parameter read by 60 users):
    they cost Graphviz most and say least. Each hub's label counts what is not drawn."""
    budget = max(EDGE_BUDGET, int(1.3 * nodes))
    limit = MAX_FAN
    while True:
        outs: dict[str, int] = {}
        ins: dict[str, int] = {}
        kept: dict[tuple[str, str], int] = {}
        hid_out: dict[str, int] = {}
        hid_in: dict[str, int] = {}
        for (s, d), n in edges.items():
            if outs.get(s, 0) >= limit:
                hid_out[s] = hid_out.get(s, 0) + 1
                continue
            if ins.get(d, 0) >= limit:
                hid_in[d] = hid_in.get(d, 0) + 1
                continue
            outs[s] = outs.get(s, 0) + 1
            ins[d] = ins.get(d, 0) + 1
            kept[(s, d)] = n
        if len(kept) <= budget or limit <= 2:
            break
        limit //= 2
    for did, n in hid_out.items():
        a = attrs.get(did)
        if a is not None:
            a["label"] += f"\n⋯ {n} more users not drawn"
    for did, n in hid_in.items():
        a = attrs.get(did)
        if a is not None:
            a["label"] += f"\n⋯ {n} more operands not drawn"
    return kept, len(edges) - len(kept)


def _assign(g: Group, did: str, rep: dict[str, str]) -> None:
    for inst in g.insts:
        rep[inst.name] = did
    for c in g.children.values():
        _assign(c, did, rep)
