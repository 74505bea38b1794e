"""A compile that ran out of memory: what it needed, what the device has, and the buffers
that needed the bytes.

XLA:TPU fails such a compile with ``RESOURCE_EXHAUSTED: Ran out of memory on HBM, the
total memory required for HLO temporaries (39.81G) exceeds available HBM (15.75G).`` and
still writes the buffer assignment: the required figure is the bytes its HBM allocations
reserve (the memory-usage report's ``Total bytes`` of the default space; ``G`` is GiB,
tsl's HumanReadableNumBytes), so it is reproduced from the dump alone. The available
figure is XLA's (its usable HBM, less than the chip's) and only the error text says it;
without the text, the chip's HBM from its datasheet stands in, said so. The error text is
not in the dump folder (JAX raises it): the user gives it (``memory --error``, the Memory
page's text box).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..hlo import HloParseError, parse_shape
from .buffer_assignment import LogicalValue
from .xla_stats import MemoryLike, heap_curve



__all__ = ["OomBuffer", "OomError", "OomReport", "oom_report", "parse_oom_error",
           "required_bytes"]

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
          "P": 1 << 50}
_NUM = r"([\d.]+)\s*([KMGTP]?)(?:i?B)?"
# 'the total memory required for HLO temporaries (39.81G) exceeds available HBM (15.75G)'
_REQUIRED = re.compile(r"required[^()]*\(" + _NUM + r"\)[^()]*?available\s+(\w+)\s*\("
                       + _NUM + r"\)", re.I)
# 'Ran out of memory in memory space hbm. Used 20.58G of 15.48G hbm.'
_USED = re.compile(r"Used\s+" + _NUM + r"\s+of\s+" + _NUM + r"\s+(\w+)", re.I)
LARGEST = 10


@dataclass(frozen=True, slots=True)
class OomError:
    """What an out-of-memory error text says (its byte figures rounded as XLA prints)."""

    text: str
    space: str
    required_bytes: int
    available_bytes: int


def _bytes(number: str, unit: str) -> int:
    return int(float(number) * _UNITS[unit.upper()])


def parse_oom_error(text: str) -> OomError | None:
    """The required and available bytes an XLA RESOURCE_EXHAUSTED text names, None for
    a text that names none (a pasted log is read up to its first 100,000 characters)."""
    text = text[:100_000]
    m = _REQUIRED.search(text)
    if m:
        return OomError(text.strip(), m.group(3).upper(), _bytes(m.group(1), m.group(2)),
                        _bytes(m.group(4), m.group(5)))
    m = _USED.search(text)
    if m:
        return OomError(text.strip(), m.group(5).upper(), _bytes(m.group(1), m.group(2)),
                        _bytes(m.group(3), m.group(4)))
    return None


@dataclass(frozen=True, slots=True)
class OomBuffer:
    buffer: str            # the value, 'name{index}'
    bytes: int
    instruction: str
    shape: str
    kind: str              # the allocation's: parameter, temp, output, constant
    source: str            # 'file.py:12' of the instruction, '' when the HLO has none
    scope: str             # its op_name
    padding_bytes: int     # bytes the tiled layout adds to the array's own

    def to_json(self) -> dict[str, Any]:
        return {"buffer": self.buffer, "bytes": self.bytes, "instruction": self.instruction,
                "source": self.source or None, "scope": self.scope or None,
                "shape": self.shape, "kind": self.kind, "padding_bytes": self.padding_bytes}


@dataclass(frozen=True, slots=True)
class OomReport:
    required_bytes: int                # the HBM allocations' bytes, from the dump
    available_bytes: int | None
    available_from: str                # 'the error text', 'the TPU v5 lite datasheet', ''
    space: str
    error: OomError | None
    largest: list[OomBuffer] = field(default_factory=list)

    @property
    def exceeds(self) -> bool | None:
        if self.available_bytes is None:
            return None
        return self.required_bytes > self.available_bytes

    def to_json(self) -> dict[str, Any]:
        return {"required_bytes": self.required_bytes,
                "available_bytes": self.available_bytes,
                "available_from": self.available_from or None,
                "space": self.space,
                "error_required_bytes": self.error.required_bytes if self.error else None,
                "largest": [b.to_json() for b in self.largest]}


def unpadded_bytes(shape: str) -> int | None:
    """Bytes of an array shape's elements without its layout's tiling."""
    try:
        s = parse_shape(shape)
    except HloParseError:
        return None
    return s.byte_size if s.is_array else None


def _where(mem: MemoryLike, name: str) -> tuple[str, str]:
    """(source 'file:line', op_name) of an instruction."""
    inst = mem.hlo.find(name) if mem.hlo is not None else None
    if inst is None or mem.hlo is None:
        return "", ""
    try:
        op = inst.op_name
    except ValueError:
        op = ""
    try:
        loc = mem.hlo.source_location(inst)
    except ValueError:
        loc = None
    return (f"{loc.file}:{loc.line}" if loc is not None else ""), op


def _needed(mem: MemoryLike, color: int = 0) -> list[LogicalValue]:
    """The values of a space that needed the bytes: each whole-run allocation's biggest
    value and the array temporaries live where the space's temporaries peak (all of them
    without live ranges)."""
    out: list[LogicalValue] = []
    for a in mem.allocations:
        if a.color != color or not a.values or a.is_thread_local:
            continue
        if a.parameter is not None or a.maybe_live_out or a.is_constant:
            out.append(max(a.values, key=lambda v: (v.size, -v.id)))
    curve = heap_curve(mem, (color,))
    at = curve.index(max(curve)) if curve else None
    for life in mem.lives:
        v = life.value
        if v.color != color or v.shape.startswith("(") or not mem.allocation(v.allocation).is_temp:
            continue
        if at is None or (life.start is not None and life.end is not None
                          and life.start <= at <= life.end):
            out.append(v)
    return out


def required_bytes(mem: MemoryLike, color: int = 0) -> int:
    """What XLA:TPU's error calls the memory required: the bytes of one space's
    allocations (HBM, the default space, unless the error names another)."""
    return sum(a.size for a in mem.allocations if a.color == color)


def _space_color(mem: MemoryLike, space: str) -> int:
    """The color of the memory space an error names ('HBM' -> 0, 'VMEM' -> the report's
    'vmem' color)."""
    if mem.report is not None:
        for s in mem.report.spaces:
            if s.name.lower() == space.lower():
                return s.color
    return 0


def oom_report(mem: MemoryLike, error_text: str = "", chip: str = "",
               chip_hbm: int | None = None) -> OomReport:
    """What the module needs in HBM against what the device has: from ``error_text`` when
    given, else the chip's HBM (``chip_hbm``, named ``chip``)."""
    error = parse_oom_error(error_text) if error_text else None
    color = _space_color(mem, error.space) if error is not None else 0
    required = required_bytes(mem, color)
    if error is not None:
        available: int | None = error.available_bytes
        source = "the error text"
    elif chip_hbm is not None:
        available, source = chip_hbm, f"the {chip} datasheet (XLA keeps part of it)"
    else:
        available, source = None, ""
    largest = []
    for v in sorted(_needed(mem, color), key=lambda v: (-v.size, v.id))[:LARGEST]:
        src, scope = _where(mem, v.instruction)
        plain = unpadded_bytes(v.shape)
        largest.append(OomBuffer(v.name, v.size, v.instruction, v.shape,
                                 mem.allocation(v.allocation).kind, src, scope,
                                 max(v.size - plain, 0) if plain is not None else 0))
    return OomReport(required, available, source,
                     "HBM" if color == 0 else error.space if error else f"color {color}",
                     error, largest)
