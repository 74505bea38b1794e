"""Why a collective is there: the instruction of the user's program that needed it and the
two shardings that disagreed, the producer's (an operand's) against the consumer's (the
instruction's own).

The SPMD partitioner inserts a collective where an instruction's operand arrives sharded
other than the instruction needs it, and the collective keeps the ``op_name`` (and source
line) of that instruction. So the partitioner's input — the per-pass step just before
``spmd-partitioning``, where sharding propagation has given every instruction a sharding —
names, for each collective, the instruction with the same ``op_name`` and source line, and
the shardings there. Without a per-pass dump the before-optimizations stage stands in (only
the annotated instructions carry shardings there: the nearest annotated producer and consumer
are taken). A collective whose instruction was a collective already is the user's own
(``psum`` in ``shard_map``): the partitioner inserted nothing, and it has no cause.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, replace

from ..dumps import Dump, DumpModule
from ..hlo import HloInstruction, HloModule
from .collectives import Collective, collective_of

PARTITIONER = "spmd-partitioning"


@dataclass(frozen=True, slots=True)
class Cause:
    """The instruction a collective serves, and what disagreed there."""

    instruction: str           # the instruction in the partitioner's input
    opcode: str
    operand: str               # the producer whose sharding disagreed ('' when none did)
    producer_sharding: str
    consumer_sharding: str
    source: str = ""           # the user's source line of the instruction

    def to_json(self) -> dict:
        return {"instruction": self.instruction, "opcode": self.opcode,
                "operand": self.operand, "producer_sharding": self.producer_sharding,
                "consumer_sharding": self.consumer_sharding, "source": self.source}


def partitioner_input(dump: Dump, module: DumpModule) -> tuple[HloModule, str] | None:
    """The module as the SPMD partitioner received it and where it was read: the per-pass
    step just before ``spmd-partitioning``, else the before-optimizations stage."""
    steps = module.passes
    for i, f in enumerate(steps):
        info = f.pass_info
        if info is None:
            continue
        if info.before == PARTITIONER:
            return dump.parse(f.path), f.name
        if info.after == PARTITIONER and i > 0:
            return dump.parse(steps[i - 1].path), steps[i - 1].name
    if module.before_optimizations is not None:
        f = module.before_optimizations
        return dump.parse(f.path), f.name
    return None


def partitioner_output(dump: Dump, module: DumpModule) -> HloModule | None:
    """The module as the SPMD partitioner left it: the per-pass step after
    ``spmd-partitioning``, else XLA:GPU's ``after_spmd_partitioner.txt``; None without
    either."""
    for f in module.passes:
        if f.pass_info is not None and f.pass_info.after == PARTITIONER:
            return dump.parse(f.path)
    for f in module.files:
        if f.name.endswith(".after_spmd_partitioner.txt"):
            return dump.parse(f.path)
    return None


def op_names(op_name: str) -> list[str]:
    """The ops an ``op_name`` names: XLA's combiners write the merged collective's as
    ``jit(f)/(a/x:b/y)``, which names ``jit(f)/a/x`` and ``jit(f)/b/y``."""
    m = re.fullmatch(r"(.*/)?\((.*)\)", op_name)
    if not m:
        return [op_name]
    return [(m.group(1) or "") + part for part in m.group(2).split(":")]


def _key(module: HloModule, inst: HloInstruction) -> tuple[str, str]:
    loc = module.source_location(inst)
    return inst.op_name, f"{loc.file}:{loc.line}" if loc is not None else ""


def _sharding_text(inst: HloInstruction) -> str:
    return (inst.attributes.get("sharding") or "").replace(" ", "")


def _callers(module: HloModule) -> dict[str, list[HloInstruction]]:
    """Computation name -> the ``call`` instructions calling it (JAX's nested jits before
    optimizations: ``jvp(jit(_roll_static))``) and the ``while`` whose body it is."""
    out: dict[str, list[HloInstruction]] = {}
    for inst in module.instructions():
        if inst.opcode == "call":
            for comp in inst.calls or inst.called_computations:
                out.setdefault(comp, []).append(inst)
        elif inst.opcode == "while" and inst.body:     # the body's parameter: the loop's
            out.setdefault(inst.body, []).append(inst)  # operand (and its last value)
    return out


def _next(at: HloInstruction, up: bool, callers: dict[str, list[HloInstruction]]
          ) -> list[HloInstruction]:
    """The producers (``up``) or consumers of ``at``, through the boundaries of a called
    computation: a parameter's producer is the caller's operand, a root's consumers the
    caller's users."""
    comp = at.computation
    around = callers.get(comp.name, []) if comp is not None else []
    if up:
        if at.opcode == "parameter" and at.parameter_number is not None:
            n = at.parameter_number
            return [c.operands[n] for c in around if n < len(c.operands)]
        return at.operands
    if comp is not None and comp.root is at:
        return at.users + [u for c in around for u in c.users]
    return at.users


def _nearest(inst: HloInstruction, up: bool, callers: dict[str, list[HloInstruction]],
             limit: int = 64) -> HloInstruction | None:
    """``inst`` if it carries a sharding, else the nearest producer (``up``) or consumer
    that does, breadth first."""
    seen = {id(inst)}
    todo = deque([inst])
    while todo and limit:
        at = todo.popleft()
        limit -= 1
        if _sharding_text(at):
            return at
        for nxt in _next(at, up, callers):
            if id(nxt) not in seen:
                seen.add(id(nxt))
                todo.append(nxt)
    return None


def _cause_at(inst: HloInstruction, callers: dict[str, list[HloInstruction]]
              ) -> Cause | None:
    consumer = _nearest(inst, False, callers)
    theirs = _sharding_text(consumer) if consumer is not None else ""
    first = None
    for op in _next(inst, True, callers):
        producer = _nearest(op, True, callers)
        if producer is None:
            continue
        mine = _sharding_text(producer)
        cause = Cause(inst.name, inst.opcode, op.name, mine, theirs)
        if mine != theirs:
            return cause
        first = first or cause
    return first


def causes(collectives: list[Collective], module: HloModule, before: HloModule,
           partitioned: HloModule | None = None) -> dict[str, Cause | None]:
    """For each collective of ``module`` (by its instruction's name), the instruction of
    ``before`` (the partitioner's input) it serves and the two shardings that disagreed
    there; None for a collective the user wrote or one no instruction explains. A collective
    whose metadata a later pass dropped (XLA:GPU's combiner) is known by its ``channel_id``
    in ``partitioned``, the partitioner's output."""
    by_channel: dict[str, HloInstruction] = {}
    # a combined collective takes a new channel: the partitioner's first of its kind and
    # result shape stands for it (XLA:GPU merges a gradient's all-reduces over two axes)
    by_shape: dict[tuple[str, str], HloInstruction] = {}
    if partitioned is not None:
        for x in partitioned.instructions():
            ch = x.attributes.get("channel_id")
            what = collective_of(x.opcode)
            if ch is not None and what and x.op_name:
                by_channel.setdefault(ch, x)
                by_shape.setdefault((what[0], x.shape.without_layout()), x)
    index: dict[tuple[str, str], list[HloInstruction]] = {}
    by_op: dict[str, list[HloInstruction]] = {}
    for inst in before.instructions():
        if inst.op_name:
            index.setdefault(_key(before, inst), []).append(inst)
            by_op.setdefault(inst.op_name, []).append(inst)
    callers = _callers(before)
    # a nested jit's instructions carry op_names relative to its call: inlined later, they
    # are the caller's op_name, '/', their own
    for comp_name, calls in callers.items():
        comp = before.get_computation(comp_name)
        for call in calls:
            for inst in comp.instructions if comp is not None and call.op_name else ():
                if inst.op_name:
                    by_op.setdefault(f"{call.op_name}/{inst.op_name}", []).append(inst)
    out: dict[str, Cause | None] = {}
    for c in collectives:
        inst, where = c.instruction, module
        channel = c.op.attributes.get("channel_id")     # an async-start's: its wrapped op's
        if not inst.op_name and partitioned is not None:
            stand_in = by_channel.get(channel or "") or by_shape.get(
                (c.kind, c.result_shape.without_layout()))
            if stand_in is not None:
                inst, where = stand_in, partitioned
        candidates = index.get(_key(where, inst)) or []
        if not candidates:
            candidates = [x for name in op_names(inst.op_name) for x in by_op.get(name, [])]
        if any(collective_of(x.opcode) for x in candidates):
            out[c.instruction.name] = None          # the user's own collective
            continue
        found = [cause for x in candidates if (cause := _cause_at(x, callers)) is not None]
        disagreeing = [f for f in found if f.producer_sharding != f.consumer_sharding]
        best = disagreeing or found
        if not best and candidates:     # the instruction is known, its shardings are not
            best = [Cause(candidates[0].name, candidates[0].opcode, "", "", "")]
        if best:
            at = next(x for x in candidates if x.name == best[0].instruction)
            out[c.instruction.name] = replace(best[0], source=_key(before, at)[1])
        else:
            out[c.instruction.name] = None
    return out


def by_source(rows: list[dict]) -> list[dict]:
    """Collectives grouped by the source line of the op that needed them (the rows of the
    ``collectives`` command), most bytes sent first: source, count, kinds, sent bytes."""
    groups: dict[str, dict] = {}
    for r in rows:
        g = groups.setdefault(r["source"] or "(no source line)",
                              {"source": r["source"] or "(no source line)", "count": 0,
                               "kinds": {}, "sent_bytes": 0, "result_bytes": 0,
                               "collectives": []})
        g["count"] += 1
        g["kinds"][r["opcode"]] = g["kinds"].get(r["opcode"], 0) + 1
        g["sent_bytes"] += r["sent_bytes"]
        g["result_bytes"] += r["result_bytes"]
        g["collectives"].append(r["name"])
    return sorted(groups.values(), key=lambda g: (-g["sent_bytes"], g["source"]))
