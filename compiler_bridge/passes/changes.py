"""What a diff of two snapshots says: the result types of ``diff_modules``.

:class:`ModuleDiff` holds both modules, the pairing (old name <-> new name), what was
added, removed and changed (:class:`InstructionChange`, its ``kinds`` from
:data:`KINDS`), what happened to each fusion (:class:`FusionChange`), and the layout
changes and conflicts. Plain data the views read; no diffing happens here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo import HloModule

KINDS = ("renamed", "fused", "unfused", "moved", "opcode", "shape", "layout", "operands",
         "attributes", "fused_computation", "called_computation")


@dataclass(frozen=True, slots=True)
class InstructionRef:
    """Where an instruction lives in one snapshot."""

    name: str
    computation: str
    opcode: str
    fusion: str = ""      # the fusion instruction whose fused computation holds it

    @property
    def where(self) -> str:
        return f"fusion {self.fusion}" if self.fusion else self.computation

    def to_json(self) -> dict:
        out = {"name": self.name, "computation": self.computation, "opcode": self.opcode}
        if self.fusion:
            out["fusion"] = self.fusion
        return out


@dataclass(frozen=True, slots=True)
class InstructionChange:
    """A paired instruction that differs between the snapshots."""

    old: InstructionRef
    new: InstructionRef
    kinds: tuple[str, ...]                       # a subset of KINDS, in KINDS order
    details: dict[str, tuple[str, str]] = field(default_factory=dict)   # kind -> (old, new)

    def describe(self) -> str:
        """One line: ``sub.2 fused into fusion.3 (as sub.16); layout {0,1} -> {1,0}``."""
        parts = []
        for k in self.kinds:
            a, b = self.details.get(k, ("", ""))
            if k == "renamed":
                continue
            if k == "fused":
                parts.append(f"fused into {b}")
            elif k == "unfused":
                parts.append(f"taken out of {a} into {b}")
            elif k == "moved":
                parts.append(f"moved from {a} to {b}")
            elif k == "attributes":
                parts.append(f"attributes changed: {a}")
            elif k in ("fused_computation", "called_computation"):
                parts.append(f"{k.replace('_', ' ')}: {b}")
            else:
                parts.append(f"{k} {a} -> {b}")
        if "renamed" in self.kinds:
            if any(k in self.kinds for k in ("fused", "moved", "unfused")):
                parts[0] += f" (as {self.new.name})"
            else:
                parts.insert(0, f"renamed to {self.new.name}")
        return f"{self.old.name} " + "; ".join(parts)

    def to_json(self) -> dict:
        return {"old": self.old.to_json(), "new": self.new.to_json(), "kinds": list(self.kinds),
                "details": {k: list(v) for k, v in self.details.items()},
                "text": self.describe()}


@dataclass(frozen=True, slots=True)
class Move:
    """One instruction moving into or out of a fusion."""

    old: str          # name in the older snapshot
    new: str          # name in the newer snapshot ('' when removed)
    other: str        # where it came from (absorbed) or went (released): a fusion or computation


@dataclass(frozen=True, slots=True)
class FusionChange:
    """What happened to one fusion: created, grew, shrank, split, merged, dissolved."""

    old: str                      # the fusion instruction in the older snapshot ('' if new)
    new: str                      # ... in the newer one ('' if gone)
    # 'created' | 'grew' | 'shrank' | 'merged' | 'split' | 'changed' | 'dissolved'
    status: str
    absorbed: tuple[Move, ...] = ()    # instructions that moved in (other = from)
    released: tuple[Move, ...] = ()    # instructions that moved out (other = to)
    added: tuple[str, ...] = ()        # new instructions inside that pair with nothing
    removed: tuple[str, ...] = ()      # old instructions inside that pair with nothing
    copied: tuple[Move, ...] = ()      # copies of instructions that stay where they were

    def describe(self) -> str:
        name = self.new or self.old
        parts = [f"{name} {self.status}"]
        if self.absorbed:
            srcs = sorted({m.other for m in self.absorbed})
            names = ", ".join(m.old for m in self.absorbed[:6])
            parts.append(f"took in {len(self.absorbed)} ({names}"
                         f"{', …' if len(self.absorbed) > 6 else ''}) from {', '.join(srcs[:4])}")
        if self.released:
            dsts = sorted({m.other for m in self.released})
            parts.append(f"gave {len(self.released)} to {', '.join(dsts[:4])}")
        if self.copied:
            parts.append(f"copied in {len(self.copied)} ("
                         f"{', '.join(m.old for m in self.copied[:6])}"
                         f"{', …' if len(self.copied) > 6 else ''})")
        if self.added:
            parts.append(f"{len(self.added)} new inside")
        if self.removed:
            parts.append(f"{len(self.removed)} removed inside")
        return "; ".join(parts)

    def to_json(self) -> dict:
        return {"old": self.old, "new": self.new, "status": self.status,
                "absorbed": [[m.old, m.new, m.other] for m in self.absorbed],
                "released": [[m.old, m.new, m.other] for m in self.released],
                "added": list(self.added), "removed": list(self.removed),
                "copied": [[m.old, m.new, m.other] for m in self.copied],
                "text": self.describe()}


@dataclass(frozen=True, slots=True)
class LayoutChangeEntry:
    """A tensor that the newer snapshot stores in another layout."""

    name: str              # in the newer snapshot
    computation: str
    old_shape: str
    new_shape: str
    bytes: int


@dataclass(frozen=True, slots=True)
class LayoutConflict:
    """A copy/transpose added to hand a tensor over in the layout its users want."""

    instruction: str       # the added copy/transpose
    computation: str
    opcode: str
    operand: str           # the tensor whose layout did not suit
    from_shape: str
    to_shape: str
    bytes: int             # bytes the op moves (its output)
    users: tuple[str, ...]
    reason: str

    def to_json(self) -> dict:
        return {"instruction": self.instruction, "computation": self.computation,
                "opcode": self.opcode, "operand": self.operand, "from": self.from_shape,
                "to": self.to_shape, "bytes": self.bytes, "users": list(self.users)}


@dataclass
class ModuleDiff:
    """Result of ``diff_modules``; holds both modules for the views."""

    old: HloModule
    new: HloModule
    old_to_new: dict[str, str]                 # every pair, old name -> new name
    new_to_old: dict[str, str]
    added: list[InstructionRef]
    removed: list[InstructionRef]
    changed: list[InstructionChange]
    computations_added: list[str]
    computations_removed: list[str]
    computations_renamed: list[tuple[str, str]]
    computation_map: dict[str, str]            # old computation -> new computation
    fusions: list[FusionChange]
    layout_changes: list[LayoutChangeEntry]
    layout_conflicts: list[LayoutConflict]
    pairs_by: dict[str, int] = field(default_factory=dict)   # 'name' / 'clone' / 'value' -> count
    # added instruction -> the older instruction it is a copy of (a producer duplicated
    # into several fusions pairs with one copy; the others are added, copies of it)
    duplicates: dict[str, str] = field(default_factory=dict)
    # module header attributes that differ: key -> (old, new) ('' when absent)
    header_changes: dict[str, tuple[str, str]] = field(default_factory=dict)
    # computations (newer names) whose instructions kept their pairs but changed order
    reordered: list[str] = field(default_factory=list)
    _added_set: set[str] | None = None
    _changed_by_new: dict[str, InstructionChange] | None = None
    _changed_by_old: dict[str, InstructionChange] | None = None
    _removed_by_name: dict[str, InstructionRef] | None = None

    # -- lookups the views use
    @property
    def is_empty(self) -> bool:
        """No instruction or computation changed (the header or the order may have)."""
        return not (self.added or self.removed or self.changed or self.computations_added
                    or self.computations_removed)

    def is_added(self, new_name: str) -> bool:
        if self._added_set is None:
            self._added_set = {r.name for r in self.added}
        return new_name in self._added_set

    def change_of_new(self, new_name: str) -> InstructionChange | None:
        if self._changed_by_new is None:
            self._changed_by_new = {c.new.name: c for c in self.changed}
        return self._changed_by_new.get(new_name)

    def change_of_old(self, old_name: str) -> InstructionChange | None:
        if self._changed_by_old is None:
            self._changed_by_old = {c.old.name: c for c in self.changed}
        return self._changed_by_old.get(old_name)

    def removed_ref(self, old_name: str) -> InstructionRef | None:
        if self._removed_by_name is None:
            self._removed_by_name = {r.name: r for r in self.removed}
        return self._removed_by_name.get(old_name)

    def fused_into(self) -> dict[str, str]:
        """Old instruction -> the fusion instruction (newer snapshot) it was fused into."""
        return {c.old.name: c.new.fusion for c in self.changed
                if "fused" in c.kinds or ("moved" in c.kinds and c.new.fusion)}

    def summary(self) -> dict:
        return {
            "added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
            "computations_added": len(self.computations_added),
            "computations_removed": len(self.computations_removed),
            "fused": sum(1 for c in self.changed if "fused" in c.kinds),
            "layout_changes": len(self.layout_changes),
            "layout_conflicts": len(self.layout_conflicts),
            "bytes_moved": sum(c.bytes for c in self.layout_conflicts),
            "reordered": len(self.reordered),
            "header_changes": sorted(self.header_changes),
        }

    def to_json(self) -> dict:
        return {
            "old": self.old.name, "new": self.new.name, "summary": self.summary(),
            "added": [r.to_json() for r in self.added],
            "removed": [r.to_json() for r in self.removed],
            "changed": [c.to_json() for c in self.changed],
            "computations_added": self.computations_added,
            "computations_removed": self.computations_removed,
            "computations_renamed": [list(p) for p in self.computations_renamed],
            "fusions": [f.to_json() for f in self.fusions],
            "layout_changes": [{"name": c.name, "computation": c.computation, "old": c.old_shape,
                                "new": c.new_shape, "bytes": c.bytes} for c in self.layout_changes],
            "layout_conflicts": [c.to_json() for c in self.layout_conflicts],
        }
