"""A module's memory: its buffer assignment joined with the live ranges and the HLO.

Totals follow what ``compiled.memory_analysis()`` counts from the same allocations:
arguments = entry-parameter allocations, output = maybe-live-out allocations, temp =
preallocated-temp allocations, alias = parameter allocations that are also live out.
The live-bytes curve is HloLiveRange's: at each schedule position, the sum of the sizes
of the values live there (a value is live from its start to its end, both included).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..hlo import HloInstruction, HloModule
from .buffer_assignment import (CONSTANT, KINDS, OUTPUT, PARAMETER, TEMP, THREAD_LOCAL,
                                Allocation, BufferAssignment, LogicalValue)
from .live_range import LiveRange

__all__ = ["MemoryTotals", "ModuleMemory", "ValueLife", "build_memory"]


@dataclass(frozen=True, slots=True)
class MemoryTotals:
    """Bytes by what XLA allocated them for; ``peak_*`` None without a live-range file."""

    module: str
    argument_bytes: int
    output_bytes: int
    temp_bytes: int
    alias_bytes: int
    constant_bytes: int
    thread_local_bytes: int
    total_bytes: int                 # every allocation
    peak_bytes: int | None
    peak_index: int | None
    peak_instruction: str | None
    missing: tuple[str, ...] = ()    # what the dump lacks to say more, in words

    def to_json(self) -> dict[str, Any]:
        return {"module": self.module, "argument_bytes": self.argument_bytes,
                "output_bytes": self.output_bytes, "temp_bytes": self.temp_bytes,
                "alias_bytes": self.alias_bytes, "constant_bytes": self.constant_bytes,
                "thread_local_bytes": self.thread_local_bytes,
                "total_bytes": self.total_bytes, "peak_bytes": self.peak_bytes}


@dataclass(frozen=True, slots=True)
class ValueLife:
    """A value with its allocation's kind and its live interval (None: not in the
    schedule, e.g. a value inside a fusion or a reducer)."""

    value: LogicalValue
    kind: str
    start: int | None
    end: int | None


@dataclass(slots=True)
class ModuleMemory:
    module: str
    assignment: BufferAssignment
    live_range: LiveRange | None
    hlo: HloModule | None
    lives: list[ValueLife]
    missing: tuple[str, ...] = ()
    curve: list[int] = field(default_factory=list)              # live bytes at each position
    curve_by_kind: dict[str, list[int]] = field(default_factory=dict)
    unlinked: list[str] = field(default_factory=list)           # value names not in the HLO
    by_instruction: dict[str, list[ValueLife]] = field(default_factory=dict)

    # -- lookups
    @property
    def allocations(self) -> list[Allocation]:
        return self.assignment.allocations

    def allocation(self, index: int) -> Allocation:
        return self.assignment.allocations[self._alloc_pos()[index]]

    def _alloc_pos(self) -> dict[int, int]:
        return {a.index: i for i, a in enumerate(self.assignment.allocations)}

    def instruction(self, value: LogicalValue) -> HloInstruction | None:
        return self.hlo.find(value.instruction) if self.hlo is not None else None

    def values_of(self, instruction: str) -> list[ValueLife]:
        """The values an instruction defines."""
        return self.by_instruction.get(instruction, [])

    def sharing(self, value: LogicalValue) -> list[LogicalValue]:
        """Other values placed in the same bytes of the same allocation (at other times)."""
        hi = value.offset + value.size
        return [v for v in self.allocation(value.allocation).values
                if v.id != value.id and v.offset < hi and value.offset < v.offset + v.size]

    # -- the schedule
    @property
    def sequence(self) -> list[str]:
        return self.live_range.sequence if self.live_range is not None else []

    @property
    def peak_index(self) -> int | None:
        if not self.curve:
            return None
        top = max(self.curve)
        return self.curve.index(top)

    def instruction_at(self, index: int) -> str | None:
        seq = self.sequence
        return seq[index] if 0 <= index < len(seq) else None

    def live_at(self, index: int) -> list[ValueLife]:
        """Values live at a schedule position, biggest first."""
        out = [v for v in self.lives if v.start is not None and v.end is not None
               and v.start <= index <= v.end]
        out.sort(key=lambda v: (-v.value.size, v.value.id))
        return out

    def totals(self) -> MemoryTotals:
        by: dict[str, int] = {k: 0 for k in KINDS}
        argument = output = temp = alias = constant = thread_local = total = 0
        for a in self.assignment.allocations:
            total += a.size
            if a.parameter is not None:
                argument += a.size
                if a.maybe_live_out:
                    alias += a.size
            if a.maybe_live_out:
                output += a.size
            if a.is_temp:
                temp += a.size
            if a.is_constant:
                constant += a.size
            if a.is_thread_local:
                thread_local += a.size
            by[a.kind] += a.size
        peak = self.peak_index
        return MemoryTotals(self.module, argument, output, temp, alias, constant,
                            thread_local, total,
                            self.curve[peak] if peak is not None else None, peak,
                            self.instruction_at(peak) if peak is not None else None,
                            self.missing)

    def to_json(self) -> dict[str, Any]:
        """The ``memory --json`` document."""
        t = self.totals()
        peak = t.peak_index
        return {
            "module": self.module,
            "argument_bytes": t.argument_bytes,
            "output_bytes": t.output_bytes,
            "temp_bytes": t.temp_bytes,
            "alias_bytes": t.alias_bytes,
            "peak_bytes": t.peak_bytes,
            "peak_at": ({"index": peak, "instruction": t.peak_instruction}
                        if peak is not None else None),
            "allocations": [
                {"index": a.index, "size": a.size, "kind": a.kind,
                 "values": [{"instruction": v.instruction, "shape": v.shape, "size": v.size,
                             "offset": v.offset} for v in a.values]}
                for a in self.assignment.allocations],
            "live_at_peak": ([{"instruction": v.value.instruction, "size": v.value.size}
                              for v in self.live_at(peak)] if peak is not None else []),
        }


def _curves(lives: list[ValueLife], end: int) -> tuple[list[int], dict[str, list[int]]]:
    """Live bytes at positions 0..end, in total and per allocation kind (difference
    arrays: one pass over the values and one over the positions)."""
    n = end + 1
    deltas = {k: [0] * (n + 1) for k in KINDS}
    for v in lives:
        if v.start is None or v.end is None:
            continue
        d = deltas[v.kind]
        d[max(v.start, 0)] += v.value.size
        d[min(v.end, end) + 1] -= v.value.size
    by_kind: dict[str, list[int]] = {}
    total = [0] * n
    for k, d in deltas.items():
        run, out = 0, [0] * n
        for i in range(n):
            run += d[i]
            out[i] = run
            total[i] += run
        if any(out):
            by_kind[k] = out
    return total, by_kind


def build_memory(module: str, assignment: BufferAssignment, live_range: LiveRange | None,
                 hlo: HloModule | None, missing: tuple[str, ...] = ()) -> ModuleMemory:
    kinds = {a.index: a.kind for a in assignment.allocations}
    ranges = live_range.ranges if live_range is not None else {}
    lives = []
    for v in assignment.values():
        r = ranges.get((v.instruction, v.index))
        lives.append(ValueLife(v, kinds[v.allocation], r[0] if r else None,
                               r[1] if r else None))
    mem = ModuleMemory(module, assignment, live_range, hlo, lives, missing)
    for life in lives:
        mem.by_instruction.setdefault(life.value.instruction, []).append(life)
    if live_range is not None:
        mem.curve, mem.curve_by_kind = _curves(lives, live_range.end)
    if hlo is not None:
        mem.unlinked = sorted({v.instruction for v in assignment.values()
                               if hlo.find(v.instruction) is None})
    return mem


# kinds in stacking order, for those who draw
STACK_ORDER = (PARAMETER, CONSTANT, OUTPUT, TEMP, THREAD_LOCAL)
