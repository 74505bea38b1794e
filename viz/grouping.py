"""Computation -> tree of groups: what a graph view draws, before any DOT is written.

The view of a computation is a tree of groups over its instructions:

* ``layers``: the scopes of ``op_name`` (``jit(train_step)/transpose(jvp(block))/attn/...``);
* ``source``: the Python call path from the stack frames (function, file:line);
* ``flat``: no scopes.

Any group with too many direct children is split (by source line, else by position in
the schedule), so a 20k-instruction module opens as a few dozen boxes. A group is open
when it is open by default XOR its id is in ``GraphOptions.expanded`` (so a URL stores
only what the user toggled). Fusions are collapsed into one node unless toggled open,
then their fused computation is drawn inside a cluster box. A focus (k hops around an
instruction) or an ``only`` set draws a flat selection instead; the node budget closes
the deepest, biggest groups until the view fits.

``group`` returns a ``Grouping``: the tree, which groups are open, which fusions are drawn
open and which scalar constants are folded into their users. ``viz.dot.emit`` writes it
as DOT (with decorations: diff colours, runtimes, comment badges), as often as needed.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Mapping, Protocol

from compiler_bridge.hlo import HloComputation, HloInstruction, HloModule

SPLIT = 80              # a group with more direct children than this is split
DEFAULT_OPEN = 40       # open groups by default while the view stays this small...
SMALL = 200             # ...or open everything when everything fits in this many nodes
MAX_PARTS = 16          # a split group shows at most about this many parts
DEFAULT_BUDGET = 1500
ONLY_FLAT = 400         # an ``only`` view up to this size is drawn without part boxes


class GhostNode(Protocol):
    """A removed instruction drawn as a red dashed node (``viz.stepper.Ghost``), with
    edges from ``inputs`` and to ``outputs`` (instructions of the computation shown)."""

    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def inputs(self) -> Sequence[str]: ...
    @property
    def outputs(self) -> Sequence[str]: ...


class GroupIndex(Protocol):
    """Where instructions sit in a view's groups: a ``Grouping`` or a ``GraphView``."""

    @property
    def groups(self) -> Mapping[str, GroupInfo]: ...
    @property
    def group_of(self) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class GraphOptions:
    """What a graph view shows. ``group`` reads the first six (which nodes are drawn,
    which groups are closed); ``viz.dot.emit`` the last three (how they look)."""

    expanded: frozenset[str] = frozenset()   # group ids toggled from their default
    grouping: str = "layers"                 # 'layers' | 'source' | 'flat'
    focus: str = ""                          # instruction to centre a k-hop view on
    radius: int = 2
    budget: int = DEFAULT_BUDGET
    # show only these instructions (e.g. what a pass changed and its neighbours), flat
    only: frozenset[str] = frozenset()
    selected: str = ""
    # name -> {"fillcolor", "color", "penwidth", "label", "tooltip", "style"}: overlays, diffs
    decorations: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # removed instructions drawn as red dashed nodes (names of instructions in this
    # computation as their inputs and outputs)
    ghosts: tuple[GhostNode, ...] = ()


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
class Grouping:
    """A computation grouped under some options: the tree, what is open, what is folded.
    ``viz.dot.emit`` draws it; ``groups`` and ``group_of`` are what decorations of
    closed boxes need (diff counts, runtime totals, comment badges) before drawing."""

    module: HloModule
    computation: HloComputation
    root: Group
    order: dict[str, int]             # instruction -> position in the schedule
    fusion_open: dict[str, int]       # fusions drawn open -> instructions inside
    folded: frozenset[str]            # scalar constants folded into their users
    groups: dict[str, GroupInfo]      # every group (and open fusion) by id
    group_of: dict[str, str]          # instruction -> innermost group
    default_expanded: frozenset[str]  # groups open by default
    notes: list[str]

    @property
    def closed(self) -> set[str]:
        """Ids of the groups drawn as one node (closed, inside open groups)."""
        out: set[str] = set()
        stack = [self.root]
        while stack:
            for c in stack.pop().children.values():
                if c.open:
                    stack.append(c)
                else:
                    out.add(c.id)
        return out


# --------------------------------------------------------------------------- group tree

class Group:
    """A node of the group tree: child groups and the instructions directly inside."""

    __slots__ = ("id", "label", "kind", "children", "insts", "parent", "size", "fusions",
                 "order", "open")

    def __init__(self, gid: str, label: str, kind: str, parent: "Group | None") -> None:
        self.id = gid
        self.label = label
        self.kind = kind
        self.children: dict[str, Group] = {}
        self.insts: list[HloInstruction] = []
        self.parent = parent
        self.size = 0
        self.fusions = 0
        self.order = 0           # position of the first instruction (keeps file order)
        self.open = False

    def items(self, order: Mapping[str, int]) -> list:
        """Children and instructions in schedule order."""
        out: list = list(self.children.values()) + self.insts
        out.sort(key=lambda x: x.order if isinstance(x, Group) else order[x.name])
        return out


# Scope paths are cut for display: at most MAX_SCOPES levels (the rest joined into the
# last) and MAX_SCOPE_CHARS characters a level. A valid module can carry a 1 MB op_name
# of 16k levels, and a path that long made grouping quadratic and unreadable.
MAX_SCOPES = 32
MAX_SCOPE_CHARS = 160


def _clip_scope(part: str) -> str:
    if len(part) <= MAX_SCOPE_CHARS:
        return part
    digest = hashlib.sha1(part.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{part[:MAX_SCOPE_CHARS - 12]}…{digest}"


def split_scopes(op_name: str) -> list[str]:
    """``jit(f)/transpose(jvp(g))/dot_general`` -> ['jit(f)', 'transpose(jvp(g))'] (the op
    itself, the last part, is dropped); '/' inside parentheses does not split. At most
    ``MAX_SCOPES`` levels of at most ``MAX_SCOPE_CHARS`` characters each."""
    parts = _scope_parts(op_name)
    if len(parts) > MAX_SCOPES:
        parts = parts[:MAX_SCOPES - 1] + ["/".join(parts[MAX_SCOPES - 1:])]
    return [_clip_scope(p) for p in parts]


def _scope_parts(op_name: str) -> list[str]:
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
    if grouping == "layers":
        layers = repeated_layers(module, comp)
        for name, k in layers.items():
            path = paths[name]
            paths[name] = path[:1] + (f"layer {k}",) + path[1:]
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


LAYER_MATCH = 0.9       # share of a layer's ops that must match the middle layer's
MIN_LAYER = 4           # ops a repeated layer has at least (one op again is no layer)


def repeated_layers(module: HloModule, comp: HloComputation) -> dict[str, int]:
    """Layers of a model written as a loop without named scopes: instruction -> layer
    (1..N), or {} when there is no such repetition.

    An op of a loop body has the same Python call stack in every iteration, so its
    source key (the stack's id, and forward or backward: ``transpose(`` in op_name) comes
    back N times, k per layer. N is the largest count that divides the counts of keys
    covering at least half of the located instructions; the i-th occurrence of a key
    belongs to layer ``i // k + 1`` (counted from the end for the backward pass, which
    runs the layers in reverse), and the layers must be isomorphic: each layer's
    (opcode, shape) multiset matches the middle layer's for LAYER_MATCH of its ops.
    """
    keyed: list[tuple[HloInstruction, tuple]] = []
    for inst in comp.instructions:
        if inst.opcode == "parameter":
            continue
        md = inst.metadata
        # XLA interns stack frames: one call stack, one stack_frame_id (and resolving
        # every stack costs seconds on a 400k-instruction module)
        stack = md.stack_frame_id or (md.source_file, md.source_line) if md.source_file \
            else md.stack_frame_id
        if not stack:
            continue
        keyed.append((inst, ("transpose(" in md.op_name, stack)))
    counts: dict[tuple, int] = {}
    for _, key in keyed:
        counts[key] = counts.get(key, 0) + 1
    if len(keyed) < 8:
        return {}
    by_count: dict[int, int] = {}          # a key count -> instructions with such keys
    for c in counts.values():
        by_count[c] = by_count.get(c, 0) + c
    for n in range(max(by_count), 1, -1):
        covered = sum(v for c, v in by_count.items() if c % n == 0)
        if covered < 0.5 * len(keyed):
            continue
        seen: dict[tuple, int] = {}
        layer: dict[str, int] = {}
        for inst, key in keyed:
            c = counts[key]
            if c % n:
                continue
            rank = seen.get(key, 0)
            seen[key] = rank + 1
            k = rank // (c // n)
            layer[inst.name] = n - k if key[0] else k + 1
        sigs: list[dict[tuple[str, str], int]] = [{} for _ in range(n)]
        for inst, _ in keyed:
            at = layer.get(inst.name)
            if at is not None:
                sig = (inst.opcode, str(inst.shape))
                sigs[at - 1][sig] = sigs[at - 1].get(sig, 0) + 1
        middle = sigs[n // 2]
        size = sum(middle.values())
        if size >= MIN_LAYER and all(sum(min(v, middle.get(s, 0)) for s, v in sig.items())
                        >= LAYER_MATCH * size for sig in sigs):
            return layer
    return {}


def _build_tree(module: HloModule, comp: HloComputation, grouping: str,
                order: Mapping[str, int]) -> Group:
    root = Group("", comp.name, "root", None)
    kind = {"layers": "layer", "source": "source"}.get(grouping, "layer")
    paths = _paths(module, comp, grouping)
    for idx, inst in enumerate(comp.instructions):
        node = root
        path = paths[inst.name]
        for depth in range(len(path)):
            key = path[depth]
            child = node.children.get(key)
            if child is None:
                child = Group(_gid("L" if kind == "layer" else "S", path[: depth + 1]), key,
                               kind, node)
                child.order = idx
                node.children[key] = child
            node = child
        node.insts.append(inst)
    _compress(root)
    _split(module, root, order)
    _sizes(root)
    return root


def _compress(g: Group) -> None:
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


def _split(module: HloModule, g: Group, order: Mapping[str, int]) -> None:
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
        sub = Group(f"{g.id or 'root'}#params", f"parameters ({len(params)})", "split", g)
        sub.insts = params
        sub.order = order[params[0].name]
        g.children[sub.id] = sub
        insts = [i for i in insts if i.opcode != "parameter"]
        _chunk(sub, order)
    room = max(SPLIT - len(g.children), SPLIT // 2)
    if len(insts) > room:
        keys = [_line_key(module, i) for i in insts]
        repeats = _repeats(insts, keys)
        parts = repeats if 2 <= len(repeats) <= room else _by_line(insts, keys, room)
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
                sub = Group(f"{g.id or 'root'}#{k}", label, "split", g)
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


def _by_line(insts: list[HloInstruction], keys: list[str], room: int
             ) -> list[list[HloInstruction]] | None:
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


def _chunk(g: Group, order: Mapping[str, int]) -> None:
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
        sub = Group(f"{g.id or 'root'}#{k // size}", f"{first} … {last}", "split", g)
        for it in part:
            if isinstance(it, Group):
                it.parent = sub
                sub.children[it.id] = it
            else:
                sub.insts.append(it)
        sub.order = part[0].order if isinstance(part[0], Group) else order[part[0].name]
        g.children[sub.id] = sub
        _chunk(sub, order)


def _item_name(item) -> str:
    return item.label if isinstance(item, Group) else item.name


def _sizes(g: Group) -> tuple[int, int]:
    size = len(g.insts)
    fusions = sum(1 for i in g.insts if i.opcode == "fusion")
    for c in g.children.values():
        s, f = _sizes(c)
        size += s
        fusions += f
    g.size, g.fusions = size, fusions
    return size, fusions


def _all_groups(g: Group) -> Iterator[Group]:
    for c in g.children.values():
        yield c
        yield from _all_groups(c)


def _visible_count(g: Group, fusion_open: Mapping[str, int]) -> int:
    n = 0
    for c in g.children.values():
        n += _visible_count(c, fusion_open) if c.open else 1
    for inst in g.insts:
        n += fusion_open.get(inst.name, 1)
    return n


def _default_open(root: Group, fusion_open: Mapping[str, int]) -> set[str]:
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


def group(module: HloModule, computation: str | None = None,
          options: GraphOptions | None = None) -> Grouping:
    """Group one computation (the ENTRY when ``computation`` is empty) for a view."""
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
        root = Group("", comp.name, "root", None)
        root.insts = [inst for inst in comp.instructions if inst.name in keep]
        if len(root.insts) > ONLY_FLAT:       # a few hundred lay out fine without boxes
            _chunk(root, order)
        _sizes(root)
        notes.append(f"showing {len(keep)} of {len(comp.instructions)} instructions")
    elif focus is not None:
        keep = neighbourhood(comp, [focus], options.radius)
        root = Group("", comp.name, "root", None)
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

    groups = {g.id: g for g in _all_groups(root)}
    pinned: set[str] = set()
    if focus is None:
        default = _default_open(root, fusion_open)
    else:
        # the node the view is centred on is always drawn: the parts holding it open
        default = set()
        gid = next((g.id for g in groups.values() if focus in g.insts), "")
        while gid and gid in groups and groups[gid] is not root:
            default.add(gid)
            parent = groups[gid].parent
            gid = parent.id if parent is not None else ""
        pinned = default - toggled
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
            if g.id in pinned:
                continue
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

    # Scalar constants feed many users; like XLA's own graph dumps, fold them into their
    # users (named in the users' tooltips) instead of drawing a node with dozens of edges.
    folded = frozenset(i.name for i in comp.instructions
                       if i.opcode == "constant" and not i.is_root and i.shape.is_array
                       and i.shape.element_count <= 1 and i.name != options.focus)
    if folded:
        notes.append(f"{len(folded)} scalar constants are folded into their users")

    group_of: dict[str, str] = {}
    for grp in groups.values():
        for inst in grp.insts:
            group_of[inst.name] = grp.id
    infos = {grp.id: GroupInfo(grp.id, grp.label, grp.kind, grp.size, grp.fusions, grp.open,
                               grp.parent.id if grp.parent is not None else "")
             for grp in groups.values()}
    for name, size in fusion_open.items():
        infos["fusion:" + name] = GroupInfo("fusion:" + name, name, "fusion", size, 0, True)
    return Grouping(module, comp, root, order, fusion_open, folded, infos, group_of,
                    frozenset(default), notes)


def _depth(g: Group) -> int:
    d = 0
    while g.parent is not None:
        d += 1
        g = g.parent
    return d


def neighbourhood(comp: HloComputation, seeds: Sequence[HloInstruction],
                  radius: int) -> set[str]:
    """Names of ``seeds`` and of everything within ``radius`` operand/user hops of them."""
    keep = {i.name for i in seeds}
    frontier = list(seeds)
    for _ in range(max(radius, 0)):
        nxt = []
        for inst in frontier:
            for other in list(inst.operands) + comp.users_of(inst.name):
                if other.name not in keep:
                    keep.add(other.name)
                    nxt.append(other)
        frontier = nxt
    return keep

