"""Facts derived from a parsed module that several views and the cost models need (no
drawing here): which instructions change layout, and what a value reaches through the
instructions that only forward it (tuple, get-tuple-element, bitcast)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from .model import HloInstruction, HloModule
from .shapes import Shape


@dataclass(frozen=True, slots=True)
class LayoutChange:
    """An instruction that moves data to a new layout (or relabels it, for a bitcast)."""

    instruction: str
    computation: str
    opcode: str
    operand_shape: str
    shape: str
    bytes: int
    reason: str


def _physical_transpose(inst: HloInstruction, operand: Shape) -> bool:
    """Does this transpose move data, or is it a relabelling of the same bytes?"""
    dims = inst.dimensions or ()
    out = inst.shape
    if out.layout is None or operand.layout is None or len(dims) != out.rank:
        return True
    # output dim j is operand dim dims[j]; same memory order <=> same major-to-minor dims
    mapped = tuple(dims[d] for d in out.layout.minor_to_major)
    return mapped != operand.layout.minor_to_major


def layout_change(inst: HloInstruction) -> LayoutChange | None:
    """Why this instruction changes layout, or None."""
    if inst.opcode not in ("copy", "transpose", "bitcast") or not inst.operand_names:
        return None
    ops = inst.operands
    if not ops:
        return None
    src, out = ops[0].shape, inst.shape
    if not (src.is_array and out.is_array) or src.layout is None or out.layout is None:
        return None
    reason = ""
    if inst.opcode == "copy":
        if src.layout.minor_to_major != out.layout.minor_to_major or \
                src.layout.tiles != out.layout.tiles:
            reason = f"copy changes layout {src.layout} -> {out.layout}"
        elif src.layout.memory_space != out.layout.memory_space:
            reason = f"copy moves memory space S({src.layout.memory_space}) -> S({out.layout.memory_space})"
    elif inst.opcode == "transpose":
        if _physical_transpose(inst, src):
            reason = f"transpose moves data {src} -> {out}"
    elif inst.opcode == "bitcast":
        if src.dimensions == out.dimensions and src.layout.minor_to_major != out.layout.minor_to_major:
            reason = f"bitcast relabels layout {src.layout} -> {out.layout}"
    if not reason:
        return None
    comp = inst.computation.name if inst.computation is not None else ""
    return LayoutChange(inst.name, comp, inst.opcode, str(src), str(out), out.byte_size, reason)


def layout_changes(module: HloModule) -> list[LayoutChange]:
    """Every layout-changing copy/transpose/bitcast in the module, in file order."""
    out = []
    for inst in module.instructions():
        if inst.opcode in ("copy", "transpose", "bitcast"):
            change = layout_change(inst)
            if change is not None:
                out.append(change)
    return out


def walk_through(start: Iterable[HloInstruction], passing: Collection[str],
                 upward: bool = False) -> list[HloInstruction]:
    """The instructions reached from ``start`` (themselves included) whose opcode is not
    in ``passing``, walking through those that are: along users, or along operands when
    ``upward``. Each is visited once, depth first, last pushed first (the order the
    callers' results have always had). ``passing`` differs by caller: a kernel's
    consumers see through tuples, get-tuple-elements and bitcasts; a feature of its
    neighbours stops at a tuple."""
    out: list[HloInstruction] = []
    stack = list(start)
    seen: set[str] = set()
    while stack:
        cur = stack.pop()
        if cur.name in seen:
            continue
        seen.add(cur.name)
        if cur.opcode in passing:
            stack.extend(cur.operands if upward else cur.users)
        else:
            out.append(cur)
    return out
