"""The rows of a side-by-side text diff: one block (an HLO computation, a TF node) per
``ComputationTextDiff``, its lines aligned, runs of unchanged lines folded."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextRow:
    """One row of a side-by-side diff. ``kind``: 'same' | 'changed' | 'removed' | 'added'
    | 'replace' (a removed line beside an added one) | 'fold' (``folded`` same rows)."""

    kind: str
    old_line: int = 0          # 1-based line in the older file (0: none)
    old_text: str = ""
    new_line: int = 0
    new_text: str = ""
    note: str = ""             # the new line's (or the row's) note: '← sub.2 from main.17'...
    folded: int = 0
    old_note: str = ""         # the old line's note: '→ fusion fusion.3 as sub.16'...


@dataclass(frozen=True, slots=True)
class ComputationTextDiff:
    """One block of a text diff: an HLO computation, or a TF node's text."""

    old: str                   # the block's name in the older snapshot ('' if added)
    new: str                   # ... in the newer one ('' if removed)
    status: str                # 'same' | 'changed' | 'added' | 'removed'
    rows: tuple[TextRow, ...]  # empty for 'same' (folded)
    old_count: int             # lines (HLO: instructions) on each side
    new_count: int
    added: int = 0
    removed: int = 0
    changed: int = 0

    @property
    def title(self) -> str:
        if self.old and self.new and self.old != self.new:
            return f"{self.old} → {self.new}"
        return self.new or self.old


def fold_rows(rows: list[TextRow], context: int) -> list[TextRow]:
    """Runs of 'same' rows longer than ``2 * context + 1`` folded into one 'fold' row."""
    out: list[TextRow] = []
    k = 0
    n = len(rows)
    while k < n:
        if rows[k].kind != "same":
            out.append(rows[k])
            k += 1
            continue
        j = k
        while j < n and rows[j].kind == "same":
            j += 1
        run = rows[k:j]
        head = context if k > 0 else 0
        tail = context if j < n else 0
        if len(run) > head + tail + 1:
            out.extend(run[:head])
            out.append(TextRow("fold", folded=len(run) - head - tail))
            out.extend(run[len(run) - tail:])
        else:
            out.extend(run)
        k = j
    return out


def line_rows(old: list[str], new: list[str], context: int = 3
              ) -> tuple[list[TextRow], int, int, int]:
    """Two texts' lines side by side, aligned by difflib: (rows, added, removed, changed),
    a removed line beside an added one counted as changed."""
    rows: list[TextRow] = []
    added = removed = changed = 0
    sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            rows.extend(TextRow("same", i + 1, old[i], j + 1, new[j])
                        for i, j in zip(range(i1, i2), range(j1, j2)))
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            if i < i2 and j < j2:
                rows.append(TextRow("replace", i + 1, old[i], j + 1, new[j]))
                changed += 1
            elif i < i2:
                rows.append(TextRow("removed", i + 1, old[i]))
                removed += 1
            else:
                rows.append(TextRow("added", new_line=j + 1, new_text=new[j]))
                added += 1
    return fold_rows(rows, context), added, removed, changed
