"""Structural diff of two snapshots of one HLO module (two pass steps, or before/after).

``diff_modules(old, new)`` pairs every instruction of ``old`` with at most one of ``new``
(1:1), so ``added = new - paired`` and ``removed = old - paired`` and, counted over all
computations (fused ones included), ``len(new) - len(old) == len(added) - len(removed)``.

How instructions are paired, in order (each stage only sees what is still unpaired):

1. by name: XLA's names are unique in a module and survive passes that keep the
   instruction, wherever it moves (``reduce_sum.6`` fused keeps its name);
2. renamed clones: ``add.5.clone``, ``add.5.clone.1`` (and ``.remat``) pair with ``add.5``;
3. by value: an instruction is identified by what it computes, bottom-up — opcode, shape
   (layout ignored), attributes (metadata and backend_config ignored, called
   computations by name stem) and the identities of its operands. A fused computation's
   parameter *is* the fusion's operand, and a fusion (or ``call``) that is new *is* its
   root, so ``sub.2`` in ENTRY and its clone ``sub.16`` inside a new ``fusion.3`` get the
   same identity: "sub.2 fused into fusion.3 (as sub.16)". A paired instruction lends
   its identity to unpaired copies of it (XLA copies cheap producers into every fusion
   that reads them), so the copies' users still pair; the copies themselves are added
   (``ModuleDiff.duplicates`` says what each copies). First with ``op_name`` in the
   identity, then (for neighbouring steps) without. Equal identities pair in file order;
4. only with ``by_source=True`` (snapshots many passes apart): what is left pairs by
   opcode, shape and ``op_name``.

Everything is dictionaries and walks over each module, no pairwise comparisons: linear
in module size (see ``bench/pass_bench.py``). Instructions that kept their name, place,
text and operands are settled by a fast check; the value machinery only visits what is
unpaired and what it depends on.

What a pair can report (``InstructionChange.kinds``, in this order): ``renamed``,
``fused`` (moved into a fused computation), ``unfused``, ``moved`` (to another fusion or
computation), ``opcode``, ``shape``, ``layout`` (same shape, other ``minor_to_major`` /
tiles), ``operands`` (an operand now computes another value; reading the same value
through the fusion that now computes it, or from an identical copy, is not a change),
``attributes``, ``fused_computation`` (a fusion whose fused computation gained, lost or
changed instructions) and ``called_computation`` (the same for while/call/reduce...
callees). Module header changes and reordered computations (a scheduler ran) are noted
apart; they change no instruction.

Layout conflicts: every ``copy`` the newer snapshot adds that moves data from one layout
to another (and every such ``transpose`` in a step that changed layouts), with the bytes
it moves and the instructions that wanted the new layout (``analysis.layout_change``).
"""

from __future__ import annotations

import difflib
import gc
import re
from dataclasses import dataclass, field

from ..hlo import layout_change
from ..hlo import HloParseError
from ..hlo import COMPUTATION_ATTRIBUTES, HloComputation, HloInstruction, HloModule

KINDS = ("renamed", "fused", "unfused", "moved", "opcode", "shape", "layout", "operands",
         "attributes", "fused_computation", "called_computation")

# Attributes that do not change what an instruction computes (left out of its identity).
_NOT_IDENTITY = frozenset({"metadata", "backend_config", "frontend_attributes", "statistics",
                           "control-predecessors", "origin", "schedule_name"})
_TRANSPARENT_OPCODES = frozenset({"fusion", "call"})
_CLONE_SUFFIX = re.compile(r"(?:\.(?:clone|remat\d*|cloned)(?:\.\d+)?)+$")
_STEM = re.compile(r"(?:\.(?:clone|remat\d*|cloned|\d+))+$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')


# --------------------------------------------------------------------------- results

@dataclass(frozen=True, slots=True)
class InstructionRef:
    """Where an instruction lives in one snapshot."""

    name: str
    computation: str
    opcode: str
    fusion: str = ""      # the fusion instruction whose fused computation holds it

    @property
    def where(self) -> str:
        return f"fusion {self.fusion}" if self.fusion else self.computation

    def to_json(self) -> dict:
        out = {"name": self.name, "computation": self.computation, "opcode": self.opcode}
        if self.fusion:
            out["fusion"] = self.fusion
        return out


@dataclass(frozen=True, slots=True)
class InstructionChange:
    """A paired instruction that differs between the snapshots."""

    old: InstructionRef
    new: InstructionRef
    kinds: tuple[str, ...]                       # a subset of KINDS, in KINDS order
    details: dict[str, tuple[str, str]] = field(default_factory=dict)   # kind -> (old, new)

    def describe(self) -> str:
        """One line: ``sub.2 fused into fusion.3 (as sub.16); layout {0,1} -> {1,0}``."""
        parts = []
        for k in self.kinds:
            a, b = self.details.get(k, ("", ""))
            if k == "renamed":
                continue
            if k == "fused":
                parts.append(f"fused into {b}")
            elif k == "unfused":
                parts.append(f"taken out of {a} into {b}")
            elif k == "moved":
                parts.append(f"moved from {a} to {b}")
            elif k == "attributes":
                parts.append(f"attributes changed: {a}")
            elif k in ("fused_computation", "called_computation"):
                parts.append(f"{k.replace('_', ' ')}: {b}")
            else:
                parts.append(f"{k} {a} -> {b}")
        if "renamed" in self.kinds:
            if any(k in self.kinds for k in ("fused", "moved", "unfused")):
                parts[0] += f" (as {self.new.name})"
            else:
                parts.insert(0, f"renamed to {self.new.name}")
        return f"{self.old.name} " + "; ".join(parts)

    def to_json(self) -> dict:
        return {"old": self.old.to_json(), "new": self.new.to_json(), "kinds": list(self.kinds),
                "details": {k: list(v) for k, v in self.details.items()},
                "text": self.describe()}


@dataclass(frozen=True, slots=True)
class Move:
    """One instruction moving into or out of a fusion."""

    old: str          # name in the older snapshot
    new: str          # name in the newer snapshot ('' when removed)
    other: str        # where it came from (absorbed) or went (released): a fusion or computation


@dataclass(frozen=True, slots=True)
class FusionChange:
    """What happened to one fusion: created, grew, shrank, split, merged, dissolved."""

    old: str                      # the fusion instruction in the older snapshot ('' if new)
    new: str                      # ... in the newer one ('' if gone)
    # 'created' | 'grew' | 'shrank' | 'merged' | 'split' | 'changed' | 'dissolved'
    status: str
    absorbed: tuple[Move, ...] = ()    # instructions that moved in (other = from)
    released: tuple[Move, ...] = ()    # instructions that moved out (other = to)
    added: tuple[str, ...] = ()        # new instructions inside that pair with nothing
    removed: tuple[str, ...] = ()      # old instructions inside that pair with nothing
    copied: tuple[Move, ...] = ()      # copies of instructions that stay where they were

    def describe(self) -> str:
        name = self.new or self.old
        parts = [f"{name} {self.status}"]
        if self.absorbed:
            srcs = sorted({m.other for m in self.absorbed})
            names = ", ".join(m.old for m in self.absorbed[:6])
            parts.append(f"took in {len(self.absorbed)} ({names}"
                         f"{', …' if len(self.absorbed) > 6 else ''}) from {', '.join(srcs[:4])}")
        if self.released:
            dsts = sorted({m.other for m in self.released})
            parts.append(f"gave {len(self.released)} to {', '.join(dsts[:4])}")
        if self.copied:
            parts.append(f"copied in {len(self.copied)} ("
                         f"{', '.join(m.old for m in self.copied[:6])}"
                         f"{', …' if len(self.copied) > 6 else ''})")
        if self.added:
            parts.append(f"{len(self.added)} new inside")
        if self.removed:
            parts.append(f"{len(self.removed)} removed inside")
        return "; ".join(parts)

    def to_json(self) -> dict:
        return {"old": self.old, "new": self.new, "status": self.status,
                "absorbed": [[m.old, m.new, m.other] for m in self.absorbed],
                "released": [[m.old, m.new, m.other] for m in self.released],
                "added": list(self.added), "removed": list(self.removed),
                "copied": [[m.old, m.new, m.other] for m in self.copied],
                "text": self.describe()}


@dataclass(frozen=True, slots=True)
class LayoutChangeEntry:
    """A tensor that the newer snapshot stores in another layout."""

    name: str              # in the newer snapshot
    computation: str
    old_shape: str
    new_shape: str
    bytes: int


@dataclass(frozen=True, slots=True)
class LayoutConflict:
    """A copy/transpose added to hand a tensor over in the layout its users want."""

    instruction: str       # the added copy/transpose
    computation: str
    opcode: str
    operand: str           # the tensor whose layout did not suit
    from_shape: str
    to_shape: str
    bytes: int             # bytes the op moves (its output)
    users: tuple[str, ...]
    reason: str

    def to_json(self) -> dict:
        return {"instruction": self.instruction, "computation": self.computation,
                "opcode": self.opcode, "operand": self.operand, "from": self.from_shape,
                "to": self.to_shape, "bytes": self.bytes, "users": list(self.users)}


@dataclass
class ModuleDiff:
    """Result of ``diff_modules``; holds both modules for the views."""

    old: HloModule
    new: HloModule
    old_to_new: dict[str, str]                 # every pair, old name -> new name
    new_to_old: dict[str, str]
    added: list[InstructionRef]
    removed: list[InstructionRef]
    changed: list[InstructionChange]
    computations_added: list[str]
    computations_removed: list[str]
    computations_renamed: list[tuple[str, str]]
    computation_map: dict[str, str]            # old computation -> new computation
    fusions: list[FusionChange]
    layout_changes: list[LayoutChangeEntry]
    layout_conflicts: list[LayoutConflict]
    pairs_by: dict[str, int] = field(default_factory=dict)   # 'name' / 'clone' / 'value' -> count
    # added instruction -> the older instruction it is a copy of (a producer duplicated
    # into several fusions pairs with one copy; the others are added, copies of it)
    duplicates: dict[str, str] = field(default_factory=dict)
    # module header attributes that differ: key -> (old, new) ('' when absent)
    header_changes: dict[str, tuple[str, str]] = field(default_factory=dict)
    # computations (newer names) whose instructions kept their pairs but changed order
    reordered: list[str] = field(default_factory=list)
    _added_set: set[str] | None = None
    _changed_by_new: dict[str, InstructionChange] | None = None
    _changed_by_old: dict[str, InstructionChange] | None = None
    _removed_by_name: dict[str, InstructionRef] | None = None

    # -- lookups the views use
    @property
    def is_empty(self) -> bool:
        """No instruction or computation changed (the header or the order may have)."""
        return not (self.added or self.removed or self.changed or self.computations_added
                    or self.computations_removed)

    def is_added(self, new_name: str) -> bool:
        if self._added_set is None:
            self._added_set = {r.name for r in self.added}
        return new_name in self._added_set

    def change_of_new(self, new_name: str) -> InstructionChange | None:
        if self._changed_by_new is None:
            self._changed_by_new = {c.new.name: c for c in self.changed}
        return self._changed_by_new.get(new_name)

    def change_of_old(self, old_name: str) -> InstructionChange | None:
        if self._changed_by_old is None:
            self._changed_by_old = {c.old.name: c for c in self.changed}
        return self._changed_by_old.get(old_name)

    def removed_ref(self, old_name: str) -> InstructionRef | None:
        if self._removed_by_name is None:
            self._removed_by_name = {r.name: r for r in self.removed}
        return self._removed_by_name.get(old_name)

    def fused_into(self) -> dict[str, str]:
        """Old instruction -> the fusion instruction (newer snapshot) it was fused into."""
        return {c.old.name: c.new.fusion for c in self.changed
                if "fused" in c.kinds or ("moved" in c.kinds and c.new.fusion)}

    def summary(self) -> dict:
        return {
            "added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
            "computations_added": len(self.computations_added),
            "computations_removed": len(self.computations_removed),
            "fused": sum(1 for c in self.changed if "fused" in c.kinds),
            "layout_changes": len(self.layout_changes),
            "layout_conflicts": len(self.layout_conflicts),
            "bytes_moved": sum(c.bytes for c in self.layout_conflicts),
            "reordered": len(self.reordered),
            "header_changes": sorted(self.header_changes),
        }

    def to_json(self) -> dict:
        return {
            "old": self.old.name, "new": self.new.name, "summary": self.summary(),
            "added": [r.to_json() for r in self.added],
            "removed": [r.to_json() for r in self.removed],
            "changed": [c.to_json() for c in self.changed],
            "computations_added": self.computations_added,
            "computations_removed": self.computations_removed,
            "computations_renamed": [list(p) for p in self.computations_renamed],
            "fusions": [f.to_json() for f in self.fusions],
            "layout_changes": [{"name": c.name, "computation": c.computation, "old": c.old_shape,
                                "new": c.new_shape, "bytes": c.bytes} for c in self.layout_changes],
            "layout_conflicts": [c.to_json() for c in self.layout_conflicts],
        }


# --------------------------------------------------------------------------- one snapshot

class _Side:
    """One snapshot, flattened: instruction i, its operands, callers, fusion owners."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        comps = module.computations
        self.insts: list[HloInstruction] = [i for c in comps for i in c.instructions]
        self.comp: list[HloComputation] = [c for c in comps for _ in c.instructions]
        insts = self.insts
        n = len(insts)
        self.keys: list[str] = [i.name for i in insts]
        # key (the name; name@computation for a name seen before) -> i
        self.index: dict[str, int] = dict(zip(self.keys, range(n)))
        get = self.index.get
        if len(self.index) == n:
            # names are unique in the module (as XLA writes them): look operands up globally
            self.ops_all: list[list[int | None]] = [[get(x) for x in i.operand_names]
                                                    for i in insts]
        else:
            self.index = {}
            for i, (inst, c) in enumerate(zip(insts, self.comp)):
                key = inst.name if inst.name not in self.index else f"{inst.name}@{c.name}"
                self.index[key] = i
                self.keys[i] = key
            pos = {id(inst): i for i, inst in enumerate(insts)}
            self.ops_all = []
            for inst, c in zip(insts, self.comp):
                local = c.instruction_map
                self.ops_all.append([pos[id(o)] if o is not None else None
                                     for o in (local.get(x) for x in inst.operand_names)])
        self.ops: list[list[int]] = [[d for d in every if d is not None] if None in every
                                     else every for every in self.ops_all]
        # computation -> the one fusion/call that calls it (its parameters are that
        # instruction's operands, its root is its value); fused computation -> fusion
        callers: dict[str, list[int]] = {}
        for i, inst in enumerate(insts):
            for callee in inst.called_names:
                callers.setdefault(callee, []).append(i)
        self.callers = callers
        self.transparent: dict[str, int] = {}
        self.owner: dict[str, int] = {}
        for name, who in callers.items():
            if len(who) == 1 and insts[who[0]].opcode in _TRANSPARENT_OPCODES \
                    and len(insts[who[0]].called_names) == 1:
                self.transparent[name] = who[0]
                if insts[who[0]].opcode == "fusion":
                    self.owner[name] = who[0]
        # where a value comes from: a transparent computation's parameter -> the caller's
        # operand; a transparent fusion/call -> its computation's root
        self.psrc: list[int | None] = [None] * n
        self.froot: list[int | None] = [None] * n
        first = 0
        for c in comps:
            caller = self.transparent.get(c.name)
            k = len(c.instructions)
            if caller is not None:
                cops = self.ops_all[caller]
                r = c.root
                for j in range(first, first + k):
                    inst = insts[j]
                    if inst.opcode == "parameter":
                        try:
                            p = int(inst.args_text)
                        except ValueError:
                            continue
                        if p < len(cops):
                            self.psrc[j] = cops[p]
                    if inst is r:
                        self.froot[caller] = j
            first += k
        self.keys_shared: dict = {}       # set to one dict for both snapshots of a diff
        self._bases: dict[int, tuple] = {}
        self._skeys: dict[int, str] = {}
        self._strict_ids: dict[int, int] = {}
        self._loose_ids: dict[int, int] = {}

    def shape_key(self, i: int) -> str:
        k = self._skeys.get(i)
        if k is None:
            k = self._skeys[i] = _shape_key(self.insts[i].shape)
        return k

    def fusion_of(self, i: int) -> str:
        """The fusion instruction whose fused computation holds instruction i ('' if none)."""
        o = self.owner.get(self.comp[i].name)
        return self.insts[o].name if o is not None else ""

    def ref(self, i: int) -> InstructionRef:
        inst = self.insts[i]
        return InstructionRef(inst.name, self.comp[i].name, inst.opcode, self.fusion_of(i))

    def identity_key(self, i: int, strict: bool) -> int:
        """What instruction i computes, short of its operands, as a small int shared by
        both snapshots (``self.keys_shared``): opcode, shape without layout, attributes
        that matter (called computations by name stem), the literal of a constant, and
        with ``strict`` the ``op_name``."""
        key = (self._strict_ids if strict else self._loose_ids).get(i)
        if key is not None:
            return key
        base = self._bases.get(i)
        if base is None:
            inst = self.insts[i]
            try:
                attrs = inst.attributes
            except HloParseError:
                attrs = {"": inst.attributes_text}
            items = []
            op_name = ""
            for k, v in attrs.items():
                if k in _NOT_IDENTITY:
                    if k == "metadata":
                        m = _OP_NAME.search(v)
                        op_name = m.group(1) if m else ""
                    continue
                if k in COMPUTATION_ATTRIBUTES:
                    v = ",".join(_STEM.sub("", n) for n in inst.called_names) or v
                items.append((k, v))
            extra = ""
            if inst.opcode == "constant":
                extra = inst.args_text
            elif inst.opcode == "parameter":
                extra = inst.args_text.strip() + "@" + _STEM.sub("", self.comp[i].name)
            base = self._bases[i] = ((inst.opcode, self.shape_key(i), tuple(items), extra),
                                     op_name)
        shared = self.keys_shared
        if strict:
            key = self._strict_ids[i] = shared.setdefault(base, len(shared))
        else:
            key = self._loose_ids[i] = shared.setdefault(base[0], len(shared))
        return key


def _shape_key(shape) -> str:
    """The shape's text without its layout (``f32[8,16]``), cheaply for arrays."""
    text = shape.text
    if shape.element_type != "tuple" and not shape.buffer and text.endswith("}"):
        end = text.find("]")
        if end > 0:
            return text[: end + 1]
    return shape.without_layout() if shape.layout is not None or shape.is_tuple else text


# --------------------------------------------------------------------------- identities

_UNSET, _BUSY, _DONE = 0, 1, 2


def _fixed_token(o: int) -> int:
    """The token of a pair, from its older instruction: negative, so ``-t - 2`` gives it
    back; hashed tokens are >= 0 and -1 means 'not computed'."""
    return -o - 2


def _identities(side: _Side, fixed: dict[int, int], intern: dict, strict: bool | None,
                salt: int, lend: set[int] | frozenset[int] = frozenset(),
                starts=None, targets: list[int] | None = None) -> list[int]:
    """A token per instruction: equal tokens (across both snapshots) = same value.

    ``fixed`` gives paired instructions their shared token. Parameters of transparent
    computations take their caller operand's token; an unpaired fusion/call takes its
    root's; an unpaired get-tuple-element of a tuple takes that element's. Any other
    unpaired instruction hashes (identity_key, operand tokens); with ``strict=None`` it
    gets a token of its own instead (used to compare operands after pairing).

    A paired instruction in ``lend`` also registers its value key under its pairing
    token, so that an unpaired copy of it (XLA duplicates cheap producers into every
    fusion that reads them) gets the paired instruction's identity and the copy's users
    still pair. Call for the older snapshot first: its keys win.

    Only ``starts`` (default: every instruction) and what they depend on are computed;
    the rest stay -1.
    """
    n = len(side.insts)
    tok = [-1] * n
    state = [_UNSET] * n
    insts, ops = side.insts, side.ops
    psrc, froot = side.psrc, side.froot
    fwd: list[int | None] = [None] * n
    target = targets if targets is not None else list(range(n))   # whose value i is
    UNSET, DONE = _UNSET, _DONE
    for start in (range(n) if starts is None else starts):
        if state[start] == DONE:
            continue
        stack = [start]
        push, pop = stack.append, stack.pop
        while stack:
            i = stack[-1]
            st = state[i]
            if st == DONE:
                pop()
                continue
            if st == UNSET:
                state[i] = _BUSY
                # forwarding: a parameter to its caller's operand, an unpaired
                # transparent fusion/call to its root
                f = psrc[i]
                if f is None and i not in fixed:
                    f = froot[i]
                fwd[i] = f
                pushed = False
                if f is not None:
                    if state[f] == UNSET:
                        push(f)
                        pushed = True
                elif i not in fixed or i in lend:
                    for d in ops[i]:
                        if state[d] == UNSET:
                            push(d)
                            pushed = True
                if pushed:
                    continue
            # every dependency is done (or part of a cycle, which real HLO never has)
            f = fwd[i]
            if f is not None:
                if state[f] == _DONE:
                    tok[i], target[i] = tok[f], target[f]
                else:
                    tok[i] = intern.setdefault(("cycle", salt, i), len(intern))
            elif i in fixed:
                t = tok[i] = fixed[i]
                if strict is not None and i in lend:
                    key = (side.identity_key(i, strict),
                           tuple([tok[d] for d in ops[i]]))   # -1: a cycle
                    intern.setdefault(key, t)
            else:
                inst = insts[i]
                if inst.opcode == "get-tuple-element" and ops[i] and state[ops[i][0]] == _DONE:
                    t = target[ops[i][0]]
                    if insts[t].opcode == "tuple":
                        k = inst.tuple_index if "index=" in inst.attributes_text else None
                        if k is not None and k < len(ops[t]):
                            e = ops[t][k]
                            if state[e] == _UNSET:
                                stack.append(e)
                                continue
                            if state[e] == _DONE:
                                tok[i], target[i] = tok[e], target[e]
                                state[i] = _DONE
                                stack.pop()
                                continue
                if strict is None:
                    tok[i] = intern.setdefault(("own", salt, i), len(intern))
                else:
                    key = (side.identity_key(i, strict),
                           tuple([tok[d] for d in ops[i]]))   # -1: a cycle
                    tok[i] = intern.setdefault(key, len(intern))
            state[i] = _DONE
            stack.pop()
    return tok


def _pair_by_value(old: _Side, new: _Side, o2n: dict[int, int], n2o: dict[int, int],
                   strict: bool, duplicates: dict[int, int]) -> int:
    """Pair unpaired instructions that compute the same value; returns how many.

    Unpaired copies of a paired value stay unpaired (added) and are noted in
    ``duplicates`` (new index -> old index).
    """
    intern: dict = {}
    fixed_old = {o: _fixed_token(o) for o in o2n}
    fixed_new = {nn: _fixed_token(o) for o, nn in o2n.items()}
    un_old = [o for o in range(len(old.insts)) if o not in o2n]
    un_new = [nn for nn in range(len(new.insts)) if nn not in n2o]
    # a paired value can only have an unpaired copy on the other side if that side has
    # an unpaired instruction of its kind (opcode, shape): only those lend their identity
    kinds_old = {(old.insts[o].opcode, old.shape_key(o)) for o in un_old}
    kinds_new = {(new.insts[nn].opcode, new.shape_key(nn)) for nn in un_new}
    ops_old, ops_new = {k[0] for k in kinds_old}, {k[0] for k in kinds_new}
    lend_old = {o for o in fixed_old if old.insts[o].opcode in ops_new
                and (old.insts[o].opcode, old.shape_key(o)) in kinds_new}
    lend_new = {nn for nn in fixed_new if new.insts[nn].opcode in ops_old
                and (new.insts[nn].opcode, new.shape_key(nn)) in kinds_old}
    tok_old = _identities(old, fixed_old, intern, strict, 0, lend_old, un_old + sorted(lend_old))
    tok_new = _identities(new, fixed_new, intern, strict, 1, lend_new, un_new + sorted(lend_new))
    waiting: dict[tuple[int, str], list[int]] = {}
    for o in un_old:
        waiting.setdefault((tok_old[o], old.insts[o].opcode), []).append(o)
    for lst in waiting.values():
        lst.reverse()      # pop() from the end = file order
    paired: dict[int, int] = {}        # token -> old index, for the pairs made here
    count = 0
    for nn in un_new:
        lst = waiting.get((tok_new[nn], new.insts[nn].opcode))
        if lst:
            o = lst.pop()
            o2n[o] = nn
            n2o[nn] = o
            paired.setdefault(tok_old[o], o)
            count += 1
    # unpaired copies of a paired value
    for nn in un_new:
        if nn in n2o or nn in duplicates:
            continue
        t = tok_new[nn]
        o = -t - 2 if t < -1 else paired.get(t)
        if o is not None and old.insts[o].opcode == new.insts[nn].opcode != "parameter":
            duplicates[nn] = o
    return count


def _pair_by_source(old: _Side, new: _Side, o2n: dict[int, int], n2o: dict[int, int]) -> int:
    def key(side: _Side, i: int):
        if side.insts[i].opcode == "parameter":
            return None
        base = side._bases.get(i)
        if base is None:
            side.identity_key(i, True)
            base = side._bases[i]
        (opcode, shape, _, _), op_name = base
        return (opcode, shape, op_name) if op_name else None

    waiting: dict[tuple, list[int]] = {}
    for o in range(len(old.insts)):
        if o not in o2n:
            k = key(old, o)
            if k is not None:
                waiting.setdefault(k, []).append(o)
    for lst in waiting.values():
        lst.reverse()
    paired = 0
    for nn in range(len(new.insts)):
        if nn in n2o:
            continue
        k = key(new, nn)
        lst = waiting.get(k) if k is not None else None
        if lst:
            o = lst.pop()
            o2n[o] = nn
            n2o[nn] = o
            paired += 1
    return paired


# --------------------------------------------------------------------------- the diff

def diff_modules(old: HloModule, new: HloModule, by_source: bool = False) -> ModuleDiff:
    """Pair the instructions of two snapshots and say what was added, removed, changed.

    ``by_source``: for snapshots many passes apart (before vs after optimizations), also
    pair what is still unpaired by opcode, shape and ``op_name`` (the same source op,
    rewritten on the way). Off for consecutive steps, where it would pair an instruction
    a pass deleted with an unrelated one it created from the same op.
    """
    # The diff allocates many small containers and keeps no cycles; with several big
    # modules alive, the cyclic collector would otherwise rescan them all, many times.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _diff_modules(old, new, by_source)
    finally:
        if enabled:
            gc.enable()


def _diff_modules(old: HloModule, new: HloModule, by_source: bool) -> ModuleDiff:
    a, b = _Side(old), _Side(new)
    b.keys_shared = a.keys_shared
    o2n: dict[int, int] = {}
    n2o: dict[int, int] = {}
    by = {"name": 0, "clone": 0, "value": 0}
    dups: dict[int, int] = {}
    # 1. names
    for key, o in a.index.items():
        nn = b.index.get(key)
        if nn is not None:
            o2n[o] = nn
            n2o[nn] = o
    by["name"] = len(o2n)
    # 2. renamed clones
    for nn, key in enumerate(b.keys):
        if nn in n2o:
            continue
        base = _CLONE_SUFFIX.sub("", key)
        if base != key:
            o = a.index.get(base)
            if o is not None and o not in o2n:
                o2n[o] = nn
                n2o[nn] = o
                by["clone"] += 1
    # 3. values, strict (op_name too), then loose (without op_name) for the rest
    def open_on_both_sides() -> bool:
        return len(o2n) < len(a.insts) and len(n2o) < len(b.insts)

    if open_on_both_sides():
        by["value"] += _pair_by_value(a, b, o2n, n2o, True, dups)
    if open_on_both_sides() and not by_source:
        # a pass that rewrites op_name (call-inliner) needs this; far apart, the
        # source stage below pairs more, and a whole extra walk buys little
        by["value"] += _pair_by_value(a, b, o2n, n2o, False, dups)
    # 4. (snapshots far apart) same source op: opcode, shape and op_name
    if by_source and open_on_both_sides():
        by["source"] = _pair_by_source(a, b, o2n, n2o)

    comp_map = _pair_computations(a, b, o2n)
    comp_back = {v: k for k, v in comp_map.items()}

    added = [b.ref(nn) for nn in range(len(b.insts)) if nn not in n2o]
    removed = [a.ref(o) for o in range(len(a.insts)) if o not in o2n]

    # where each old computation's instructions stay if they do not move
    home_old = {c.name: ("f", o2n.get(a.owner[c.name], -1)) if c.name in a.owner
                else ("c", comp_map.get(c.name)) for c in old.computations}
    home_new = {c.name: ("f", b.owner[c.name]) if c.name in b.owner else ("c", c.name)
                for c in new.computations}
    ai, bi, ac, bc, ao, bo = a.insts, b.insts, a.comp, b.comp, a.ops, b.ops
    slow: list[tuple[int, int]] = []
    for o, nn in o2n.items():
        x, y = ai[o], bi[nn]
        # the common case: same name, place and text, operands paired with each other
        if x.name == y.name and x.opcode == y.opcode and x.shape.text == y.shape.text \
                and x.attributes_text == y.attributes_text and x.args_text == y.args_text \
                and home_old[ac[o].name] == home_new[bc[nn].name]:
            xo, yo = ao[o], bo[nn]
            if len(xo) == len(yo) and all(o2n.get(d) == e for d, e in zip(xo, yo)):
                continue
        slow.append((o, nn))

    # value tokens, to compare the operands of the rest (a copy computes the value of
    # what it copies; an unpaired instruction is a value of its own)
    intern: dict = {}
    fixed_old = {o: _fixed_token(o) for o in o2n}
    fixed_new = {nn: _fixed_token(o) for o, nn in o2n.items()}
    for nn, o in dups.items():
        if nn not in n2o and o in fixed_old:
            fixed_new[nn] = fixed_old[o]
    tgt_old, tgt_new = list(range(len(a.insts))), list(range(len(b.insts)))
    val_old = _identities(a, fixed_old, intern, None, 0,
                          starts=[d for o, _ in slow for d in ao[o]], targets=tgt_old)
    val_new = _identities(b, fixed_new, intern, None, 1,
                          starts=[e for _, nn in slow for e in bo[nn]], targets=tgt_new)
    same_value = _SameValue(a, b, n2o, dups, tgt_old, tgt_new)

    kinds_of: dict[int, list[str]] = {}           # new index -> kinds
    details_of: dict[int, dict[str, tuple[str, str]]] = {}
    for o, nn in slow:
        ks, det = _compare(a, b, o, nn, o2n, comp_map, val_old, val_new, same_value)
        if ks:
            kinds_of[nn] = ks
            details_of[nn] = det

    _called_changes(a, b, o2n, n2o, comp_map, kinds_of, details_of, added, removed)

    changed = []
    for nn in sorted(kinds_of):
        ks = kinds_of[nn]
        if not ks:
            continue
        order = sorted(set(ks), key=KINDS.index)
        changed.append(InstructionChange(a.ref(n2o[nn]), b.ref(nn), tuple(order),
                                         details_of.get(nn, {})))

    fusions = _fusion_changes(a, b, o2n, n2o, dups)
    layouts = [LayoutChangeEntry(b.insts[nn].name, b.comp[nn].name, *details_of[nn]["layout"],
                                 b.insts[nn].shape.byte_size)
               for nn in sorted(kinds_of) if "layout" in kinds_of[nn]]
    dup_names = {b.keys[nn] for nn in dups if nn not in n2o}
    conflicts = _layout_conflicts(b, [r for r in added if r.name not in dup_names], bool(layouts))
    cadded = [c.name for c in new.computations if c.name not in comp_back]
    cremoved = [c.name for c in old.computations if c.name not in comp_map]
    renamed = [(k, v) for k, v in comp_map.items() if k != v]
    return ModuleDiff(
        old, new, {a.keys[o]: b.keys[nn] for o, nn in o2n.items()},
        {b.keys[nn]: a.keys[o] for o, nn in o2n.items()}, added, removed, changed,
        cadded, cremoved, renamed, comp_map, fusions, layouts, conflicts, by,
        {b.keys[nn]: a.keys[o] for nn, o in sorted(dups.items()) if nn not in n2o},
        _header_changes(old, new), _reordered(a, b, o2n, comp_map))


def _header_changes(old: HloModule, new: HloModule) -> dict[str, tuple[str, str]]:
    out = {}
    for k in dict.fromkeys(list(old.attributes) + list(new.attributes)):
        u, v = old.attributes.get(k, ""), new.attributes.get(k, "")
        if u != v:
            out[k] = (u, v)
    return out


def _reordered(a: _Side, b: _Side, o2n: dict[int, int], comp_map: dict[str, str]) -> list[str]:
    """Computations whose paired instructions appear in another order (a scheduler ran)."""
    old_order: dict[str, list[int]] = {}
    for o in range(len(a.insts)):
        nn = o2n.get(o)
        if nn is not None and comp_map.get(a.comp[o].name) == b.comp[nn].name:
            old_order.setdefault(b.comp[nn].name, []).append(nn)
    out = []
    for name, seq in old_order.items():
        if any(x > y for x, y in zip(seq, seq[1:])):
            out.append(name)
    return out


def _pair_computations(a: _Side, b: _Side, o2n: dict[int, int]) -> dict[str, str]:
    """Old computation -> new: by name, by paired callers, by clone suffix, by content."""
    old_names = [c.name for c in a.module.computations]
    new_names = {c.name for c in b.module.computations}
    cmap: dict[str, str] = {n: n for n in old_names if n in new_names}
    taken = set(cmap.values())
    # callers: a paired instruction calls paired computations, position by position
    for o, nn in o2n.items():
        oc, nc = a.insts[o].called_names, b.insts[nn].called_names
        if not oc or len(oc) != len(nc):
            continue
        for x, y in zip(oc, nc):
            if x not in cmap and y not in taken and y in new_names:
                cmap[x] = y
                taken.add(y)
    # clones
    stems: dict[str, str] = {}
    for n in old_names:
        if n not in cmap:
            stems.setdefault(n, n)
    for c in b.module.computations:
        if c.name in taken:
            continue
        base = _CLONE_SUFFIX.sub("", c.name)
        if base != c.name and base in stems and base not in cmap:
            cmap[base] = c.name
            taken.add(c.name)
    # content: most of its paired instructions come from one unpaired old computation
    votes: dict[str, dict[str, int]] = {}
    for o, nn in o2n.items():
        oc, nc = a.comp[o].name, b.comp[nn].name
        if oc in cmap or nc in taken:
            continue
        votes.setdefault(nc, {}).setdefault(oc, 0)
        votes[nc][oc] += 1
    for nc, counts in votes.items():
        oc, k = max(counts.items(), key=lambda kv: kv[1])
        if oc not in cmap and nc not in taken and 2 * k > len(b.module.computation(nc)):
            cmap[oc] = nc
            taken.add(nc)
    return cmap


def _compare(a: _Side, b: _Side, o: int, nn: int, o2n: dict[int, int],
             comp_map: dict[str, str], val_old: list[int], val_new: list[int],
             same_value: "_SameValue"):
    x, y = a.insts[o], b.insts[nn]
    ks: list[str] = []
    det: dict[str, tuple[str, str]] = {}
    if x.name != y.name:
        ks.append("renamed")
        det["renamed"] = (x.name, y.name)
    xo, yo = a.owner.get(a.comp[o].name), b.owner.get(b.comp[nn].name)
    xc, yc = a.comp[o].name, b.comp[nn].name
    if xo is None and yo is not None:
        ks.append("fused")
        det["fused"] = (xc, b.insts[yo].name)
    elif xo is not None and yo is None:
        ks.append("unfused")
        det["unfused"] = (a.insts[xo].name, yc)
    elif xo is not None and yo is not None:
        if o2n.get(xo) != yo:
            ks.append("moved")
            det["moved"] = (a.insts[xo].name, b.insts[yo].name)
    elif comp_map.get(xc) != yc:
        ks.append("moved")
        det["moved"] = (xc, yc)
    if x.opcode != y.opcode:
        ks.append("opcode")
        det["opcode"] = (x.opcode, y.opcode)
    xs, ys = x.shape, y.shape
    if xs.text != ys.text:
        if xs.without_layout() != ys.without_layout():
            ks.append("shape")
            det["shape"] = (xs.text, ys.text)
        else:
            ks.append("layout")
            det["layout"] = (xs.text, ys.text)
    xv = [val_old[d] for d in a.ops[o]]
    yv = [val_new[d] for d in b.ops[nn]]
    if xv != yv and x.opcode != "parameter" and not (
            len(xv) == len(yv) and all(u == v or o2n.get(d) == e or same_value(d, e)
                                       for u, v, d, e in zip(xv, yv, a.ops[o], b.ops[nn]))):
        ks.append("operands")
        det["operands"] = (", ".join(a.insts[same_value.tgt_old[d]].name for d in a.ops[o]),
                           ", ".join(b.insts[same_value.tgt_new[d]].name for d in b.ops[nn]))
    if x.attributes_text != y.attributes_text or \
            (x.args_text != y.args_text and x.opcode in ("constant", "parameter")
             and y.opcode == x.opcode):
        keys = _attribute_changes(x, y, comp_map)
        if keys:
            ks.append("attributes")
            det["attributes"] = (", ".join(keys), "")
    return ks, det


_SIDE_EFFECTS = frozenset({
    "rng", "rng-bit-generator", "rng-get-and-update-state", "infeed", "outfeed", "send",
    "send-done", "recv", "recv-done", "custom-call", "after-all", "add-dependency",
    "parameter", "while", "conditional", "call", "async-start", "async-done"})


class _SameValue:
    """Do an old operand and a new one compute the same value? (Both sides hold copies
    of one value: layout assignment may add two equal copies, a fusion reads either.)

    ``(d, e)``: old operand d, new operand e. True when e (or what it forwards to) pairs
    with, or copies, an old instruction that is structurally equal to what d forwards to
    (same opcode, shape, attributes and, recursively, operands; instructions with side
    effects are only equal to themselves). Classes are computed lazily, once each."""

    def __init__(self, a: _Side, b: _Side, n2o: dict[int, int], dups: dict[int, int],
                 tgt_old: list[int], tgt_new: list[int]) -> None:
        self.a, self.b, self.n2o, self.dups = a, b, n2o, dups
        self.tgt_old, self.tgt_new = tgt_old, tgt_new
        self._cls: dict[int, int] = {}
        self._seen: set[int] = set()
        self._intern: dict = {}

    def __call__(self, d: int, e: int) -> bool:
        t = self.tgt_new[e]
        p = self.n2o.get(t, self.dups.get(t))
        if p is None:
            return False
        return self._class(self.tgt_old[d]) == self._class(self.tgt_old[p])

    def _class(self, start: int) -> int:
        a, cls, tgt, seen = self.a, self._cls, self.tgt_old, self._seen
        stack = [start]
        while stack:
            i = stack[-1]
            if i in cls:
                stack.pop()
                continue
            ops = [tgt[d] for d in a.ops[i]]
            if i not in seen:
                seen.add(i)
                pending = [d for d in ops if d not in cls and d not in seen]
                if pending:
                    stack.extend(pending)
                    continue
            if a.insts[i].opcode in _SIDE_EFFECTS:
                key: tuple = ("own", i)
            else:
                key = (a.identity_key(i, True), tuple(cls.get(d, -1 - d) for d in ops))
            cls[i] = self._intern.setdefault(key, len(self._intern))
            stack.pop()
        return cls[start]


def _attribute_changes(x: HloInstruction, y: HloInstruction, comp_map: dict[str, str]) -> list[str]:
    try:
        xa, ya = x.attributes, y.attributes
    except HloParseError:
        return ["(unreadable attributes)"]
    out = []
    for k in dict.fromkeys(list(xa) + list(ya)):
        u, v = xa.get(k), ya.get(k)
        if u == v:
            continue
        if k in COMPUTATION_ATTRIBUTES and u is not None and v is not None:
            if [comp_map.get(n, n) for n in _names(u)] == _names(v):
                continue
        out.append(k)
    if x.opcode == y.opcode == "constant" and x.args_text != y.args_text:
        out.append("literal")
    if x.opcode == y.opcode == "parameter" and x.args_text.strip() != y.args_text.strip():
        out.append("parameter_number")
    return out


def _names(raw: str) -> list[str]:
    return [t.strip().lstrip("%") for t in raw.strip("{} ").split(",") if t.strip()]


def _called_changes(a, b, o2n, n2o, comp_map, kinds_of, details_of, added, removed):
    """Mark fusions (and callers) whose called computations changed, bottom-up."""
    stats: dict[str, list[int]] = {}     # new computation -> [added, removed, changed]

    def bump(comp: str, slot: int) -> None:
        stats.setdefault(comp, [0, 0, 0])[slot] += 1

    for r in added:
        bump(r.computation, 0)
    for r in removed:
        target = comp_map.get(r.computation)
        if target is not None:
            bump(target, 1)
    for nn, ks in list(kinds_of.items()):
        bump(b.comp[nn].name, 2)
        if any(k in ks for k in ("fused", "moved", "unfused")):
            target = comp_map.get(a.comp[n2o[nn]].name)
            if target is not None and target != b.comp[nn].name:
                bump(target, 1)
    queue = list(stats)
    seen = set()
    marked: dict[tuple[int, str], list[str]] = {}   # (caller, kind) -> its changed callees
    while queue:
        comp = queue.pop()
        if comp in seen:
            continue
        seen.add(comp)
        for caller in b.callers.get(comp, ()):
            if caller not in n2o:
                continue
            inst = b.insts[caller]
            kind = "fused_computation" if inst.opcode == "fusion" else "called_computation"
            marked.setdefault((caller, kind), []).append(comp)
            ks = kinds_of.setdefault(caller, [])
            was_changed = bool(ks)
            if kind not in ks:
                ks.append(kind)
            if not was_changed:
                parent = b.comp[caller].name
                bump(parent, 2)
                if parent not in seen:
                    queue.append(parent)
    for (caller, kind), comps in marked.items():     # counts are final now
        text = "; ".join(f"{c}: +{stats[c][0]} -{stats[c][1]} ~{stats[c][2]}"
                         for c in comps if c in stats)
        details_of.setdefault(caller, {})[kind] = ("", text)


def _fusion_changes(a: _Side, b: _Side, o2n: dict[int, int], n2o: dict[int, int],
                    dups: dict[int, int]) -> list[FusionChange]:
    absorbed: dict[int, list[Move]] = {}
    released: dict[int, list[Move]] = {}
    from_fusion: set[int] = set()      # new fusions that took instructions from other fusions
    to_fusion: set[int] = set()        # old fusions that gave instructions to other fusions
    inner_added: dict[int, list[str]] = {}
    inner_removed: dict[int, list[str]] = {}
    for o, nn in o2n.items():
        xo, yo = a.owner.get(a.comp[o].name), b.owner.get(b.comp[nn].name)
        if xo is not None and yo is not None and o2n.get(xo) == yo:
            continue
        if xo is None and yo is None:
            continue
        src = a.insts[xo].name if xo is not None else a.comp[o].name
        dst = b.insts[yo].name if yo is not None else b.comp[nn].name
        if yo is not None:
            absorbed.setdefault(yo, []).append(Move(a.insts[o].name, b.insts[nn].name, src))
            if xo is not None:
                from_fusion.add(yo)
        if xo is not None:
            released.setdefault(xo, []).append(Move(a.insts[o].name, b.insts[nn].name, dst))
            if yo is not None:
                to_fusion.add(xo)
    copied: dict[int, list[Move]] = {}
    for nn in range(len(b.insts)):
        if nn not in n2o:
            yo = b.owner.get(b.comp[nn].name)
            if yo is not None and b.insts[nn].opcode != "parameter":
                o = dups.get(nn)
                if o is not None:
                    xo = a.owner.get(a.comp[o].name)
                    src = a.insts[xo].name if xo is not None else a.comp[o].name
                    copied.setdefault(yo, []).append(Move(a.insts[o].name, b.insts[nn].name, src))
                else:
                    inner_added.setdefault(yo, []).append(b.insts[nn].name)
    for o in range(len(a.insts)):
        if o not in o2n:
            xo = a.owner.get(a.comp[o].name)
            if xo is not None and a.insts[o].opcode != "parameter":
                inner_removed.setdefault(xo, []).append(a.insts[o].name)
    out: list[FusionChange] = []
    done_old: set[int] = set()
    for yo in sorted(set(absorbed) | set(inner_added) | set(copied)
                     | {n for o, n in o2n.items() if o in released or o in inner_removed}):
        if b.insts[yo].opcode != "fusion":
            continue
        xo = n2o.get(yo)
        ins = tuple(absorbed.get(yo, ()))
        outs = tuple(released.get(xo, ())) if xo is not None else ()
        if xo is not None:
            done_old.add(xo)
        if xo is None:
            status = "created"
        elif yo in from_fusion:
            status = "merged"
        elif ins and not outs:
            status = "grew"
        elif outs and len({m.other for m in outs}) > 1:
            status = "split"
        elif outs and not ins:
            status = "shrank"
        else:
            status = "changed"
        out.append(FusionChange(a.insts[xo].name if xo is not None else "", b.insts[yo].name,
                                status, ins, outs, tuple(inner_added.get(yo, ())),
                                tuple(inner_removed.get(xo, ())) if xo is not None else (),
                                tuple(copied.get(yo, ()))))
    for xo in sorted(set(released) | set(inner_removed)):
        if xo in done_old or a.insts[xo].opcode != "fusion" or xo in o2n:
            continue
        outs = tuple(released.get(xo, ()))
        dsts = {m.other for m in outs}
        status = "split" if len(dsts) > 1 else "merged" if dsts else "dissolved"
        if xo not in to_fusion:
            status = "dissolved"
        out.append(FusionChange(a.insts[xo].name, "", status, (), outs, (),
                                tuple(inner_removed.get(xo, ()))))
    return out


def _layout_conflicts(b: _Side, added: list[InstructionRef],
                      relayout: bool) -> list[LayoutConflict]:
    """Added copies that change layout; added transposes too in a step that changed
    layouts (elsewhere, e.g. dot_decomposer, a new transpose is logical, not a conflict)."""
    out = []
    for r in added:
        if r.opcode != "copy" and not (relayout and r.opcode == "transpose"):
            continue
        i = b.index.get(r.name)
        if i is None or b.comp[i].name != r.computation:
            i = b.index.get(f"{r.name}@{r.computation}")
        if i is None:
            continue
        inst = b.insts[i]
        ch = layout_change(inst)
        if ch is None:
            continue
        users = tuple(u.name for u in inst.users)
        out.append(LayoutConflict(inst.name, r.computation, inst.opcode,
                                  inst.operand_names[0] if inst.operand_names else "",
                                  ch.operand_shape, ch.shape, ch.bytes, users, ch.reason))
    return out


# --------------------------------------------------------------------------- text diff

@dataclass(frozen=True, slots=True)
class TextRow:
    """One row of a side-by-side diff. ``kind``: 'same' | 'changed' | 'removed' | 'added'
    | 'replace' (a removed line beside an added one) | 'fold' (``folded`` same rows)."""

    kind: str
    old_line: int = 0          # 1-based line in the older file (0: none)
    old_text: str = ""
    new_line: int = 0
    new_text: str = ""
    note: str = ""             # 'fused into fusion.3 as sub.16', 'from main.17 (sub.2)'...
    folded: int = 0


@dataclass(frozen=True, slots=True)
class ComputationTextDiff:
    old: str                   # computation name in the older snapshot ('' if added)
    new: str                   # ... in the newer one ('' if removed)
    status: str                # 'same' | 'changed' | 'added' | 'removed'
    rows: tuple[TextRow, ...]  # empty for 'same' (folded)
    old_count: int
    new_count: int
    added: int = 0
    removed: int = 0
    changed: int = 0

    @property
    def title(self) -> str:
        if self.old and self.new and self.old != self.new:
            return f"{self.old} → {self.new}"
        return self.new or self.old


def text_diff(diff: ModuleDiff, context: int = 3, computations: set[str] | None = None
              ) -> list[ComputationTextDiff]:
    """Per computation, the two snapshots' instruction lines side by side.

    Lines are aligned by the pairing (so a renamed instruction sits beside its old self),
    runs of more than ``2 * context + 1`` unchanged lines fold into one 'fold' row, and
    unchanged computations come back with ``status='same'`` and no rows. ``computations``
    limits the work to these names (either snapshot's), e.g. the one on screen.
    """
    old, new = diff.old, diff.new
    back = {v: k for k, v in diff.computation_map.items()}
    out: list[ComputationTextDiff] = []
    emitted_new: set[str] = set()
    where_new: dict[str, str] = {}
    where_old: dict[str, str] = {}
    for c in diff.changed:
        if any(k in c.kinds for k in ("fused", "moved", "unfused")):
            where_old[c.old.name] = f"→ {c.new.where} as {c.new.name}" \
                if c.old.name != c.new.name else f"→ {c.new.where}"
            where_new[c.new.name] = f"← {c.old.name} from {c.old.where}"

    def wanted(*names: str) -> bool:
        return computations is None or any(n in computations for n in names if n)

    for oc in old.computations:
        nc_name = diff.computation_map.get(oc.name)
        if nc_name is None:
            if wanted(oc.name):
                rows = tuple(TextRow("removed", i.line, i.text, note=where_old.get(i.name, ""))
                             for i in oc.instructions)
                out.append(ComputationTextDiff(oc.name, "", "removed", rows, len(oc), 0,
                                               removed=len(oc)))
            continue
        nc = new.computation(nc_name)
        emitted_new.add(nc.name)
        if wanted(oc.name, nc.name):
            out.append(_computation_rows(diff, oc, nc, context, where_old, where_new))
    for nc in new.computations:
        if nc.name in emitted_new or nc.name in back:
            continue
        if wanted(nc.name):
            rows = tuple(TextRow("added", new_line=i.line, new_text=i.text,
                                 note=where_new.get(i.name, "")) for i in nc.instructions)
            out.append(ComputationTextDiff("", nc.name, "added", rows, 0, len(nc), added=len(nc)))
    return out


def _computation_rows(diff: ModuleDiff, oc: HloComputation, nc: HloComputation, context: int,
                      where_old: dict[str, str], where_new: dict[str, str]) -> ComputationTextDiff:
    o2n = diff.old_to_new
    n2o = diff.new_to_old
    a = [i.name for i in oc.instructions]
    b = [n2o.get(i.name, "\0" + i.name) for i in nc.instructions]
    if a == b and all(x.text == y.text for x, y in zip(oc.instructions, nc.instructions)):
        return ComputationTextDiff(oc.name, nc.name, "same", (), len(a), len(b))
    rows: list[TextRow] = []
    n_add = n_rem = n_chg = 0
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for x, y in zip(oc.instructions[i1:i2], nc.instructions[j1:j2]):
                if x.text == y.text:
                    rows.append(TextRow("same", x.line, x.text, y.line, y.text))
                else:
                    n_chg += 1
                    ch = diff.change_of_new(y.name)
                    rows.append(TextRow("changed", x.line, x.text, y.line, y.text,
                                        ch.describe() if ch else ""))
            continue
        olds = oc.instructions[i1:i2]
        news = nc.instructions[j1:j2]
        n_rem += sum(1 for x in olds if x.name not in o2n)
        n_add += sum(1 for y in news if y.name not in n2o)
        for k in range(max(len(olds), len(news))):
            x = olds[k] if k < len(olds) else None
            y = news[k] if k < len(news) else None
            notes = []
            if x is not None:
                if x.name in where_old:
                    notes.append(where_old[x.name])
                elif x.name in o2n:           # stays in this computation, elsewhere
                    partner = nc.get(o2n[x.name])
                    notes.append(f"↕ now at line {partner.line}" if partner is not None
                                 else f"→ {o2n[x.name]}")
            if y is not None:
                if y.name in where_new:
                    notes.append(where_new[y.name])
                elif y.name in n2o and x is None:
                    partner = oc.get(n2o[y.name])
                    notes.append(f"↕ was at line {partner.line}" if partner is not None
                                 else f"← {n2o[y.name]}")
            note = " · ".join(notes)
            if x is not None and y is not None:
                rows.append(TextRow("replace", x.line, x.text, y.line, y.text, note))
            elif x is not None:
                rows.append(TextRow("removed", x.line, x.text, note=note))
            else:
                rows.append(TextRow("added", new_line=y.line, new_text=y.text, note=note))
    return ComputationTextDiff(oc.name, nc.name, "changed", tuple(_fold(rows, context)),
                               len(a), len(b), n_add, n_rem, n_chg)


def _fold(rows: list[TextRow], context: int) -> list[TextRow]:
    out: list[TextRow] = []
    k = 0
    n = len(rows)
    while k < n:
        if rows[k].kind != "same":
            out.append(rows[k])
            k += 1
            continue
        j = k
        while j < n and rows[j].kind == "same":
            j += 1
        run = rows[k:j]
        head = context if k > 0 else 0
        tail = context if j < n else 0
        if len(run) > head + tail + 1:
            out.extend(run[:head])
            out.append(TextRow("fold", folded=len(run) - head - tail))
            out.extend(run[len(run) - tail:])
        else:
            out.extend(run)
        k = j
    return out
