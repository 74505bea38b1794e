"""The side-by-side text diff of two snapshots: per computation, instruction lines
aligned by ``diff_modules``' pairing, with notes on moves, runs of unchanged lines folded.
"""

from __future__ import annotations

import difflib

from .changes import ModuleDiff
from ..steps import ComputationTextDiff, TextRow, fold_rows
from ..hlo import HloComputation


def text_diff(diff: ModuleDiff, context: int = 3, computations: set[str] | None = None
              ) -> list[ComputationTextDiff]:
    """Per computation, the two snapshots' instruction lines side by side.

    Lines are aligned by the pairing (so a renamed instruction sits beside its old self),
    runs of more than ``2 * context + 1`` unchanged lines fold into one 'fold' row, and
    unchanged computations come back with ``status='same'`` and no rows. ``computations``
    limits the work to these names (either snapshot's), e.g. the one on screen.
    """
    old, new = diff.old, diff.new
    back = {v: k for k, v in diff.computation_map.items()}
    out: list[ComputationTextDiff] = []
    emitted_new: set[str] = set()
    where_new: dict[str, str] = {}
    where_old: dict[str, str] = {}
    for c in diff.changed:
        if any(k in c.kinds for k in ("fused", "moved", "unfused")):
            where_old[c.old.name] = f"→ {c.new.where} as {c.new.name}" \
                if c.old.name != c.new.name else f"→ {c.new.where}"
            where_new[c.new.name] = f"← {c.old.name} from {c.old.where}"

    def wanted(*names: str) -> bool:
        return computations is None or any(n in computations for n in names if n)

    for oc in old.computations:
        nc_name = diff.computation_map.get(oc.name)
        if nc_name is None:
            if wanted(oc.name):
                rows = tuple(TextRow("removed", i.line, i.text,
                                     old_note=where_old.get(i.name, ""))
                             for i in oc.instructions)
                out.append(ComputationTextDiff(oc.name, "", "removed", rows, len(oc), 0,
                                               removed=len(oc)))
            continue
        nc = new.computation(nc_name)
        emitted_new.add(nc.name)
        if wanted(oc.name, nc.name):
            out.append(_computation_rows(diff, oc, nc, context, where_old, where_new))
    for nc in new.computations:
        if nc.name in emitted_new or nc.name in back:
            continue
        if wanted(nc.name):
            rows = tuple(TextRow("added", new_line=i.line, new_text=i.text,
                                 note=where_new.get(i.name, "")) for i in nc.instructions)
            out.append(ComputationTextDiff("", nc.name, "added", rows, 0, len(nc), added=len(nc)))
    return out


def _computation_rows(diff: ModuleDiff, oc: HloComputation, nc: HloComputation, context: int,
                      where_old: dict[str, str], where_new: dict[str, str]) -> ComputationTextDiff:
    o2n = diff.old_to_new
    n2o = diff.new_to_old
    a = [i.name for i in oc.instructions]
    b = [n2o.get(i.name, "\0" + i.name) for i in nc.instructions]
    if a == b and all(x.text == y.text for x, y in zip(oc.instructions, nc.instructions)):
        return ComputationTextDiff(oc.name, nc.name, "same", (), len(a), len(b))
    rows: list[TextRow] = []
    n_add = n_rem = n_chg = 0
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for u, v in zip(oc.instructions[i1:i2], nc.instructions[j1:j2]):
                if u.text == v.text:
                    rows.append(TextRow("same", u.line, u.text, v.line, v.text))
                else:
                    n_chg += 1
                    ch = diff.change_of_new(v.name)
                    rows.append(TextRow("changed", u.line, u.text, v.line, v.text,
                                        ch.describe() if ch else ""))
            continue
        olds = oc.instructions[i1:i2]
        news = nc.instructions[j1:j2]
        n_rem += sum(1 for x in olds if x.name not in o2n)
        n_add += sum(1 for y in news if y.name not in n2o)
        for k in range(max(len(olds), len(news))):
            x = olds[k] if k < len(olds) else None
            y = news[k] if k < len(news) else None
            # each line's note stays with its own line: x and y sit side by side only
            # by position, and are usually unrelated
            old_note = new_note = ""
            if x is not None:
                if x.name in where_old:
                    old_note = where_old[x.name]
                elif x.name in o2n:           # stays in this computation, elsewhere
                    partner = nc.get(o2n[x.name])
                    old_note = f"↕ now at line {partner.line}" if partner is not None \
                        else f"→ {o2n[x.name]}"
            if y is not None:
                if y.name in where_new:
                    new_note = where_new[y.name]
                elif y.name in n2o and x is None:
                    partner = oc.get(n2o[y.name])
                    new_note = f"↕ was at line {partner.line}" if partner is not None \
                        else f"← {n2o[y.name]}"
            if x is not None and y is not None:
                rows.append(TextRow("replace", x.line, x.text, y.line, y.text, new_note,
                                    old_note=old_note))
            elif x is not None:
                rows.append(TextRow("removed", x.line, x.text, old_note=old_note))
            elif y is not None:
                rows.append(TextRow("added", new_line=y.line, new_text=y.text, note=new_note))
    return ComputationTextDiff(oc.name, nc.name, "changed", tuple(fold_rows(rows, context)),
                               len(a), len(b), n_add, n_rem, n_chg)
