"""``*-buffer-assignment.txt``: XLA's ``BufferAssignment::ToString`` — every allocation
(size, tags such as ``parameter N``, ``maybe-live-out``, ``preallocated-temp``) and the
logical values it holds, each ``<id name{index} (phi) @color> (size=,offset=): shape``.

Older XLA (JAX 0.4.30) appends ``Total bytes used`` and ``Used values`` to the same file;
newer XLA writes those to ``*-buffer-assignment-values.txt``. Both are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import MemoryFileError

__all__ = ["Allocation", "BufferAssignment", "LogicalValue", "parse_buffer_assignment"]

# One name per allocation kind; an allocation has the first that applies.
PARAMETER = "parameter"
CONSTANT = "constant"
OUTPUT = "output"
TEMP = "temp"
THREAD_LOCAL = "thread-local"
OTHER = "other"
KINDS = (PARAMETER, OUTPUT, TEMP, CONSTANT, THREAD_LOCAL, OTHER)

_ALLOCATION = re.compile(r"allocation (\d+): size (\d+)(.*):")
_VALUE = re.compile(
    r" value: <(\d+) ([^\s{>]+)(\{[\d,]*\})?( \(phi\))?(?: @(\d+))?> "
    r"\(size=(\d+),offset=(\d+)\): (.*)")
_TOTAL = re.compile(r"Total bytes used: (\d+)")


@dataclass(frozen=True, slots=True)
class LogicalValue:
    """One HLO value as the buffer assignment places it: defined by ``instruction`` at
    tuple ``index`` (() for an array), ``size`` bytes at ``offset`` in its allocation."""

    id: int
    instruction: str
    index: tuple[int, ...]
    tuple_index_shown: bool   # the name carried '{...}' (its instruction is a tuple)
    phi: bool
    color: int
    size: int
    offset: int
    shape: str
    allocation: int
    line: int                 # 1-based line in the file

    @property
    def name(self) -> str:
        """``name{index}`` as the live-range file writes it."""
        return f"{self.instruction}{{{','.join(map(str, self.index))}}}"


@dataclass(slots=True)
class Allocation:
    index: int
    size: int
    tags: tuple[str, ...]          # verbatim, without the |shape| texts
    parameter: int | None = None   # entry parameter number
    parameter_shape: str = ""
    output_shape: str = ""
    color: int = 0
    values: list[LogicalValue] = field(default_factory=list)
    line: int = 0

    @property
    def maybe_live_out(self) -> bool:
        return "maybe-live-out" in self.tags

    @property
    def is_temp(self) -> bool:
        return "preallocated-temp" in self.tags

    @property
    def is_constant(self) -> bool:
        return CONSTANT in self.tags

    @property
    def is_thread_local(self) -> bool:
        return THREAD_LOCAL in self.tags

    @property
    def kind(self) -> str:
        if self.parameter is not None:
            return PARAMETER
        if self.is_constant:
            return CONSTANT
        if self.maybe_live_out:
            return OUTPUT
        if self.is_temp:
            return TEMP
        if self.is_thread_local:
            return THREAD_LOCAL
        return OTHER


@dataclass(slots=True)
class BufferAssignment:
    source: str
    allocations: list[Allocation]
    total_bytes_used: int | None = None   # as the file says (older XLA)

    def values(self) -> list[LogicalValue]:
        return [v for a in self.allocations for v in a.values]


_COLOR = re.compile(r", color (\d+)")
_PARAMETER_TAG = re.compile(
    r", parameter (\d+)(?:, shape \|([^|]*)\| at ShapeIndex \{[\d,]*\})?")
_OUTPUT_TAG = re.compile(r", output shape is \|([^|]*)\|")


def _allocation(m: re.Match[str], lineno: int) -> Allocation:
    rest = m.group(3)
    alloc = Allocation(int(m.group(1)), int(m.group(2)), (), line=lineno)
    c = _COLOR.search(rest)
    if c:
        alloc.color = int(c.group(1))
    p = _PARAMETER_TAG.search(rest)
    if p:
        alloc.parameter = int(p.group(1))
        alloc.parameter_shape = p.group(2) or ""
    o = _OUTPUT_TAG.search(rest)
    if o:
        alloc.output_shape = o.group(1)
    for pattern in (_COLOR, _PARAMETER_TAG, _OUTPUT_TAG):
        rest = pattern.sub("", rest)
    tags = [t.strip() for t in rest.split(",") if t.strip()]
    if p:
        tags.insert(0, PARAMETER)
    alloc.tags = tuple(tags)
    return alloc


def parse_buffer_assignment(text: str, source: str = "<text>") -> BufferAssignment:
    """Read a ``*-buffer-assignment.txt``. Raises MemoryFileError (file, line, what was
    expected) for text that is not one: a foreign or truncated file is never half-read
    silently."""
    if text and not text.endswith("\n"):
        raise MemoryFileError("the file ends in the middle of a line (truncated?)",
                              source=source, line=text.count("\n") + 1,
                              text=text.rsplit("\n", 1)[-1])
    if not text.strip():    # a run killed before XLA wrote it, a disk that filled
        raise MemoryFileError("empty file: expected 'BufferAssignment:' and the "
                              "allocations", source=source)
    lines = text.split("\n")
    if not lines or lines[0].strip() != "BufferAssignment:":
        raise MemoryFileError("expected 'BufferAssignment:' on the first line: not an XLA "
                              "buffer-assignment file", source=source, line=1,
                              text=lines[0] if lines else "")
    allocations: list[Allocation] = []
    current: Allocation | None = None
    total: int | None = None
    for lineno, line in enumerate(lines[1:], start=2):
        if line.startswith(" value: "):
            v = _VALUE.fullmatch(line)
            if v is None or current is None:
                raise MemoryFileError(
                    "expected ' value: <id name @color> (size=N,offset=N): shape'"
                    if current is not None else "a value before any allocation",
                    source=source, line=lineno, text=line)
            idx = v.group(3)
            current.values.append(LogicalValue(
                int(v.group(1)), v.group(2),
                tuple(int(x) for x in idx[1:-1].split(",") if x) if idx else (),
                idx is not None, v.group(4) is not None, int(v.group(5) or 0),
                int(v.group(6)), int(v.group(7)), v.group(8), current.index, lineno))
            continue
        if line.startswith("allocation "):
            m = _ALLOCATION.fullmatch(line)
            if m is None:
                raise MemoryFileError("expected 'allocation N: size N, <tags>:'",
                                      source=source, line=lineno, text=line)
            current = _allocation(m, lineno)
            allocations.append(current)
            continue
        if not line.strip():
            continue
        t = _TOTAL.match(line)
        if t:
            total = int(t.group(1))
        # 'Total bytes used', 'Used values:', stats: what follows the allocations
        break
    if not allocations:
        raise MemoryFileError("no allocations: the file is empty or truncated",
                              source=source, line=len(lines))
    return BufferAssignment(source, allocations, total)
