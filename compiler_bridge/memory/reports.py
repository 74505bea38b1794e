"""The two companions of the buffer assignment that newer XLA writes:

* ``*-memory-usage-report.txt``: per memory space (``Memory Space: default (color=0)``)
  its ``Total bytes`` and, allocation by allocation, the chunks at each offset with the
  number of values sharing them;
* ``*-buffer-assignment-values.txt``: ``Total bytes used`` and every value
  (``<id name @color>``) with its positions, its uses and the instruction defining it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import MemoryFileError

__all__ = ["MemorySpace", "UsageReport", "ValueInfo", "ValuesFile", "parse_usage_report",
           "parse_values"]

_SPACE = re.compile(r"Memory Space: (.*) \(color=(\d+)\)")
_TOTAL = re.compile(r"Total bytes(?: used)?: (\d+)\b.*")
# an allocation's share of its own size: '(-nan%)' when the allocation is 0 bytes (a
# zero-size array: XLA prints 0/0 with printf)
_SHARE = r"\(\s*(?:\d+|[-+]?nan)%\)"
_CHUNK = re.compile(r"\s*[\d.]+\w*" + _SHARE + r";\s*[\d.]+\w*;\s*(\d+);\s*(\d+); (.*)")
_VALUE = re.compile(r"<(\d+) ([^\s{>]+)(\{[\d,]*\})?( \(phi\))?(?: @(\d+))?>")
# JAX 0.4.30 glues the next value's header to the end of 'from instruction: ...'
_GLUED = re.compile(r"(<\d+ [^\s{>]+(?:\{[\d,]*\})?(?: \(phi\))?(?: @\d+)?>)$")
_USE = re.compile(r"(\S+), operand (\d+)(?:,? (\{[\d,]*\}))?")   # {index} when a tuple's part
# the older report (TF 2.21's XLA): 'Total bytes used: N (…)' first, one memory space
_USED = re.compile(r"Total bytes used: (\d+)\b.*")
_ALLOCATION = re.compile(r"(?:\s*[\d.]+\w*" + _SHARE + r";\s*[\d.]+\w*; )?allocation \d+: .*")


@dataclass(slots=True)
class MemorySpace:
    name: str
    color: int
    total_bytes: int
    chunks: list[list[tuple[int, int, str]]] = field(default_factory=list)
    # one list per allocation: (offset, values sharing the chunk, their shapes)


@dataclass(slots=True)
class UsageReport:
    source: str
    spaces: list[MemorySpace]

    @property
    def total_bytes(self) -> int:
        return sum(s.total_bytes for s in self.spaces)


def _check_end(text: str, source: str) -> None:
    if text and not text.endswith("\n"):
        raise MemoryFileError("the file ends in the middle of a line (truncated?)",
                              source=source, line=text.count("\n") + 1,
                              text=text.rsplit("\n", 1)[-1])


def parse_usage_report(text: str, source: str = "<text>") -> UsageReport:
    """Read a ``*-memory-usage-report.txt``; raises MemoryFileError with file and line."""
    _check_end(text, source)
    if text.startswith("Total bytes used:"):
        return _parse_older_report(text, source)
    spaces: list[MemorySpace] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        s = line.strip()
        if not s or s.startswith("cumulative_size") or set(s) == {"-"}:
            if s.startswith("cumulative_size") and spaces:
                spaces[-1].chunks.append([])
            continue
        m = _SPACE.fullmatch(s)
        if m:
            spaces.append(MemorySpace(m.group(1), int(m.group(2)), 0))
            continue
        if not spaces:
            raise MemoryFileError("expected 'Memory Space: <name> (color=N)' first: not an "
                                  "XLA memory-usage report", source=source, line=lineno,
                                  text=line)
        t = _TOTAL.fullmatch(s)
        if t:
            spaces[-1].total_bytes = int(t.group(1))
            continue
        if s.startswith("The rest ") and "not shown" in s:
            continue        # XLA leaves out the small chunks of a big allocation
        c = _CHUNK.fullmatch(line)
        if c is None or not spaces[-1].chunks:
            raise MemoryFileError("expected 'cumulative (N%); size; offset; values; shapes'",
                                  source=source, line=lineno, text=line)
        spaces[-1].chunks[-1].append((int(c.group(1)), int(c.group(2)), c.group(3)))
    if not spaces:
        raise MemoryFileError("no memory space: the file is empty or truncated",
                              source=source, line=1)
    return UsageReport(source, spaces)


def _parse_older_report(text: str, source: str) -> UsageReport:
    """The report as older XLA writes it (TF 2.21): ``Total bytes used: N``, the
    allocations by size, then each allocation again with its chunks (offset, values
    sharing it, their shapes) — one memory space, unnamed: XLA's default."""
    space = MemorySpace("default", 0, 0)
    for lineno, line in enumerate(text.split("\n"), start=1):
        s = line.strip()
        if not s or set(s) == {"-"} or s.startswith("Allocations sorted by size"):
            continue
        if lineno == 1:
            t = _USED.fullmatch(s)
            if t is None:
                raise MemoryFileError("expected 'Total bytes used: N'", source=source,
                                      line=1, text=line)
            space.total_bytes = int(t.group(1))
            continue
        if s.startswith("cumulative_size"):
            if "used_by_n_values" in s:      # an allocation's chunks follow
                space.chunks.append([])
            continue
        if _ALLOCATION.fullmatch(line) or (s.startswith("The rest ") and "not shown" in s):
            continue
        c = _CHUNK.fullmatch(line)
        if c is None or not space.chunks:
            raise MemoryFileError("expected 'cumulative (N%); size; offset; values; shapes'",
                                  source=source, line=lineno, text=line)
        space.chunks[-1].append((int(c.group(1)), int(c.group(2)), c.group(3)))
    return UsageReport(source, [space])


@dataclass(slots=True)
class ValueInfo:
    """One value of the values file: where it is (positions) and who reads it (uses)."""

    id: int
    instruction: str
    index: tuple[int, ...]
    positions: list[str] = field(default_factory=list)       # 'name{index}' as written
    uses: list[tuple[str, int]] = field(default_factory=list)  # (instruction, operand)
    defined_by: str = ""       # the 'from instruction:' text, verbatim
    line: int = 0


@dataclass(slots=True)
class ValuesFile:
    source: str
    total_bytes_used: int | None
    values: dict[int, ValueInfo]


def _index(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in text[1:-1].split(",") if x) if text else ()


def parse_values(text: str, source: str = "<text>", first_line: int = 1) -> ValuesFile:
    """Read a ``*-buffer-assignment-values.txt`` (or the part of an older
    ``*-buffer-assignment.txt`` from ``Total bytes used`` on, which starts at line
    ``first_line`` of its file); raises MemoryFileError with file and line."""
    _check_end(text, source)
    total: int | None = None
    values: dict[int, ValueInfo] = {}
    current: ValueInfo | None = None
    part = ""
    seen_header = False
    for lineno, line in enumerate(text.split("\n"), start=first_line):
        if not line.strip():
            continue
        if line.startswith("HloLiveRange"):
            break               # JAX 0.4.30: its live ranges follow, in the same file
        glued = _GLUED.search(line) if not line.startswith("<") else None
        if glued is not None and current is not None:
            current.defined_by = line[:glued.start()].strip()[len("from instruction:"):].strip()
            line = glued.group(1)
        if line.startswith("<"):
            v = _VALUE.fullmatch(line.strip())
            if v is None:
                raise MemoryFileError("expected '<id name @color>'", source=source,
                                      line=lineno, text=line)
            current = ValueInfo(int(v.group(1)), v.group(2), _index(v.group(3)), line=lineno)
            values[current.id] = current
            part = ""
            continue
        s = line.strip()
        t = _TOTAL.fullmatch(s)
        if t and current is None:
            total = int(t.group(1))
            continue
        if s == "Used values:":
            seen_header = True
            continue
        if current is None:
            raise MemoryFileError("expected 'Total bytes used: N' and 'Used values:': not an "
                                  "XLA buffer-assignment values file", source=source,
                                  line=lineno, text=line)
        if s in ("positions:", "uses:"):
            part = s
        elif s.startswith("from instruction:"):
            current.defined_by = s[len("from instruction:"):].strip()
            part = ""
        elif part == "positions:":
            current.positions.append(s)
        elif part == "uses:":
            if s != "(none)":
                u = _USE.fullmatch(s)
                if u is None:
                    raise MemoryFileError("expected '<instruction>, operand N'",
                                          source=source, line=lineno, text=line)
                current.uses.append((u.group(1), int(u.group(2))))
        else:
            raise MemoryFileError("expected 'positions:', 'uses:' or 'from instruction:'",
                                  source=source, line=lineno, text=line)
    if not seen_header and not values:
        raise MemoryFileError("no 'Used values:': the file is empty or truncated",
                              source=source, line=1)
    return ValuesFile(source, total, values)
