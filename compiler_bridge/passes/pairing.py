"""How ``diff_modules`` pairs the instructions of two snapshots of one HLO module.

Every instruction of ``old`` pairs with at most one of ``new`` (1:1). The stages, in
order (each only sees what is still unpaired):

1. by name, with the same opcode: XLA's names are unique in a module and survive passes
   that keep the instruction, wherever it moves (``reduce_sum.6`` fused keeps its name);
   between two compiles (``verify_names``) only where both compute the same kind of value;
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
   identity, then (for neighbouring steps) without, then with an unpaired old copy of a
   paired value taking its identity (a pass merged duplicates: CSE, Shardy's export).
   An unpaired copy or sharding annotation is its operand; ``sharding`` is no part of
   the identity, and a reducer (``to_apply``) is its body. Equal identities pair in file order;
4. only with ``by_source=True`` (snapshots many passes apart): what is left pairs by
   opcode, shape and ``op_name``;
5. two compiles (``verify_names`` with ``by_source``): what is still left pairs by
   opcode and ``op_name`` alone (a recompilation for other shapes);
6. two compiles: what is still left (no ``op_name``: a fused computation's parameters,
   a broadcast constant, a ROOT tuple) pairs by place around the pairs, with the same
   opcode: a pair's operands position by position, the parameters by number and the
   roots of the computations a pair calls (and of ENTRY).

Computations pair by name, by paired callers, by clone suffix, then by content
(:func:`pair_computations`).

Everything is dictionaries and walks over each module, no pairwise comparisons: linear
in module size (see ``bench/speed/pass_bench.py``). A snapshot is flattened once into a
:class:`Side` (instructions by index, operands, callers, fusion owners).
"""

from __future__ import annotations

import re
from typing import cast

from .changes import InstructionRef
from ..hlo import COMPUTATION_ATTRIBUTES, HloComputation, HloInstruction, HloModule, HloParseError

# Attributes that do not change what an instruction computes (left out of its identity).
# ``sharding`` says how the value is laid over devices, not what it is (Shardy's export
# adds one to every instruction).
_NOT_IDENTITY = frozenset({"metadata", "backend_config", "frontend_attributes", "statistics",
                           "control-predecessors", "origin", "schedule_name", "sharding"})
_TRANSPARENT_OPCODES = frozenset({"fusion", "call"})
# custom calls whose value is their operand's (sharding annotations of GSPMD and Shardy)
_ANNOTATIONS = frozenset({"Sharding", "xla.sdy.FuncResultSharding", "xla.sdy.Sharding"})
_CLONE_SUFFIX = re.compile(r"(?:\.(?:clone|remat\d*|cloned)(?:\.\d+)?)+$")
_STEM = re.compile(r"(?:\.(?:clone|remat\d*|cloned|\d+))+$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')


def source_op(op_name: str) -> str:
    """The source op of an ``op_name`` as two JAX versions both say it: its last part
    without parameters or transformation scopes — JAX 0.4.30's
    ``jit(f)/jit(main)/jvp(jit(relu))/max`` and 0.10's ``jit(f)/jvp()/jit(relu)/max`` are
    both ``max``, ``reduce_sum[axes=(0,)]`` is ``reduce_sum``."""
    first = op_name.split(";", 1)[0]
    last = _BRACKETS.sub("", first).rstrip("/").rsplit("/", 1)[-1]
    return last


_BRACKETS = re.compile(r"\[[^\]]*\]")


class Side:
    """One snapshot, flattened: instruction i, its operands, callers, fusion owners.

    ``across``: a snapshot of one of two compiles (other JAX versions, flags, shapes):
    an instruction's source is its source op and line (:func:`source_op`, ``file:line``),
    which two JAX versions write alike, not the ``op_name`` path, which they do not."""

    def __init__(self, module: HloModule, across: bool = False) -> None:
        self.module = module
        self.across = across
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
        # (a list without None is shared, not copied: it is already a list[int])
        self.ops: list[list[int]] = [[d for d in every if d is not None] if None in every
                                     else cast("list[int]", every) for every in self.ops_all]
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
        # an unpaired copy, or sharding annotation (a custom call that only says how its
        # operand is laid over devices), is its operand, as an unpaired fusion is its root:
        # Shardy's export turns annotations into copies, and what read one reads the other
        for i, inst in enumerate(insts):
            if len(self.ops[i]) == 1 and (inst.opcode == "copy" or (
                    inst.opcode == "custom-call"
                    and (inst.custom_call_target or "") in _ANNOTATIONS)):
                self.froot[i] = self.ops[i][0]
        self.keys_shared: dict = {}       # set to one dict for both snapshots of a diff
        self._bases: dict[int, tuple] = {}
        self._skeys: dict[int, str] = {}
        self._strict_ids: dict[int, int] = {}
        self._loose_ids: dict[int, int] = {}
        self._bodies: dict[str, str] = {}

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

    def _body(self, name: str) -> str:
        """A small computation (a reduction's ``to_apply``) as what it computes, not its
        name: a pass that merges identical reducers (Shardy's export) keeps the reduce."""
        body = self._bodies.get(name)
        if body is None:
            try:
                c = self.module.computation(name)
            except KeyError:
                body = _STEM.sub("", name)
            else:
                at = {x.name: k for k, x in enumerate(c.instructions)}
                body = ";".join(
                    f"{x.opcode}:{_shape_key(x.shape)}:"
                    + (x.args_text.strip() if x.opcode in ("parameter", "constant") else
                       ",".join(str(at.get(o, o)) for o in x.operand_names))
                    + ("!" if x is c.root else "") for x in c.instructions)
            self._bodies[name] = body
        return body

    def identity_key(self, i: int, strict: bool) -> int:
        """What instruction i computes, short of its operands, as a small int shared by
        both snapshots (``self.keys_shared``): opcode, shape without layout, attributes
        that matter (called computations by name stem, a reducer by its body), the
        literal of a constant, and
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
                        if self.across and op_name:
                            loc = self.module.source_location(inst)
                            line = f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" if loc else ""
                            op_name = f"{source_op(op_name)}@{line}"
                    continue
                if k == "to_apply":     # a reducer or comparator: what it computes
                    v = ",".join(self._body(n) for n in inst.called_names)
                elif k in COMPUTATION_ATTRIBUTES:
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


def fixed_token(o: int) -> int:
    """The token of a pair, from its older instruction: negative, so ``-t - 2`` gives it
    back; hashed tokens are >= 0 and -1 means 'not computed'."""
    return -o - 2


def identities(side: Side, fixed: dict[int, int], intern: dict, strict: bool | None,
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


def _pair_by_value(old: Side, new: Side, o2n: dict[int, int], n2o: dict[int, int],
                   strict: bool, duplicates: dict[int, int], merged: bool = False) -> int:
    """Pair unpaired instructions that compute the same value; returns how many.

    Unpaired copies of a paired value stay unpaired (added) and are noted in
    ``duplicates`` (new index -> old index).
    """
    intern: dict = {}
    fixed_old = {o: fixed_token(o) for o in o2n}
    fixed_new = {nn: fixed_token(o) for o, nn in o2n.items()}
    un_old = [o for o in range(len(old.insts)) if o not in o2n]
    un_new = [nn for nn in range(len(new.insts)) if nn not in n2o]
    # a paired value can only have an unpaired copy on the other side if that side has
    # an unpaired instruction of its kind (opcode, shape): only those lend their identity
    kinds_old = {(old.insts[o].opcode, old.shape_key(o)) for o in un_old}
    kinds_new = {(new.insts[nn].opcode, new.shape_key(nn)) for nn in un_new}
    ops_old, ops_new = {k[0] for k in kinds_old}, {k[0] for k in kinds_new}
    # ``merged``: on its own side too, once the rest is paired: a pass that merges
    # duplicates (CSE, Shardy's export) leaves an unpaired old copy whose users now read
    # the kept one; the copy takes the kept one's identity, so they still pair (the
    # paired ones are walked first)
    if merged:
        ops_new, kinds_new = ops_new | ops_old, kinds_new | kinds_old
    lend_old = {o for o in fixed_old if old.insts[o].opcode in ops_new
                and (old.insts[o].opcode, old.shape_key(o)) in kinds_new}
    lend_new = {nn for nn in fixed_new if new.insts[nn].opcode in ops_old
                and (new.insts[nn].opcode, new.shape_key(nn)) in kinds_old}
    tok_old = identities(old, fixed_old, intern, strict, 0, lend_old,
                         sorted(lend_old) + un_old if merged else un_old + sorted(lend_old))
    tok_new = identities(new, fixed_new, intern, strict, 1, lend_new, un_new + sorted(lend_new))
    # a fused computation's parameter has the value of the operand it reads, but it pairs
    # only with such a parameter: an argument (ENTRY's parameter) pairs with an argument,
    # not with the first fused parameter that reads it (fused computations come first)
    def kind(side: Side, i: int) -> tuple[str, bool]:
        return side.insts[i].opcode, side.psrc[i] is not None

    waiting: dict[tuple[int, tuple[str, bool]], list[int]] = {}
    for o in un_old:
        waiting.setdefault((tok_old[o], kind(old, o)), []).append(o)
    for lst in waiting.values():
        lst.reverse()      # pop() from the end = file order
    paired: dict[int, int] = {}        # token -> old index, for the pairs made here
    count = 0
    for nn in un_new:
        queue = waiting.get((tok_new[nn], kind(new, nn)))
        if queue:
            o = queue.pop()
            o2n[o] = nn
            n2o[nn] = o
            paired.setdefault(tok_old[o], o)
            count += 1
    # unpaired copies of a paired value
    for nn in un_new:
        if nn in n2o or nn in duplicates:
            continue
        t = tok_new[nn]
        copied = -t - 2 if t < -1 else paired.get(t)
        if copied is not None and old.insts[copied].opcode == new.insts[nn].opcode != "parameter":
            duplicates[nn] = copied
    return count


def _pair_by_source(old: Side, new: Side, o2n: dict[int, int], n2o: dict[int, int],
                    with_shape: bool = True) -> int:
    def key(side: Side, i: int):
        if side.insts[i].opcode == "parameter":
            # (other shapes) an ENTRY parameter is the function's argument by position
            if with_shape or side.comp[i] is not side.module.entry:
                return None
            return ("parameter", side.insts[i].args_text.strip())
        base = side._bases.get(i)
        if base is None:
            side.identity_key(i, True)
            base = side._bases[i]
        (opcode, shape, _, _), op_name = base
        if not op_name:
            return None
        return (opcode, shape, op_name) if with_shape else (opcode, op_name)

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
        queue = waiting.get(k) if k is not None else None
        if queue:
            o = queue.pop()
            o2n[o] = nn
            n2o[nn] = o
            paired += 1
    return paired


def pair(a: Side, b: Side, by_source: bool, verify_names: bool = False
         ) -> tuple[dict[int, int], dict[int, int], dict[str, int], dict[int, int]]:
    """Pair the instructions of two snapshots, stage by stage (see the module docstring).

    ``verify_names`` (two compiles, not two steps of one): a name pairs only when both
    instructions have the same strict identity short of their operands (opcode, shape,
    attributes, ``op_name``); XLA's name counters drift between compiles, and
    ``bitcast.339`` of one may be another value than ``bitcast.339`` of the other.

    Returns (old index -> new index, new -> old, pairs made by each stage: 'name',
    'clone', 'value' and with ``by_source`` 'source', unpaired new copies of a paired
    value: new index -> old index)."""
    b.keys_shared = a.keys_shared
    o2n: dict[int, int] = {}
    n2o: dict[int, int] = {}
    by = {"name": 0, "clone": 0, "value": 0}
    dups: dict[int, int] = {}
    # 1. names
    for key, o in a.index.items():
        nn = b.index.get(key)
        if nn is not None:
            # a name given to another opcode is another instruction (two converters of
            # one StableHLO number nested loops' instructions apart)
            if a.insts[o].opcode != b.insts[nn].opcode:
                continue
            if verify_names:
                x, y = a.insts[o], b.insts[nn]
                # the same text short of the operands (which _drop_inconsistent checks)
                # is the same identity; a constant's literal and a parameter's number
                # are in its arguments
                same_text = x.opcode == y.opcode != "parameter" \
                    and x.shape.text == y.shape.text \
                    and x.attributes_text == y.attributes_text \
                    and (x.opcode != "constant" or x.args_text == y.args_text)
                if not same_text and a.identity_key(o, True) != b.identity_key(nn, True):
                    continue
            o2n[o] = nn
            n2o[nn] = o
    if verify_names:
        _drop_inconsistent(a, b, o2n, n2o)
    by["name"] = len(o2n)
    # 2. renamed clones
    for nn, key in enumerate(b.keys):
        if nn in n2o:
            continue
        base = _CLONE_SUFFIX.sub("", key)
        if base != key:
            original = a.index.get(base)
            if original is not None and original not in o2n:
                o2n[original] = nn
                n2o[nn] = original
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
    if open_on_both_sides() and not by_source:
        by["value"] += _pair_by_value(a, b, o2n, n2o, False, dups, merged=True)
    # 4. (snapshots far apart) same source op: opcode, shape and op_name
    if by_source and open_on_both_sides():
        by["source"] = _pair_by_source(a, b, o2n, n2o)
    # 5. (two compiles) the same source op in other shapes: a recompilation for another
    # batch size changes the shape of everything downstream of the input
    if by_source and verify_names and open_on_both_sides():
        by["source, other shape"] = _pair_by_source(a, b, o2n, n2o, with_shape=False)
    # 6. (two compiles) what has no op_name (a fused computation's parameters, a broadcast
    # constant, a ROOT tuple) and no value in common (other shapes) pairs by its place
    if by_source and verify_names and open_on_both_sides():
        by["place"] = _pair_by_place(a, b, o2n, n2o)
    return o2n, n2o, by, dups


def _pair_by_place(old: Side, new: Side, o2n: dict[int, int], n2o: dict[int, int]) -> int:
    """Pair unpaired instructions of one opcode at the same place around what is paired:
    the operands of a pair, position by position; the parameters (by number) and roots
    of the computations a pair calls, and of ENTRY. Each new pair extends the search."""
    def places(side: Side) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
        params: dict[str, dict[str, int]] = {}
        roots: dict[str, int] = {}
        for i, (inst, c) in enumerate(zip(side.insts, side.comp)):
            if inst.opcode == "parameter":
                params.setdefault(c.name, {})[inst.args_text.strip()] = i
            if inst is c.root:
                roots[c.name] = i
        return params, roots

    (params_old, roots_old), (params_new, roots_new) = places(old), places(new)
    queue = list(o2n.items())
    count = 0

    def link(o: int | None, nn: int | None) -> None:
        nonlocal count
        if o is None or nn is None or o in o2n or nn in n2o \
                or old.insts[o].opcode != new.insts[nn].opcode:
            return
        o2n[o] = nn
        n2o[nn] = o
        queue.append((o, nn))
        count += 1

    def link_computations(x: str, y: str) -> None:
        px, py = params_old.get(x, {}), params_new.get(y, {})
        for number, o in px.items():
            link(o, py.get(number))
        link(roots_old.get(x), roots_new.get(y))

    if old.module.entry is not None and new.module.entry is not None:
        link_computations(old.module.entry.name, new.module.entry.name)
    while queue:
        o, nn = queue.pop()
        xo, yo = old.ops_all[o], new.ops_all[nn]
        if len(xo) == len(yo):
            for d, e in zip(xo, yo):
                link(d, e)
        xc, yc = old.insts[o].called_names, new.insts[nn].called_names
        if len(xc) == len(yc):
            for x, y in zip(xc, yc):
                link_computations(x, y)
    return count


def _drop_inconsistent(a: Side, b: Side, o2n: dict[int, int], n2o: dict[int, int]) -> None:
    """Unpair name pairs whose operands do not pair with each other, until none is left
    (two compiles of an unrolled loop name one layer's op as another layer's: same kind,
    other operands). A fused computation's parameter reads its caller's operand: that is
    its operand here (``parameter(0)`` of one fusion is not ``parameter(0)`` of another
    because a counter gave both one name). What is dropped pairs again by value."""
    def operands(side: Side, i: int) -> list[int]:
        src = side.psrc[i]
        return side.ops[i] if src is None else [src]

    users: dict[int, list[int]] = {}
    for o in o2n:
        for d in operands(a, o):
            users.setdefault(d, []).append(o)
    queue = list(o2n)
    while queue:
        o = queue.pop()
        nn = o2n.get(o)
        if nn is None:
            continue
        xo, yo = operands(a, o), operands(b, nn)
        if len(xo) == len(yo) and all(o2n.get(d) == e for d, e in zip(xo, yo)):
            continue
        del o2n[o]
        del n2o[nn]
        queue.extend(u for u in users.get(o, ()) if u in o2n)


def pair_computations(a: Side, b: Side, o2n: dict[int, int]) -> dict[str, str]:
    """Old computation -> new: the ENTRY with the ENTRY, then by name, by paired callers,
    by clone suffix, by content."""
    old_names = [c.name for c in a.module.computations]
    new_names = {c.name for c in b.module.computations}
    # one module's ENTRY stays its ENTRY, renamed or not (Shardy's export: main.8 -> main.6)
    ea, eb = a.module.entry, b.module.entry
    cmap: dict[str, str] = {ea.name: eb.name} if ea is not None and eb is not None else {}
    taken = set(cmap.values())
    for n in old_names:
        if n in new_names and n not in cmap and n not in taken:
            cmap[n] = n
            taken.add(n)
    # callers: a paired instruction calls paired computations, position by position
    for o, nn in o2n.items():
        old_calls, new_calls = a.insts[o].called_names, b.insts[nn].called_names
        if not old_calls or len(old_calls) != len(new_calls):
            continue
        for x, y in zip(old_calls, new_calls):
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


