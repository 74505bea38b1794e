"""Live ranges derived from a scheduled module, for dumps without a live-range file
(JAX 0.4.30's XLA writes none, and newer XLA not for every module).

It follows what XLA's ``HloLiveRange`` does in module scope, from what the dump holds:
the schedule is the order of each computation's instructions in the scheduled HLO text,
flattened (a call's or conditional's computations, and a while's condition then body,
before the instruction itself); a value lives from its definition (a parameter from its
computation's start) to its last position (a root: its computation's end) or its last use
(a use by a while counts at the body's parameter; a use by a call does not count); an
entry parameter that no output aliases lives to the end. Values placed at the same offset
of one allocation are one buffer for the last step: where two of them overlap, the first
ends where the next starts and the next lasts as long as either. On every dump that has
both (the samples, the generated scale dumps), this equals XLA's live-range file exactly
(``tests/test_memory.py``).
"""

from __future__ import annotations

import re

from ..hlo import HloComputation, HloModule
from .buffer_assignment import BufferAssignment
from .live_range import LiveRange
from .reports import ValuesFile

__all__ = ["derive_live_range", "flatten_schedule"]

_ALIASED = re.compile(r"\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}")


def flatten_schedule(hlo: HloModule) -> tuple[list[str], dict[str, tuple[int, int]],
                                               dict[str, int]]:
    """(instruction names in flattened order, computation -> [start, end), instruction ->
    its time). Fused and reducer computations are not in the schedule."""
    seq: list[str] = []
    span: dict[str, tuple[int, int]] = {}
    time: dict[str, int] = {}
    entered: set[str] = set()
    # iterative: a deep chain of calls must not exhaust Python's stack
    stack: list[tuple[HloComputation, int, int]] = []
    if hlo.entry is None:
        return seq, span, time

    def enter(comp: HloComputation) -> None:
        if comp.name not in entered:
            entered.add(comp.name)
            stack.append((comp, 0, len(seq)))

    enter(hlo.entry)
    pending: dict[str, list[str]] = {}       # instruction -> callees still to flatten
    while stack:
        comp, i, start = stack.pop()
        if i == len(comp.instructions):
            span[comp.name] = (start, len(seq))
            continue
        inst = comp.instructions[i]
        if inst.name not in pending:
            if inst.opcode in ("call", "conditional"):
                callees = list(inst.called_names)
            elif inst.opcode == "while" and inst.condition and inst.body:
                callees = [inst.condition, inst.body]
            else:
                callees = []
            pending[inst.name] = [c for c in callees if hlo.get_computation(c) is not None]
        todo = pending[inst.name]
        if todo:
            stack.append((comp, i, start))
            callee = hlo.computation(todo.pop(0))
            if callee.name not in entered:
                enter(callee)
            continue
        time[inst.name] = len(seq)
        seq.append(inst.name)
        stack.append((comp, i + 1, start))
    return seq, span, time


def _aliased_parameters(hlo: HloModule) -> set[tuple[int, tuple[int, ...]]]:
    text = hlo.input_output_alias or ""
    return {(int(m.group(1)), tuple(int(x) for x in m.group(2).replace(" ", "").split(",") if x))
            for m in _ALIASED.finditer(text)}


def derive_live_range(hlo: HloModule, assignment: BufferAssignment, values: ValuesFile,
                      source: str) -> LiveRange:
    """The live ranges of the assigned values of ``hlo`` (scheduled), as XLA's
    HloLiveRange computes them; ``source`` names what they come from."""
    seq, span, time = flatten_schedule(hlo)
    end_all = len(seq)
    aliased = _aliased_parameters(hlo)
    placed = {v.id: (v.allocation, v.offset) for v in assignment.values()}
    ranges: dict[tuple[str, tuple[int, ...]], list[int]] = {}
    for info in values.values.values():
        inst = hlo.find(info.instruction)
        if inst is None or inst.name not in time or inst.computation is None:
            continue
        comp = inst.computation
        start = span[comp.name][0] if inst.opcode == "parameter" else time[inst.name]
        end = span[comp.name][1] if inst.is_root else time[inst.name]
        for position in info.positions[1:]:
            at = hlo.find(position.split(" ", 1)[0])
            if at is None or at.computation is None:
                continue
            if at.is_root:
                if at.computation.name in span:
                    end = max(end, span[at.computation.name][1])
            elif at.name in time:
                end = max(end, time[at.name])
        if inst.opcode == "parameter" and comp is hlo.entry \
                and (inst.parameter_number, info.index) not in aliased:
            end = end_all
        else:
            for user, _ in info.uses:
                u = hlo.find(user)
                if u is None or u.opcode == "call":
                    continue
                if u.opcode == "while" and u.body:
                    params = hlo.computation(u.body).parameters
                    u = params[0] if params else u
                if u.name in time:
                    end = max(end, time[u.name])
        ranges[(info.instruction, info.index)] = [start, end, info.id]
    # values at one place of one allocation: one buffer (XLA's NormalizeAliasedBuffers)
    groups: dict[tuple[int, int], list[list[int]]] = {}
    for r in ranges.values():
        where = placed.get(r[2])
        if where is not None:
            groups.setdefault(where, []).append(r)
    for group in groups.values():
        group.sort()
        for a, b in zip(group, group[1:]):
            b[1] = max(a[1], b[1])
            a[1] = min(a[1], b[0])
    return LiveRange(source, end_all, seq, {k: (r[0], r[1]) for k, r in ranges.items()})
