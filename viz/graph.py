"""Computation -> graph view: groups, fusion clusters, node budget, DOT text.

The view of a computation is a tree of groups over its instructions:

* ``layers``: the scopes of ``op_name`` (``jit(train_step)/transpose(jvp(block))/attn/...``);
* ``source``: the Python call path from the stack frames (function, file:line);
* ``flat``: no scopes.

Any group with too many direct children is split (by source line, else by position in
the schedule), so a 20k-instruction module opens as a few dozen boxes. A group is open
when it is open by default XOR its id is in ``GraphOptions.expanded`` (so a URL stores
only what the user toggled). Fusions are collapsed into one node unless toggled open,
then their fused computation is drawn inside a cluster box.

Ids in the SVG: ``node:<instruction>`` for instructions, ``group:<group id>`` for groups
(a collapsed group node or an open cluster); fusion groups are ``fusion:<instruction>``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Mapping

from compiler_bridge.hlo import layout_change
from compiler_bridge.hlo import HloComputation, HloInstruction, HloModule

from . import categories as C

SPLIT = 80              # a group with more direct children than this is split
DEFAULT_OPEN = 40       # open groups by default while the view stays this small...
SMALL = 200             # ...or open everything when everything fits in this many nodes
MAX_PARTS = 16          # a split group shows at most about this many parts
DEFAULT_BUDGET = 1500
ONLY_FLAT = 400         # an ``only`` view up to this size is drawn without part boxes
MAX_LABEL = 48


@dataclass(frozen=True)
class GraphOptions:
    expanded: frozenset[str] = frozenset()   # group ids toggled from their default
    grouping: str = "layers"                 # 'layers' | 'source' | 'flat'
    focus: str = ""                          # instruction to centre a k-hop view on
    radius: int = 2
    budget: int = DEFAULT_BUDGET
    selected: str = ""
    # name -> {"fillcolor", "color", "penwidth", "label", "tooltip", "style"}: overlays, diffs
    decorations: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # show only these instructions (e.g. what a pass changed and its neighbours), flat
    only: frozenset[str] = frozenset()
    # removed instructions drawn as red dashed nodes: objects with .name, .label,
    # .inputs and .outputs (names of instructions in this computation)
    ghosts: tuple = ()


@dataclass
class GroupInfo:
    id: str
    label: str
    kind: str                 # 'layer', 'source', 'split', 'fusion'
    size: int                 # instructions inside (all depths)
    fusions: int = 0
    expanded: bool = False
    parent: str = ""


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


# --------------------------------------------------------------------------- group tree

class _Group:
    __slots__ = ("id", "label", "kind", "children", "insts", "parent", "size", "fusions",
                 "order", "open")

    def __init__(self, gid: str, label: str, kind: str, parent: "_Group | None") -> None:
        self.id = gid
        self.label = label
        self.kind = kind
        self.children: dict[str, _Group] = {}
        self.insts: list[HloInstruction] = []
        self.parent = parent
        self.size = 0
        self.fusions = 0
        self.order = 0           # position of the first instruction (keeps file order)
        self.open = False

    def items(self, order: Mapping[str, int]) -> list:
        """Children and instructions in schedule order."""
        out: list = list(self.children.values()) + self.insts
        out.sort(key=lambda x: x.order if isinstance(x, _Group) else order[x.name])
        return out


def split_scopes(op_name: str) -> list[str]:
    """``jit(f)/transpose(jvp(g))/dot_general`` -> ['jit(f)', 'transpose(jvp(g))'] (the op
    itself, the last part, is dropped); '/' inside parentheses does not split."""
    if not op_name:
        return []
    if "(" not in op_name:
        parts = op_name.split("/")
    else:
        parts, depth, start = [], 0, 0
        for i, ch in enumerate(op_name):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "/" and depth == 0:
                parts.append(op_name[start:i])
                start = i + 1
        parts.append(op_name[start:])
    return [p for p in parts[:-1] if p]


def _gid(kind: str, path: tuple[str, ...]) -> str:
    text = "/".join(path)
    if len(text) > 80:
        text = text[:40] + "~" + hashlib.sha1(text.encode()).hexdigest()[:10]
    return f"{kind}:{text}"


def _paths(module: HloModule, comp: HloComputation, grouping: str) -> dict[str, tuple[str, ...]]:
    """Instruction -> its group path under the chosen grouping."""
    paths: dict[str, tuple[str, ...]] = {}
    if grouping == "flat":
        return {i.name: () for i in comp.instructions}
    for inst in comp.instructions:
        if inst.opcode == "parameter":
            paths[inst.name] = ()
            continue
        if grouping == "layers":
            paths[inst.name] = tuple(split_scopes(inst.op_name))
        else:
            loc = module.source_location(inst)
            if loc is None:
                paths[inst.name] = ()
            else:
                frames = [loc] + list(loc.callers)
                frames.reverse()   # outermost first; the innermost line is the leaf
                paths[inst.name] = tuple(
                    f"{f.function or '?'} ({f.file.rsplit('/', 1)[-1]}:{f.line})" for f in frames)
    # Instructions without a scope (constants, broadcasts, tuples) join their users'
    # common scope, so they do not all pile up at the top level.
    for inst in reversed(comp.instructions):
        if paths[inst.name] or inst.opcode == "parameter" or inst.is_root:
            continue
        us = [paths[u.name] for u in comp.users_of(inst.name)]
        if us:
            common = us[0]
            for p in us[1:]:
                n = 0
                while n < len(common) and n < len(p) and common[n] == p[n]:
                    n += 1
                common = common[:n]
            paths[inst.name] = common
    return paths


def _build_tree(module: HloModule, comp: HloComputation, grouping: str,
                order: Mapping[str, int]) -> _Group:
    root = _Group("", comp.name, "root", None)
    kind = {"layers": "layer", "source": "source"}.get(grouping, "layer")
    paths = _paths(module, comp, grouping)
    for idx, inst in enumerate(comp.instructions):
        node = root
        path = paths[inst.name]
        for depth in range(len(path)):
            key = path[depth]
            child = node.children.get(key)
            if child is None:
                child = _Group(_gid("L" if kind == "layer" else "S", path[: depth + 1]), key,
                               kind, node)
                child.order = idx
                node.children[key] = child
            node = child
        node.insts.append(inst)
    _compress(root)
    _split(module, root, order)
    _sizes(root)
    return root


def _compress(g: _Group) -> None:
    """Merge chains of groups that hold exactly one group and nothing else."""
    for key, child in list(g.children.items()):
        while len(child.children) == 1 and not child.insts:
            (only,) = child.children.values()
            only.label = child.label + "/" + only.label
            only.parent = g
            only.order = min(only.order, child.order)
            child = only
        g.children[key] = child
        _compress(child)
    # a group whose only content is one group of its own is replaced by it
    if g.parent is None and len(g.children) == 1 and not g.insts:
        (only,) = g.children.values()
        g.children = only.children
        g.insts = only.insts
        for c in g.children.values():
            c.parent = g


def _split(module: HloModule, g: _Group, order: Mapping[str, int]) -> None:
    """Split groups with too many direct children.

    Parameters go into a group of their own; other instructions are cut where the
    sequence of source lines starts over (one cut per repetition, e.g. per layer of a
    model written with a Python loop), else grouped by source line, else chunked by
    position in the schedule. Real groups stay visible at their level.
    """
    for child in list(g.children.values()):
        _split(module, child, order)
    if len(g.children) + len(g.insts) <= SPLIT:
        return
    insts = g.insts
    params = [i for i in insts if i.opcode == "parameter"]
    if len(params) > 8:
        sub = _Group(f"{g.id or 'root'}#params", f"parameters ({len(params)})", "split", g)
        sub.insts = params
        sub.order = order[params[0].name]
        g.children[sub.id] = sub
        insts = [i for i in insts if i.opcode != "parameter"]
        _chunk(sub, order)
    room = max(SPLIT - len(g.children), SPLIT // 2)
    if len(insts) > room:
        keys = [_line_key(module, i) for i in insts]
        parts = _repeats(insts, keys)
        if not (2 <= len(parts) <= room):
            parts = _by_line(insts, keys, room)
        if parts is None or not (2 <= len(parts) <= room):
            parts = None
        elif len(parts) > MAX_PARTS:
            # many tiny repetitions (e.g. one optimizer update per parameter): merge
            # neighbours so a user sees a dozen parts, not sixty
            per = math.ceil(len(parts) / (MAX_PARTS * 3 // 4))
            parts = [sum(parts[k:k + per], []) for k in range(0, len(parts), per)]
        if parts is not None:
            kept = []
            for k, members in enumerate(parts):
                if len(members) == 1:
                    kept.extend(members)
                    continue
                label = _part_label(members, keys, insts, k, len(parts))
                sub = _Group(f"{g.id or 'root'}#{k}", label, "split", g)
                sub.insts = members
                sub.order = order[members[0].name]
                g.children[sub.id] = sub
                _split(module, sub, order)
            insts = kept
    g.insts = sorted(insts, key=lambda i: order[i.name])
    if len(g.children) + len(g.insts) > SPLIT:
        _chunk(g, order)


def _line_key(module: HloModule, inst: HloInstruction) -> str:
    loc = module.source_location(inst)
    return f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" if loc is not None else ""


def _repeats(insts: list[HloInstruction], keys: list[str]) -> list[list[HloInstruction]]:
    """Cut the schedule where a source line comes back (the next repetition begins)."""
    parts: list[list[HloInstruction]] = [[]]
    seen: set[str] = set()
    for inst, key in zip(insts, keys):
        if key and key in seen and len(parts[-1]) >= 4:
            parts.append([])
            seen = set()
        parts[-1].append(inst)
        if key:
            seen.add(key)
    return parts


def _by_line(insts: list[HloInstruction], keys: list[str], room: int):
    buckets: dict[str, list[HloInstruction]] = {}
    for inst, key in zip(insts, keys):
        buckets.setdefault(key, []).append(inst)
    if len(buckets) < 2 or len(buckets) > room:
        return None
    return list(buckets.values())


def _part_label(members: list[HloInstruction], keys: list[str], insts, k: int, n: int) -> str:
    lines = {keys[insts.index(members[0])], keys[insts.index(members[-1])]} - {""}
    where = f" · {min(lines)}" if len(lines) == 1 else ""
    return f"part {k + 1}/{n}: {members[0].name} … {members[-1].name}{where}"


def _chunk(g: _Group, order: Mapping[str, int]) -> None:
    """Put a group's children into consecutive chunks until each level is small."""
    items = g.items(order)
    if len(items) <= SPLIT:
        return
    size = math.ceil(len(items) / SPLIT)
    size = max(size, math.ceil(len(items) / (SPLIT * 2)))
    g.children = {}
    g.insts = []
    for k in range(0, len(items), size):
        part = items[k:k + size]
        first, last = _item_name(part[0]), _item_name(part[-1])
        sub = _Group(f"{g.id or 'root'}#{k // size}", f"{first} … {last}", "split", g)
        for it in part:
            if isinstance(it, _Group):
                it.parent = sub
                sub.children[it.id] = it
            else:
                sub.insts.append(it)
        sub.order = part[0].order if isinstance(part[0], _Group) else order[part[0].name]
        g.children[sub.id] = sub
        _chunk(sub, order)


def _item_name(item) -> str:
    return item.label if isinstance(item, _Group) else item.name


def _sizes(g: _Group) -> tuple[int, int]:
    size = len(g.insts)
    fusions = sum(1 for i in g.insts if i.opcode == "fusion")
    for c in g.children.values():
        s, f = _sizes(c)
        size += s
        fusions += f
    g.size, g.fusions = size, fusions
    return size, fusions


def _all_groups(g: _Group):
    for c in g.children.values():
        yield c
        yield from _all_groups(c)


def _visible_count(g: _Group, fusion_open: Mapping[str, int]) -> int:
    n = 0
    for c in g.children.values():
        n += _visible_count(c, fusion_open) if c.open else 1
    for inst in g.insts:
        n += fusion_open.get(inst.name, 1)
    return n


def _default_open(root: _Group, fusion_open: Mapping[str, int]) -> set[str]:
    """Open the biggest groups first while the view stays small."""
    opened: set[str] = set()
    root.open = True
    everything = list(_all_groups(root))
    for g in everything:
        g.open = True
    if _visible_count(root, fusion_open) <= SMALL:
        return {g.id for g in everything}
    for g in everything:
        g.open = False
    total = _visible_count(root, fusion_open)
    frontier = list(root.children.values())
    # never open on a handful of boxes: open the biggest group until there is something to
    # see (the ENTRY's parameters, drawn at the top level, are not something to see)
    params = sum(1 for i in root.insts if i.opcode == "parameter")
    while total - params < 12 and frontier:
        frontier.sort(key=lambda x: -x.size)
        g = frontier.pop(0)
        g.open = True
        opened.add(g.id)
        total += len(g.children) + len(g.insts) - 1
        frontier.extend(g.children.values())
    while frontier:
        frontier.sort(key=lambda x: -x.size)
        g = frontier.pop(0)
        extra = len(g.children) + len(g.insts) - 1
        if total + extra > DEFAULT_OPEN:
            continue
        g.open = True
        opened.add(g.id)
        total += extra
        frontier.extend(g.children.values())
    for g in _all_groups(root):
        g.open = False
    return opened


# --------------------------------------------------------------------------- DOT

def _q(s: str) -> str:
    """A DOT double-quoted string (escapes quotes, backslashes and newlines)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short(text: str, n: int = MAX_LABEL) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _shape_label(inst: HloInstruction) -> str:
    s = str(inst.shape)
    if inst.shape.is_tuple and len(s) > MAX_LABEL:
        return f"tuple of {len(inst.shape.tuple_shapes)}: " + _short(s, MAX_LABEL - 12)
    return _short(s)


class _Writer:
    def __init__(self, module: HloModule, options: GraphOptions) -> None:
        self.module = module
        self.options = options
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
            n_ops = sum(1 for i in fused.instructions if i.opcode != "parameter") if fused else 0
            opcode = f"fusion {inst.fusion_kind or ''} · {n_ops} ops".replace("  ", " ")
        elif inst.called_names:
            opcode = f"{inst.opcode} → {', '.join(inst.called_names)[:40]}"
        label = f"{_short(inst.name)}\n{_short(opcode)}\n{_shape_label(inst)}"
        attrs = {"id": svg_id, "label": label, "fillcolor": fill, "color": border,
                 "penwidth": penwidth, "style": style,
                 "tooltip": _short(inst.text, 600)}
        if inst.opcode == "parameter":
            attrs["shape"] = "invhouse"
            attrs["style"] = "filled"
        if inst.is_root:
            attrs["peripheries"] = "2"
        change = layout_change(inst)
        if change is not None:
            attrs["color"] = "#e8590c"
            attrs["penwidth"] = "3"
            attrs["label"] += "\n⟲ layout change"
            self.layout_changes.append(inst.name)
        if inst.name == self.options.selected:
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
        dec = self.options.decorations.get(key)
        if not dec:
            return
        for k, v in dec.items():
            if k == "label":
                attrs["label"] += "\n" + v
            elif k == "tooltip":
                attrs["tooltip"] = v + "\n" + attrs.get("tooltip", "")
            else:
                attrs[k] = v

    def group_node(self, g: _Group, indent: str) -> str:
        svg_id = "group:" + g.id
        did = self.dot_id(svg_id)
        self.svg[svg_id] = g.id
        kind = {"split": "part", "layer": "scope", "source": "call"}.get(g.kind, g.kind)
        extra = f", {g.fusions} fusions" if g.fusions else ""
        label = f"{_short(g.label, 60)}\n{g.size} instructions{extra}\n[{kind} ▸]"
        attrs = {"id": svg_id, "label": label, "shape": "box3d", "style": "filled",
                 "fillcolor": "#f8f9fa", "color": "#495057",
                 "tooltip": f"{g.label}: {g.size} instructions (double-click to open)"}
        if g.id == self.options.selected:
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
        return ", ".join(f"{k}={_q(str(v))}" for k, v in attrs.items())


def build_graph(module: HloModule, computation: str | None = None,
                options: GraphOptions | None = None) -> GraphView:
    """The graph view of one computation (the ENTRY when ``computation`` is empty)."""
    options = options or GraphOptions()
    comp = module.get_computation(computation) if computation else module.entry
    if comp is None:
        raise KeyError(f"module {module.name} has no computation {computation!r}")
    notes: list[str] = []
    toggled = set(options.expanded)

    order = {inst.name: idx for idx, inst in enumerate(comp.instructions)}
    focus = comp.get(options.focus) if options.focus else None
    if options.focus and focus is None:
        notes.append(f"focus node {options.focus!r} is not in {comp.name}; showing everything")
    if options.only and focus is None:
        keep = set(options.only) & set(order)
        root = _Group("", comp.name, "root", None)
        root.insts = [inst for inst in comp.instructions if inst.name in keep]
        if len(root.insts) > ONLY_FLAT:       # a few hundred lay out fine without boxes
            _chunk(root, order)
        _sizes(root)
        notes.append(f"showing {len(keep)} of {len(comp.instructions)} instructions")
    elif focus is not None:
        keep = _neighbourhood(comp, focus, options.radius)
        root = _Group("", comp.name, "root", None)
        root.insts = [inst for inst in comp.instructions if inst.name in keep]
        _chunk(root, order)
        _sizes(root)
        notes.append(f"focus: {len(keep)} instructions within {options.radius} hops of "
                     f"{focus.name} (of {len(comp.instructions)})")
    else:
        root = _build_tree(module, comp, options.grouping, order)

    # fusion nodes that open into clusters, and how many nodes each then draws
    fusion_open: dict[str, int] = {}
    for inst in comp.instructions:
        if inst.opcode == "fusion" and ("fusion:" + inst.name) in toggled:
            fused = module.get_computation(inst.called_names[0]) if inst.called_names else None
            if fused is not None:
                fusion_open[inst.name] = len(fused.instructions)

    default = _default_open(root, fusion_open) if focus is None else set()
    groups = {g.id: g for g in _all_groups(root)}
    for g in groups.values():
        g.open = (g.id in default) != (g.id in toggled)
    root.open = True
    # a group is only shown open when all its ancestors are open
    for g in groups.values():
        p = g.parent
        while g.open and p is not None and p is not root:
            if not p.open:
                g.open = False
            p = p.parent

    # node budget: close the deepest, biggest open groups until the view fits
    count = _visible_count(root, fusion_open)
    closed = 0
    if count > options.budget:
        open_groups = sorted((g for g in groups.values() if g.open),
                             key=lambda g: (-_depth(g), -g.size))
        for g in open_groups:
            if count <= options.budget:
                break
            g.open = False
            closed += 1
            count = _visible_count(root, fusion_open)
        for name in list(fusion_open):
            if count <= options.budget:
                break
            count -= fusion_open.pop(name) - 1
            closed += 1
    if closed:
        notes.append(f"{closed} groups were kept closed to stay within the "
                     f"{options.budget}-node budget; open them one at a time")

    w = _Writer(module, options)
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

    def emit(g: _Group, indent: str, stand_in: str | None) -> None:
        for item in g.items(order):
            if isinstance(item, _Group):
                if item.open and stand_in is None:
                    cluster_n[0] += 1
                    w.lines.append(f"{indent}subgraph cluster_{cluster_n[0]} {{")
                    w.lines.append(f"{indent}  id={_q('group:' + item.id)}; "
                                   f"label={_q(_short(item.label, 80) + f'  ({item.size})')}; "
                                   'style="rounded,filled"; fillcolor="#f8f9fa08"; '
                                   'color="#adb5bd"; fontsize=10; labeljust=l;')
                    w.svg["group:" + item.id] = item.id
                    emit(item, indent + "  ", None)
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
        w.lines.append(f"{indent}  id={_q('group:' + gid)}; label={_q(title)}; "
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
    # Scalar constants feed many users; like XLA's own graph dumps, fold them into their
    # users (named in the users' tooltips) instead of drawing a node with dozens of edges.
    folded = {i.name for i in comp.instructions
              if i.opcode == "constant" and not i.is_root and i.shape.is_array
              and i.shape.element_count <= 1 and i.name != options.focus}
    if folded:
        notes.append(f"{len(folded)} scalar constants are folded into their users")
    emit(root, "  ", None)

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
    for ghost in options.ghosts:
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

    node_count = len(w.ids)
    by_dot = {d: svg for svg, d in w.ids.items()}
    shown_as = {name: by_dot[d] for name, d in rep.items() if d in by_dot}
    group_of: dict[str, str] = {}
    for g in groups.values():
        for inst in g.insts:
            group_of[inst.name] = g.id
    infos = {g.id: GroupInfo(g.id, g.label, g.kind, g.size, g.fusions, g.open,
                             g.parent.id if g.parent is not None else "")
             for g in groups.values()}
    for name in fusion_open:
        inst = comp.get(name)
        infos["fusion:" + name] = GroupInfo("fusion:" + name, name, "fusion",
                                            fusion_open[name], 0, True)
    return GraphView(comp.name, w.text(), node_count, len(edges), notes, infos,
                     w.svg, C.LEGEND, w.layout_changes, frozenset(default), shown_as, group_of)


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


def _assign(g: _Group, did: str, rep: dict[str, str]) -> None:
    for inst in g.insts:
        rep[inst.name] = did
    for c in g.children.values():
        _assign(c, did, rep)


def _depth(g: _Group) -> int:
    d = 0
    while g.parent is not None:
        d += 1
        g = g.parent
    return d


def _neighbourhood(comp: HloComputation, center: HloInstruction, radius: int) -> set[str]:
    keep = {center.name}
    frontier = [center]
    for _ in range(max(radius, 0)):
        nxt = []
        for inst in frontier:
            for other in list(inst.operands) + comp.users_of(inst.name):
                if other.name not in keep:
                    keep.add(other.name)
                    nxt.append(other)
        frontier = nxt
    return keep

