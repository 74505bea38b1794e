"""``*-live-range.txt``: XLA's ``HloLiveRange::ToString`` — the flattened instruction
sequence (the schedule, while bodies and branches inlined), each value's live interval
``name{index}:start-end`` in that sequence, and the values live at XLA's own peak."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import MemoryFileError

__all__ = ["LiveRange", "parse_live_range"]

_HEADER = re.compile(r"HloLiveRange \(max (\d+)\):")
_STEP = re.compile(r"(\d+):(\S+)")
_RANGE = re.compile(r"(\S+?)(\{[\d,]*\}):(\d+)-(\d+)")
_PEAK = re.compile(r"Live ranges at (\d+) \(peak\):")
_PEAK_ROW = re.compile(r"(\S+?)(\{[\d,]*\}): (\d+) bytes \(cumulative: (\d+) bytes\)")


@dataclass(slots=True)
class LiveRange:
    source: str
    end: int                                  # 'max': one past the last instruction
    sequence: list[str]                       # instruction names by schedule position
    ranges: dict[tuple[str, tuple[int, ...]], tuple[int, int]]   # (instruction, index) -> [start, end]
    peak_at: int | None = None                # XLA's own peak (newer XLA)
    peak_rows: list[tuple[str, tuple[int, ...], int]] = field(default_factory=list)

    @property
    def peak_bytes(self) -> int | None:
        """What XLA says is live at its peak, summed (None when the file has no peak)."""
        return sum(r[2] for r in self.peak_rows) if self.peak_at is not None else None


def _index(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text[1:-1].split(",") if x)


def parse_live_range(text: str, source: str = "<text>") -> LiveRange:
    """Read a ``*-live-range.txt``; raises MemoryFileError with the file and line."""
    if text and not text.endswith("\n"):
        raise MemoryFileError("the file ends in the middle of a line (truncated?)",
                              source=source, line=text.count("\n") + 1,
                              text=text.rsplit("\n", 1)[-1])
    lines = text.split("\n")
    head = _HEADER.fullmatch(lines[0].strip()) if lines else None
    if head is None:
        raise MemoryFileError("expected 'HloLiveRange (max N):' on the first line: not an "
                              "XLA live-range file", source=source, line=1,
                              text=lines[0] if lines else "")
    out = LiveRange(source, int(head.group(1)), [], {})
    section = ""
    for lineno, line in enumerate(lines[1:], start=2):
        s = line.strip()
        if not s:
            continue
        if not line.startswith("    "):          # a section title
            p = _PEAK.fullmatch(s)
            if p:
                section, out.peak_at = "peak", int(p.group(1))
            elif s in ("InstructionSequence:", "BufferLiveRange:"):
                section = s
            else:
                section = "other"                # later XLA's extras (stack breakdown)
            continue
        if section == "InstructionSequence:":
            m = _STEP.fullmatch(s)
            if m is None or int(m.group(1)) != len(out.sequence):
                raise MemoryFileError(
                    f"expected '{len(out.sequence)}:<instruction>' in the InstructionSequence",
                    source=source, line=lineno, text=line)
            out.sequence.append(m.group(2))
        elif section == "BufferLiveRange:":
            r = _RANGE.fullmatch(s)
            if r is None:
                raise MemoryFileError("expected '<value>{index}:<start>-<end>' in "
                                      "BufferLiveRange", source=source, line=lineno, text=line)
            out.ranges[(r.group(1), _index(r.group(2)))] = (int(r.group(3)), int(r.group(4)))
        elif section == "peak":
            q = _PEAK_ROW.fullmatch(s)
            if q is None:
                raise MemoryFileError("expected '<value>{index}: N bytes (cumulative: N "
                                      "bytes)'", source=source, line=lineno, text=line)
            out.peak_rows.append((q.group(1), _index(q.group(2)), int(q.group(3))))
        elif section == "":
            raise MemoryFileError("expected a section title (InstructionSequence:)",
                                  source=source, line=lineno, text=line)
    if not out.sequence:
        raise MemoryFileError("no InstructionSequence: the file is empty or truncated",
                              source=source, line=len(lines))
    return out
