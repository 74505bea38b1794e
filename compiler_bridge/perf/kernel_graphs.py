"""A kernel as a graph for the graph network (``graph_model``): node 0 the kernel, then
the instructions it fuses nearest its root (at most ``MAX_NODES``), each its opcode
(an index in ``features.VOCAB``) beside its shape features (``NODE_FEATURES``), edges
operand -> user.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .costs import fused_instructions
from .execution import CONTROL_FLOW
from .features import VOCAB_INDEX, kernel_token, log_amount
from ..hlo import HloInstruction, HloModule
from ..targets import is_single_kernel_call

MAX_NODES = 48          # a kernel's graph keeps the instructions nearest its root
NODE_FEATURES = ("log_elements", "rank", "log_minor_dim", "log_operands", "is_root",
                 "is_parameter", "is_constant", "physical_layout", "dtype_f32",
                 "dtype_half", "dtype_int", "is_kernel")


@dataclass(frozen=True)
class KernelGraph:
    """A kernel's instruction graph: node 0 is the kernel itself (its opcode token),
    then every instruction it fuses (nested computations included; for a kernel that
    fuses nothing, its operands as parameter nodes). Edges run operand -> user; a
    called computation's root feeds its caller."""

    ops: np.ndarray        # [nodes] int32 index in VOCAB
    feats: np.ndarray      # [nodes, len(NODE_FEATURES)] float32
    src: np.ndarray        # [edges] int32
    dst: np.ndarray        # [edges] int32


def _node_features(i: HloInstruction, is_kernel: bool = False,
                   as_parameter: bool = False) -> list[float]:
    leaves = [s for s in i.shape.leaves() if s.is_array]
    out = leaves[0] if leaves else None
    dims = out.dimensions if out is not None else ()
    lay = out.layout if out is not None else None
    minor = dims[lay.minor_to_major[0]] if lay is not None and lay.minor_to_major and \
        lay.minor_to_major[0] < len(dims) else (dims[-1] if dims else 1)
    et = out.element_type if out is not None else ""
    return [log_amount(sum(s.element_count for s in leaves)) / 4.0, len(dims) / 4.0,
            log_amount(minor) / 4.0, log_amount(len(i.operand_names)) / 2.0,
            float(i.is_root and not as_parameter), float(as_parameter or i.opcode == "parameter"),
            float(i.opcode == "constant"),
            float(lay is not None and len(dims) > 1 and not lay.is_default),
            float(et == "f32"), float(et in ("bf16", "f16")),
            float(et.startswith(("s", "u")) or et == "pred"), float(is_kernel)]


def kernel_graph(inst: HloInstruction, module: HloModule) -> KernelGraph:
    """The instruction graph of one kernel (at most MAX_NODES nodes)."""
    feats: list[list[float]] = [_node_features(inst, is_kernel=True)]
    ops = [VOCAB_INDEX[kernel_token(inst.opcode)]]
    edges: list[tuple[int, int]] = []
    if not (inst.opcode in CONTROL_FLOW and not is_single_kernel_call(inst)):
        # the instructions nearest the roots: the last ones of each computation
        fused = fused_instructions(inst, module)
        top = set(inst.called_names)
        nested = [f for f in fused if f.computation is None or f.computation.name not in top]
        inner = {id(f) for f in nested}
        nodes = (nested + [f for f in fused if id(f) not in inner])[-(MAX_NODES - 1):]
        index: dict[str, int] = {}
        for sub in nodes:
            index[sub.name] = len(ops)
            ops.append(VOCAB_INDEX.get(sub.opcode, VOCAB_INDEX["<other>"]))
            feats.append(_node_features(sub))

        def root_node(name: str) -> int | None:
            comp = module.get_computation(name)
            r = comp.root if comp is not None else None
            return index.get(r.name) if r is not None else None
        for sub in nodes:
            for op in sub.operand_names:
                j = index.get(op)
                if j is not None:
                    edges.append((j, index[sub.name]))
            for c in sub.called_names:
                j = root_node(c)
                if j is not None:
                    edges.append((j, index[sub.name]))
        for c in inst.called_names:
            j = root_node(c)
            if j is not None:
                edges.append((j, 0))
    if len(ops) == 1 and inst.opcode not in CONTROL_FLOW:
        for operand in inst.operands[:MAX_NODES - 1]:
            ops.append(VOCAB_INDEX["parameter"])
            feats.append(_node_features(operand, as_parameter=True))
            edges.append((len(ops) - 1, 0))
    src = np.asarray([e[0] for e in edges], np.int32)
    dst = np.asarray([e[1] for e in edges], np.int32)
    return KernelGraph(np.asarray(ops, np.int32), np.asarray(feats, np.float32), src, dst)
