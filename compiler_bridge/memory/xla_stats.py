"""``compiled.memory_analysis()`` reproduced from a dump: the totals and the peak as XLA
computes them, and the bytes per memory space.

How XLA computes them (PjRt's ``GetCompiledMemoryStats``; ARCHITECTURE.md §9.9):

* **totals** (``CompiledMemoryStats::PopulateBufferStatsFromAllocations``): over the buffer
  assignment's allocations outside the host space, arguments = entry-parameter allocations,
  output = maybe-live-out allocations, alias = parameter allocations aliased with the output,
  temp = preallocated-temp allocations. XLA:TPU (libtpu) counts as temp only HBM
  allocations that hold arrays: its other temporaries are in VMEM/SMEM, and its HBM temp
  allocation holds only tuple index tables, so ``temp_size_in_bytes`` is 0 on v5e/v6e;
  each counted allocation is rounded up to the heap's 16 KiB granule, and every chunk's
  own rounding added again (``_tpu_temp``; v5p keeps 2-11 MiB more on some programs:
  ``TPU_KNOWN_DIFFERENCES``).
* **peak** (``ComputePeakMemory`` / ``ComputePeakMemorySizes`` on the buffer-assignment
  proto, the memory viewer's algorithm): the bytes of the allocations live for the whole
  run in the default and host spaces (entry parameters, maybe-live-out outputs, constants; each
  allocation once, so a donated argument aliased to an output counts once; thread-local
  scratch not at all) plus the peak of the heap simulator's trace of the temporaries
  (ALLOC and FREE over the schedule). The dump has no heap trace; its live ranges give
  the same: at each position of the schedule, the array values in temp allocations live
  there (tuple index tables are placed after the heap). XLA:GPU counts the bytes they
  occupy (a result written in place over its dying operand once: SHARE_WITH); XLA:TPU
  (libtpu) sums their sizes per space, HBM and VMEM each on its own, and takes the
  bigger (the values a custom call writes over counted once with it); XLA:CPU adds no
  heap term. Equal to ``memory_analysis()`` to the byte on every
  sample (tests/test_memory_targets.py); ARCHITECTURE.md §9.9 has the measurements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..hlo import HloModule
from ..targets import (HOST_COLOR, PEAK_HEAP_COLORS, PEAK_HEAP_OCCUPIED, TPU_HBM_CHUNK,
                       space_name)
from .buffer_assignment import Allocation
from .live_range import LiveRange
from .reports import UsageReport

__all__ = ["MemoryLike", "XlaStats", "heap_curve", "heap_peak", "memory_target", "xla_stats"]


class MemoryLike(Protocol):
    """What these figures need of a ``ModuleMemory`` (which imports this module)."""

    target: str
    report: UsageReport | None
    live_range: LiveRange | None
    hlo: HloModule | None
    lives: list[Any]          # ValueLife: .value (LogicalValue), .start, .end

    @property
    def allocations(self) -> Sequence[Allocation]: ...

    def allocation(self, index: int) -> Allocation: ...


@dataclass(frozen=True, slots=True)
class XlaStats:
    """What ``memory_analysis()`` says for the module, from the dump; ``peak_bytes`` None
    when the peak needs live ranges the dump lacks."""

    target: str                       # 'cpu', 'gpu', 'tpu' ('' when the dump does not say)
    argument_bytes: int
    output_bytes: int
    alias_bytes: int
    temp_bytes: int
    whole_run_bytes: int              # allocations live for the whole run (default, host)
    heap_colors: tuple[int, ...]      # the spaces whose temporaries enter the peak
    heap_peak_bytes: int | None
    heap_peak_index: int | None       # where the temporaries peak in the schedule
    peak_bytes: int | None
    spaces: dict[str, int] = field(default_factory=dict)   # reserved bytes per space
    rule: str = ""                    # the peak's definition for this target, in words
    # figure -> how it may differ from XLA's, where measurements say it can (no silent
    # mismatch): {"temp_bytes": {"direction": "under", "up_to": 0.25, "why": ...}}
    known_differences: dict[str, dict[str, Any]] = field(default_factory=dict)
    # memory_analysis()'s host_*_size_in_bytes: the same totals over the host space
    host_argument_bytes: int = 0
    host_output_bytes: int = 0
    host_alias_bytes: int = 0
    host_temp_bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target or None, "argument_bytes": self.argument_bytes,
                "output_bytes": self.output_bytes, "alias_bytes": self.alias_bytes,
                "temp_bytes": self.temp_bytes, "peak_bytes": self.peak_bytes,
                "whole_run_bytes": self.whole_run_bytes,
                "host_argument_bytes": self.host_argument_bytes,
                "host_output_bytes": self.host_output_bytes,
                "host_alias_bytes": self.host_alias_bytes,
                "host_temp_bytes": self.host_temp_bytes,
                "heap_peak_bytes": self.heap_peak_bytes, "peak_definition": self.rule,
                "known_differences": self.known_differences}


def memory_target(kind: str, colors: set[int], report_spaces: tuple[str, ...] = ()) -> str:
    """'cpu', 'gpu' or 'tpu': the module's target kind (``dumps.module_target``) when its
    files say; else 'tpu' when its memory spaces are XLA:TPU's (``vmem``, colors other than
    the default and host). '' when nothing says."""
    if kind:
        return kind
    if "vmem" in report_spaces or any(c not in (0, HOST_COLOR) for c in colors):
        return "tpu"
    return ""


def _heap_values(mem: MemoryLike, colors: tuple[int, ...]) -> list[Any]:
    """The scheduled array temporaries of the given colors (tuple tables are not in the
    heap)."""
    return [v for v in mem.lives
            if v.start is not None and v.end is not None and v.value.color in colors
            and not v.value.shape.startswith("(")
            and mem.allocation(v.value.allocation).is_temp]


def _writes_over(hlo: HloModule, inst: Any, color: int) -> bool:
    """Whether XLA:TPU counts ``inst``'s result once with the operand it is written over:
    a custom call (``ConcatBitcast``) in any space; in HBM (color 0) also a synchronous
    all-reduce, a dynamic-update-slice or a fusion whose root is one (through bitcasts) —
    the same loop's dynamic-update-slice fusion in VMEM counts twice (v5e, v6e)."""
    if inst.opcode == "custom-call":
        return True
    if color != 0:
        return False
    if inst.opcode in ("all-reduce", "dynamic-update-slice"):
        return True
    if inst.opcode != "fusion" or not inst.calls:
        return False
    comp = hlo.get_computation(inst.calls[0])
    root = comp.root if comp is not None else None
    while root is not None and root.opcode == "bitcast" and root.operands:
        root = root.operands[0]
    return root is not None and root.opcode == "dynamic-update-slice"


def _taken_over(mem: MemoryLike, values: list[Any]) -> dict[int, int]:
    """id(value) -> the last position it holds its bytes alone: values a custom call writes
    its result over (XLA:TPU's ``ConcatBitcast``: they die where it is defined, inside its
    bytes; its operands are their ``*-done``) are counted once with it there, and in HBM
    the operand an all-reduce or a dynamic-update-slice (fusion) is written over
    (``_writes_over``). Other in-place results are not: libtpu's heap counts both
    (measured, ARCHITECTURE.md §9.9: the peak of 57 TPU programs equal to the byte with
    this, 49 without)."""
    if mem.hlo is None:
        return {}
    ending: dict[tuple[int, int], list[Any]] = {}
    for v in values:
        ending.setdefault((v.value.allocation, v.end), []).append(v)
    out: dict[int, int] = {}
    for v in values:
        inst = mem.hlo.find(v.value.instruction)
        if inst is None or not _writes_over(mem.hlo, inst, v.value.color):
            continue
        lo, hi = v.value.offset, v.value.offset + v.value.size
        for u in ending.get((v.value.allocation, v.start), ()):
            if u.start < v.start and lo <= u.value.offset \
                    and u.value.offset + u.value.size <= hi:
                out[id(u)] = v.start - 1
    return out


def heap_curve(mem: MemoryLike, colors: tuple[int, ...], takeover: bool = False) -> list[int]:
    """The temporaries of the given colors at each schedule position: the sum of the sizes
    of those live there, one instruction's outputs at the same bytes (outputs aliasing one
    operand) once; ``takeover``: operands a result is written over counted no more from its
    position (``_taken_over``). Difference arrays: one pass over the values, one over the
    positions."""
    if mem.live_range is None or not colors:
        return []
    end = mem.live_range.end
    groups: dict[tuple[str, int, int], list[Any]] = {}
    values = _heap_values(mem, colors)
    last = _taken_over(mem, values) if takeover else {}
    for v in values:
        groups.setdefault((v.value.instruction, v.value.allocation, v.value.offset),
                          []).append(v)
    delta = [0] * (end + 2)
    for group in groups.values():
        size = max(v.value.size for v in group)
        spans = sorted((max(v.start, 0), min(last.get(id(v), v.end), end)) for v in group)
        lo, hi = spans[0]
        for a, b in spans[1:] + [(end + 2, end + 2)]:
            if a > hi + 1:
                delta[lo] += size
                delta[hi + 1] -= size
                lo, hi = a, b
            else:
                hi = max(hi, b)
    out, run = [0] * (end + 1), 0
    for i in range(end + 1):
        run += delta[i]
        out[i] = run
    return out


def _occupied_at(values: list[Any], t: int) -> int:
    """Bytes the values live at ``t`` cover, allocation by allocation (overlaps once)."""
    spans = sorted((v.value.allocation, v.value.offset, v.value.offset + v.value.size)
                   for v in values if v.start <= t <= v.end)
    total, cur = 0, None
    for alloc, lo, hi in spans:
        if cur is not None and alloc == cur[0] and lo < cur[2]:
            cur[2] = max(cur[2], hi)
            continue
        if cur is not None:
            total += cur[2] - cur[1]
        cur = [alloc, lo, hi]
    return total + (cur[2] - cur[1] if cur is not None else 0)


def heap_peak(mem: MemoryLike, color: int, occupied: bool) -> tuple[int, int | None] | None:
    """(bytes, position) of one space's temporaries at their peak; None without live
    ranges. ``occupied``: the bytes they cover (a result written in place over its dying
    operand once, as the heap simulator's SHARE_WITH), found among the positions in
    decreasing order of the sum (never below what they cover) until no sum can beat it."""
    curve = heap_curve(mem, (color,), takeover=not occupied)
    if not curve:
        return None if mem.live_range is None else (0, None)
    top = max(curve)
    if not occupied or top == 0:
        return top, curve.index(top)
    values = _heap_values(mem, (color,))
    best, at = -1, None
    for t in sorted(range(len(curve)), key=lambda i: (-curve[i], i)):
        if curve[t] <= best:
            break
        got = _occupied_at(values, t)
        if got > best:
            best, at = got, t
    return best, at


def _holds_entry_arrays(mem: MemoryLike, alloc: Allocation) -> bool:
    """Whether an allocation holds an array the entry computation defines (XLA:TPU counts
    no temp for tuple tables nor for a loop's scalar predicate)."""
    for v in alloc.values:
        if v.shape.startswith("("):
            continue
        inst = mem.hlo.find(v.instruction) if mem.hlo is not None else None
        if inst is None or inst.computation is None or inst.computation.is_entry:
            return True
    return False


def _tpu_temp(alloc: Allocation) -> int:
    """What XLA:TPU counts for an HBM temp allocation: its size rounded up to the heap's
    16 KiB granule plus, for every chunk (an offset; the biggest value placed there), the
    bytes that rounding adds to the chunk: the padding counted a second time. Measured, not
    read in libtpu (closed): 82 of 90 TPU modules equal to the byte (ARCHITECTURE.md §9.9)."""
    biggest: dict[int, int] = {}
    for v in alloc.values:
        biggest[v.offset] = max(biggest.get(v.offset, 0), v.size)
    return alloc.size + (-alloc.size % TPU_HBM_CHUNK) + sum(
        -size % TPU_HBM_CHUNK for size in biggest.values())


# Where the figures computed here were measured to differ from XLA:TPU's (libtpu), so that
# the page and `memory --json` say so (bench.accuracy.memory_targets and
# tpu_memory_variants, ARCHITECTURE §9.9).
TPU_KNOWN_DIFFERENCES: dict[str, dict[str, Any]] = {
    "temp_bytes": {
        "direction": "under", "up_to": 0.3,
        "why": "XLA:TPU may count HBM temp bytes the dump does not show: 2 to 11 MiB more "
               "on 8 of 90 TPU modules measured (all v5p: MLP train steps with donated "
               "weights, sharded train steps; 11% to 24.1% of their temp), equal to the "
               "byte on the other 82; in a later sweep of 33 programs, 0.5 to 1.8 MiB "
               "on 3 v5p ones (up to 28.8%: a scan over sharded layers) and 512 B on that "
               "scan for v5e and v6e (0.2%); no file of the dump says which (libtpu decides "
               "it below HLO)"},
}


def _rule(target: str, colors: tuple[int, ...]) -> str:
    whole = ("the buffers live for the whole run (arguments, outputs, constants; an "
             "argument donated to an output counted once)")
    if not colors:
        return (f"XLA:CPU's peak_memory_in_bytes: {whole}; XLA:CPU adds no heap term"
                if target == "cpu" else
                f"{whole} (the dump does not say its target: XLA:CPU's definition)")
    spaces = " or ".join(space_name(target, c) for c in colors)
    return (f"XLA's peak_memory_in_bytes: {whole} plus the peak of the temporaries in "
            f"{spaces} over the schedule" + (", whichever is bigger" if len(colors) > 1
                                             else ""))


def xla_stats(mem: MemoryLike) -> XlaStats:
    """The module's ``memory_analysis()`` figures, from its buffer assignment and live
    ranges (the target from ``mem.target``)."""
    target = mem.target
    argument = output = alias = temp = whole = 0
    spaces: dict[str, int] = {}
    reported = ({s.color: s.name for s in mem.report.spaces} if mem.report is not None
                else {})
    host = {"argument": 0, "output": 0, "alias": 0, "temp": 0}
    for a in sorted(mem.allocations, key=lambda a: a.color):
        name = space_name(target, a.color, reported.get(a.color, ""))
        spaces[name] = spaces.get(name, 0) + a.size
        # a host buffer live for the whole run (jax's pinned_host argument or output) is in
        # XLA's peak too: measured on v5e, v5p and H100, XLA's is over by exactly those
        if a.color in (0, HOST_COLOR) and (a.parameter is not None or a.maybe_live_out
                                           or a.is_constant):
            whole += a.size
        if a.color == HOST_COLOR:
            host["argument"] += a.size if a.parameter is not None else 0
            host["output"] += a.size if a.maybe_live_out else 0
            host["alias"] += a.size if a.parameter is not None and a.maybe_live_out else 0
            host["temp"] += a.size if a.is_temp else 0
            continue
        if a.parameter is not None:
            argument += a.size
            if a.maybe_live_out:
                alias += a.size
        if a.maybe_live_out:
            output += a.size
        if a.is_temp and target != "tpu":
            temp += a.size
        elif a.is_temp and a.color == 0 and _holds_entry_arrays(mem, a):
            temp += _tpu_temp(a)
    colors = PEAK_HEAP_COLORS.get(target, ())
    occupied = PEAK_HEAP_OCCUPIED.get(target, True)
    heap: int | None = 0 if not colors else None
    index: int | None = None
    # each space's temporaries peak on their own; the peak takes the biggest
    for color in colors:
        got = heap_peak(mem, color, occupied)
        if got is not None and (heap is None or got[0] > heap):
            heap, index = got
    return XlaStats(target, argument, output, alias, temp, whole, colors, heap, index,
                    whole + heap if heap is not None else None, spaces, _rule(target, colors),
                    dict(TPU_KNOWN_DIFFERENCES) if target == "tpu" else {},
                    host["argument"], host["output"], host["alias"], host["temp"])
