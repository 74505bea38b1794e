"""Pure view builders for a comparison of two compiles (``compiler_bridge.compare``):
how a pair was made, the counts side by side, opcode deltas, the flags diff, memory and
measured kernel rows, and the one-line summary. Nothing here reads files or touches
Streamlit; ``ui.compare`` places these on the page.
"""

from __future__ import annotations

from compiler_bridge import PairReport
from compiler_bridge.compare import FlagsDiff, ModuleComparison
from compiler_bridge.passes import ModuleDiff

from .stepper import human_bytes

HOW = {"name": "same name", "name+structure": "same name, closest shapes",
       "structure": "closest structure", "chosen": "chosen"}
MEMORY_KEYS = ("argument", "output", "temp", "alias", "peak")


def _delta(a: float | int | None, b: float | int | None) -> str:
    if a is None or b is None:
        return ""
    d = b - a
    if not d:
        return "="
    pct = f" ({100 * d / a:+.1f}%)" if a else ""
    return (f"{d:+,}" if isinstance(d, int) else f"{d:+,.1f}") + pct


def added_note(diff: ModuleDiff, name: str) -> str:
    """The inspector's word on an instruction this compile has and the baseline has not.
    A fusion made of instructions the baseline has says so, in the Fusions table's words
    (one source for both: issue 32, item 1)."""
    f = next((f for f in diff.fusions if f.new == name), None)
    if f is not None and (f.old or f.absorbed):
        return f"＋ A fusion of this compile, made of the baseline's instructions: {f.describe()}"
    return "＋ Not in the baseline: this compile added it."


def count_rows(c: ModuleComparison) -> list[dict]:
    """Instructions, fusions, computations, ENTRY instructions: baseline, this, change."""
    a, b = c.counts_a, c.counts_b
    rows = []
    for label, x, y in (("instructions", a.instructions, b.instructions),
                        ("fusions", a.fusions, b.fusions),
                        ("computations", a.computations, b.computations),
                        ("ENTRY instructions", a.entry_instructions, b.entry_instructions)):
        rows.append({"": label, "baseline": x, "this dump": y, "change": _delta(x, y)})
    return rows


def opcode_rows(c: ModuleComparison, limit: int = 40) -> list[dict]:
    return [{"opcode": op, "baseline": x, "this dump": y, "change": _delta(x, y)}
            for op, (x, y) in list(c.opcode_delta.items())[:limit]]


def flag_rows(f: FlagsDiff) -> list[dict]:
    rows = [{"flag": k, "baseline": a, "this dump": b} for k, a, b in f.changed]
    for flag in f.only_a:
        name, _, value = flag[2:].partition("=")
        rows.append({"flag": name, "baseline": value, "this dump": "(not set)"})
    for flag in f.only_b:
        name, _, value = flag[2:].partition("=")
        rows.append({"flag": name, "baseline": "(not set)", "this dump": value})
    return rows


def memory_rows(r: PairReport) -> list[dict]:
    a, b = r.memory_a or {}, r.memory_b or {}
    out = []
    for k in MEMORY_KEYS:
        x, y = a.get(k), b.get(k)
        if x is None and y is None:
            continue
        out.append({"bytes": k, "baseline": human_bytes(x) if x is not None else "?",
                    "this dump": human_bytes(y) if y is not None else "?",
                    "change": _delta(x, y)})
    return out


def kernel_rows(r: PairReport, limit: int = 200) -> list[dict]:
    """Measured kernels, biggest change first: each side's name and median µs."""
    out = []
    for k in r.kernels[:limit]:
        out.append({"baseline kernel": k.name_a or "(none)", "this dump": k.name_b or "(none)",
                    "opcode": k.opcode,
                    "baseline µs": round(k.us_a, 2) if k.us_a is not None else None,
                    "µs": round(k.us_b, 2) if k.us_b is not None else None,
                    "change µs": round(k.delta_us, 2)})
    return out


def summary(r: PairReport) -> str:
    """'414 → 403 instructions, 39 → 35 fusions · +0 −11 ~4 · step 168 → 295 µs (+76%)'."""
    c = r.comparison
    d = c.diff.summary()
    parts = [f"{c.counts_a.instructions:,} → {c.counts_b.instructions:,} instructions",
             f"{c.counts_a.fusions:,} → {c.counts_b.fusions:,} fusions",
             f"+{d['added']:,} −{d['removed']:,} ~{d['changed']:,}"]
    if r.step_us is not None:
        pct = r.slower_pct()
        parts.append(f"step {r.step_us[0]:,.1f} → {r.step_us[1]:,.1f} µs"
                     + (f" ({pct:+.1f}%)" if pct is not None else ""))
    if c.identical:
        parts.append("the same instructions")
    return " · ".join(parts)
