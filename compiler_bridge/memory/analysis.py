"""A module's memory: its buffer assignment joined with the live ranges and the HLO.

Totals and the peak are ``compiled.memory_analysis()``'s, computed as XLA computes them
(``xla_stats``: arguments, output, alias, temp, and ``peak_memory_in_bytes`` = the buffers
live for the whole run plus the temporaries' heap peak). The live-bytes curve is another
figure, HloLiveRange's: at each schedule position, the sum of the sizes of all the values
live there, every memory space and tuple table included (a value is live from its start to
its end, both included); its maximum is the *live-bytes peak*, not XLA's peak.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..hlo import HloInstruction, HloModule
from .buffer_assignment import (CONSTANT, KINDS, OUTPUT, PARAMETER, TEMP, THREAD_LOCAL,
                                Allocation, BufferAssignment, LogicalValue)
from .live_range import LiveRange
from .oom import OomReport, oom_report, parse_oom_error, required_bytes
from .reports import UsageReport, ValuesFile
from .xla_stats import XlaStats, xla_stats

__all__ = ["MemoryTotals", "ModuleMemory", "ValueLife", "build_memory"]


@dataclass(frozen=True, slots=True)
class MemoryTotals:
    """Bytes by what XLA allocated them for, per device. ``peak_bytes`` is XLA's
    ``peak_memory_in_bytes`` (None when it needs live ranges the dump lacks), reached at
    ``peak_index`` (None when it holds over the whole run); ``live_peak_*`` is the
    live-bytes curve's maximum (None without live ranges)."""

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
    live_peak_bytes: int | None = None
    live_peak_index: int | None = None
    live_peak_instruction: str | None = None
    devices: int = 1                 # replica_count x num_partitions: the numbers are per device
    xla: XlaStats | None = None

    @property
    def spaces(self) -> dict[str, int]:
        return dict(self.xla.spaces) if self.xla is not None else {}

    def to_json(self) -> dict[str, Any]:
        return {"module": self.module, "argument_bytes": self.argument_bytes,
                "output_bytes": self.output_bytes, "temp_bytes": self.temp_bytes,
                "alias_bytes": self.alias_bytes, "constant_bytes": self.constant_bytes,
                "thread_local_bytes": self.thread_local_bytes,
                "total_bytes": self.total_bytes, "peak_bytes": self.peak_bytes,
                "live_peak_bytes": self.live_peak_bytes, "spaces": self.spaces,
                "devices": self.devices}


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
    report: UsageReport | None = None        # *-memory-usage-report.txt, when read
    values_file: ValuesFile | None = None    # *-buffer-assignment-values.txt, when read
    target: str = ""                         # 'cpu', 'gpu', 'tpu' ('' when the dump does not say)
    device_kind: str = ""                    # the device in jax's words (Target.device_kind)
    chip_hbm: int | None = None              # the TPU chip's HBM (datasheet), when known
    _xla: XlaStats | None = None

    def oom(self, error_text: str = "") -> OomReport | None:
        """The out-of-memory explanation: when ``error_text`` is an XLA out-of-memory
        error, or when the HBM allocations exceed the chip's HBM; else None."""
        error = parse_oom_error(error_text) if error_text else None
        if error is None and (self.chip_hbm is None
                              or self.chip_hbm >= required_bytes(self)):
            return None
        return oom_report(self, error_text, self.device_kind, self.chip_hbm)

    def xla(self) -> XlaStats:
        """``memory_analysis()``'s figures for this module (computed once)."""
        if self._xla is None:
            self._xla = xla_stats(self)
        return self._xla

    @property
    def devices(self) -> tuple[int, int]:
        """(replica_count, num_partitions) from the module's header: after SPMD
        partitioning the module, and every number here, is one device's."""
        attrs = self.hlo.attributes if self.hlo is not None else {}

        def count(key: str) -> int:
            try:
                return max(int(attrs.get(key, "1")), 1)
            except ValueError:
                return 1
        return count("replica_count"), count("num_partitions")

    def uses(self, value: LogicalValue) -> list[tuple[str, int]]:
        """(instruction, operand number) reading the value, from the values file."""
        info = self.values_file.values.get(value.id) if self.values_file else None
        return info.uses if info is not None else []

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
        """Where the live-bytes curve peaks (the live-bytes peak; XLA's peak is
        ``totals().peak_bytes``, reached at ``totals().peak_index``)."""
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
        constant = thread_local = total = 0
        for a in self.assignment.allocations:
            total += a.size
            if a.is_constant:
                constant += a.size
            if a.is_thread_local:
                thread_local += a.size
        x = self.xla()
        live = self.peak_index
        replicas, partitions = self.devices
        return MemoryTotals(self.module, x.argument_bytes, x.output_bytes, x.temp_bytes,
                            x.alias_bytes, constant, thread_local, total,
                            x.peak_bytes, x.heap_peak_index,
                            self.instruction_at(x.heap_peak_index)
                            if x.heap_peak_index is not None else None,
                            self.missing,
                            self.curve[live] if live is not None else None, live,
                            self.instruction_at(live) if live is not None else None,
                            replicas * partitions, x)

    def to_json(self, error_text: str = "") -> dict[str, Any]:
        """The ``memory --json`` document (``error_text``: the compile's error, if any)."""
        t = self.totals()
        oom = self.oom(error_text)
        x = t.xla or self.xla()
        replicas, partitions = self.devices
        live = t.live_peak_index
        return {
            "module": self.module,
            "target": x.target or None,
            "argument_bytes": t.argument_bytes,
            "output_bytes": t.output_bytes,
            "temp_bytes": t.temp_bytes,
            "alias_bytes": t.alias_bytes,
            "peak_bytes": t.peak_bytes,
            "peak_definition": x.rule,
            "known_differences": x.known_differences,
            "peak_at": ({"index": t.peak_index, "instruction": t.peak_instruction}
                        if t.peak_index is not None else None),
            "whole_run_bytes": x.whole_run_bytes,
            "heap_peak_bytes": x.heap_peak_bytes,
            "host_argument_bytes": x.host_argument_bytes,
            "host_output_bytes": x.host_output_bytes,
            "host_alias_bytes": x.host_alias_bytes,
            "host_temp_bytes": x.host_temp_bytes,
            "live_peak_bytes": t.live_peak_bytes,
            "live_peak_at": ({"index": live, "instruction": t.live_peak_instruction}
                             if live is not None else None),
            "spaces": x.spaces,
            "devices": {"per_device": True, "count": t.devices,
                        "replica_count": replicas, "num_partitions": partitions,
                        "peak_bytes_all_devices": (t.peak_bytes * t.devices
                                                   if t.peak_bytes is not None else None),
                        "argument_bytes_all_devices": t.argument_bytes * t.devices,
                        "spaces_all_devices": {k: v * t.devices
                                               for k, v in x.spaces.items()}},
            "allocations": [
                {"index": a.index, "size": a.size, "kind": a.kind, "color": a.color,
                 "values": [{"instruction": v.instruction, "shape": v.shape, "size": v.size,
                             "offset": v.offset} for v in a.values]}
                for a in self.assignment.allocations],
            "live_at_peak": ([{"instruction": v.value.instruction, "size": v.value.size}
                              for v in self.live_at(live)] if live is not None else []),
            "oom": oom.to_json() if oom is not None else None,
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
