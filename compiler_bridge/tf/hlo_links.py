"""TF node <-> HLO instruction: XLA's TF bridge writes the TF node name into each HLO
instruction's ``metadata={op_name=...}``; a fusion stands for the nodes of the
instructions it fused."""

from __future__ import annotations

from collections.abc import Collection

from ..hlo import HloInstruction, HloModule


def _fused_names(hlo: HloModule, inst: HloInstruction, constants: bool = True) -> list[str]:
    out: list[str] = []
    for callee in inst.called_names if inst.opcode == "fusion" else ():
        comp = hlo.get_computation(callee)
        if comp is None:
            continue
        for i in comp.instructions:
            if i.op_name and (constants or i.opcode != "constant"):
                out.append(i.op_name)
            out.extend(_fused_names(hlo, i, constants))
    return out


def instructions_of(hlo: HloModule, tf_name: str, body: Collection[str] = ()) -> list[str]:
    """The ENTRY instructions that come from the TF node ``tf_name``: named after it (or,
    for a call node, after a node of ``body``, the called function's), or fusions holding
    an instruction other than a constant that is."""
    names = {tf_name, *body}

    def named(constants: bool) -> list[str]:
        return [inst.name for inst in hlo.entry.instructions
                if inst.op_name in names or names.intersection(_fused_names(hlo, inst,
                                                                            constants))]
    # XLA's CSE keeps one of equal constants, with its node's name, and fusion copies it
    # into every user: a fusion holding only a constant of the node is another node's
    # (a Const node's, or one whose HLO is all constants, has only those)
    return named(False) or named(True)


def tf_node_of(hlo: HloModule, instruction: str) -> str:
    """The TF node an HLO instruction comes from ('' when its metadata names none): its
    own op_name, else (a fusion) that of its root, else of the first fused instruction."""
    inst = hlo.find(instruction)
    if inst is None:
        return ""
    if inst.op_name and inst.op_name not in ("XLA_Args", "XLA_Retvals"):
        return inst.op_name
    names = [n for n in _fused_names(hlo, inst) if n not in ("XLA_Args", "XLA_Retvals")]
    if inst.opcode == "fusion" and inst.called_names:
        comp = hlo.get_computation(inst.called_names[0])
        root = comp.root if comp is not None else None
        if root is not None and root.op_name:
            return root.op_name
    return names[0] if names else ""
