"""The collectives of a module: which instructions move data between devices, and how.

A collective is one of XLA's seven collective opcodes, run synchronously (``all-gather``) or as
an asynchronous pair (``all-gather-start`` ... ``all-gather-done``). XLA has its own start/done
opcodes for all-reduce, all-gather and collective-permute; every other collective goes async
through ``async-start``/``async-done`` wrappers, which the parser names after the op they wrap
(``reduce-scatter-start``), so one rule covers both. Such a wrapper carries no
``replica_groups`` of its own: its groups are the wrapped op's (the root of the computation it
``calls``), and that op is listed once, as the pair, not again as a sync collective.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..hlo import HloInstruction, HloModule, Shape
from .groups import device_groups

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
    # the op an ``async-start`` wraps (its groups, channel): None for the rest
    wrapped: HloInstruction | None = None

    @property
    def op(self) -> HloInstruction:
        """The instruction that carries the collective's attributes (groups, pairs)."""
        return self.wrapped or self.instruction

    @property
    def is_async(self) -> bool:
        return self.done is not None

    @property
    def result_shape(self) -> Shape:
        """What the collective yields on one device: the ``-done``'s shape for a pair (a
        ``-start`` holds its operands and context beside the result)."""
        return (self.done or self.instruction).shape

    @property
    def result_bytes(self) -> int:
        return self.result_shape.byte_size

    def groups(self, num_devices: int) -> tuple[tuple[int, ...], ...]:
        """The device groups (a collective-permute: its source-target pairs)."""
        return device_groups(self.op, num_devices)

    def group_size(self, num_devices: int) -> int:
        if self.kind == "collective-permute":
            return 2
        groups = self.groups(num_devices)
        return max((len(g) for g in groups), default=0)

    def sent_bytes(self, num_devices: int) -> int:
        """Bytes one device sends, by the standard formulas (``n``: the group size, ``B``:
        :attr:`result_bytes`): all-reduce ``2(n-1)/n B`` (ring: reduce-scatter then
        all-gather), all-gather and all-to-all ``(n-1)/n B``, reduce-scatter ``(n-1) B`` (its
        input is ``n`` results), collective-permute and collective-broadcast ``B`` (a device
        whose pairs all point at itself sends nothing). Each device receives as much."""
        b = self.result_bytes
        if self.kind in ("collective-permute", "collective-broadcast"):
            groups = self.groups(num_devices)
            moves = any(len(set(g)) > 1 for g in groups) if self.kind == \
                "collective-permute" else self.group_size(num_devices) > 1
            return b if moves else 0
        n = self.group_size(num_devices)
        if n <= 1:
            return 0
        if self.kind == "all-reduce":
            return 2 * (n - 1) * b // n
        if self.kind == "reduce-scatter":
            return (n - 1) * b
        return (n - 1) * b // n            # all-gather, all-to-all, ragged-all-to-all


def collectives(module: HloModule) -> list[Collective]:
    """Every collective of ``module`` in file order, each async pair once (at its start; the
    done is the start's user that ends the pair)."""
    wrapped_by: dict[str, HloInstruction] = {}
    for inst in module.instructions():
        if inst.opcode.endswith("-start"):
            for name in inst.called_names:
                callee = module.get_computation(name)
                root = callee.root if callee is not None else None
                if root is not None and root.opcode in SYNC:
                    wrapped_by[inst.name] = root
    wrappers = {w.computation.name for w in wrapped_by.values() if w.computation is not None}
    out = []
    for comp in module.computations:
        if comp.name in wrappers:
            continue                # the op an async-start wraps: listed as that pair
        for inst in comp.instructions:
            what = collective_of(inst.opcode)
            if what is None or what[1] in ("update", "done"):
                continue
            kind, part = what
            done = _done_of(inst, kind) if part == "start" else None
            out.append(Collective(inst, kind, done, wrapped_by.get(inst.name)))
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


def num_partitions(module: HloModule) -> int:
    """The devices a partitioned module runs on: ``num_partitions`` (times
    ``replica_count``) in its header; 1 when it names neither."""
    def header(key: str) -> int:
        m = re.fullmatch(r"\s*(\d+)\s*", module.attributes.get(key, "") or "")
        return int(m.group(1)) if m else 1
    return header("num_partitions") * header("replica_count")
