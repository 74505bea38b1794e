"""The collectives of a module: which instructions move data between devices, and how.

A collective is one of XLA's seven collective opcodes, run synchronously (``all-gather``) or as
an asynchronous pair (``all-gather-start`` ... ``all-gather-done``). XLA has its own start/done
opcodes for all-reduce, all-gather and collective-permute; every other collective goes async
through ``async-start``/``async-done`` wrappers, which the parser names after the op they wrap
(``reduce-scatter-start``), so one rule covers both.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hlo import HloInstruction, HloModule

SYNC = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "ragged-all-to-all",
                  "collective-permute", "collective-broadcast"})
# the opcodes XLA itself spells with -start / -done (the rest are async-start wrappers)
NATIVE_ASYNC = ("all-reduce", "all-gather", "collective-permute")
COLLECTIVE_OPCODES = SYNC | {f"{op}-{part}" for op in NATIVE_ASYNC for part in ("start", "done")}
_PARTS = ("-start", "-update", "-done")


def collective_of(opcode: str) -> tuple[str, str] | None:
    """The collective an opcode performs and its part: ``('all-gather', '')`` for a
    synchronous one, ``('reduce-scatter', 'start')`` for half of an async pair; None for any
    other opcode."""
    if opcode in SYNC:
        return opcode, ""
    for part in _PARTS:
        if opcode.endswith(part) and opcode[: -len(part)] in SYNC:
            return opcode[: -len(part)], part[1:]
    return None


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective of a module: the instruction that starts it (the sync op itself, or
    the ``-start`` of a pair) and, for a pair, the ``-done`` that waits for it."""

    instruction: HloInstruction
    kind: str                      # the collective: 'all-reduce', 'all-to-all', ...
    done: HloInstruction | None    # None: synchronous

    @property
    def is_async(self) -> bool:
        return self.done is not None


def collectives(module: HloModule) -> list[Collective]:
    """Every collective of ``module`` in file order, each async pair once (at its start; the
    done is the start's user that ends the pair)."""
    out = []
    for comp in module.computations:
        for inst in comp.instructions:
            what = collective_of(inst.opcode)
            if what is None or what[1] in ("update", "done"):
                continue
            kind, part = what
            done = None
            if part == "start":
                done = _done_of(inst, kind)
            out.append(Collective(inst, kind, done))
    return out


def _done_of(start: HloInstruction, kind: str) -> HloInstruction | None:
    """The ``-done`` that ends the pair ``start`` opens, following ``-update`` steps."""
    at = start
    while True:
        nxt = [u for u in at.users if u.opcode in (f"{kind}-update", f"{kind}-done")]
        if not nxt:
            return None
        at = nxt[0]
        if at.opcode == f"{kind}-done":
            return at
