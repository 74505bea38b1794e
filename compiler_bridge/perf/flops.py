"""Flops and transcendentals of one instruction, nested computations included, counted
as XLA's ``HloCostAnalysis`` counts them: one flop per element of an elementwise op,
transcendentals apart, ``2 * M * N * K`` for a dot, XLA's ``GetConvolutionFlops`` for a
convolution (positions that land on padding or dilation holes do not count), the
reducer's ops per combine, library custom calls (cuBLAS, cuDNN, attention) by their shapes.
"""

from __future__ import annotations

import math
import re

from .execution import (CONTROL_FLOW, DATA_MOVEMENT, ELEMENTWISE, FREE_OPCODES, TRANSCENDENTAL,
                        trip_count)
from ..hlo import HloInstruction, HloModule, Shape
from ..targets import MATMUL_CUSTOM_CALLS, gemm_lhs_contracting, is_single_kernel_call

def array_elements(shape: Shape) -> int:
    return sum(s.element_count for s in shape.leaves() if s.is_array)


def _apply_ops(module: HloModule | None, name: str | None, least: int = 1) -> int:
    """Work per application of a reducer/comparator computation (at least ``least``)."""
    if module is None or not name:
        return 1
    comp = module.get_computation(name)
    if comp is None:
        return 1
    n = sum(1 for i in comp.instructions if i.opcode not in FREE_OPCODES)
    return max(n, least)


def _dot_flops(lhs: Shape, out: Shape, lhs_contracting: tuple[int, ...]) -> float:
    k = 1
    for d in lhs_contracting:
        if 0 <= d < lhs.rank:
            k *= max(lhs.dimensions[d], 0)
    return 2.0 * array_elements(out) * k


def _conv_flops(inst: HloInstruction, ops: list[HloInstruction]) -> float:
    """XLA's ``GetConvolutionFlops``: 2 * input features per group * output features *
    batch per batch group * the product over spatial dimensions of the (output, kernel)
    position pairs that land on a real input element (padding and dilation holes do not
    count): a strided or padded convolution, and the backward ones, do fewer than
    2 * output elements * kernel size."""
    if len(ops) < 2:
        return 0.0
    lhs, rhs = ops[0].shape, ops[1].shape
    out = inst.shape.leaves()[0]
    labels = inst.dim_labels
    if labels is None or len(labels.lhs) != lhs.rank or len(labels.rhs) != rhs.rank \
            or len(labels.output) != out.rank or "f" not in labels.lhs \
            or "b" not in labels.lhs or "f" not in labels.output:
        per_output = max(rhs.element_count // max(rhs.dimensions[-1] if rhs.rank else 1, 1),
                         1)
        return 2.0 * array_elements(out) * per_output
    groups = int(inst.attribute("feature_group_count") or 1)
    batch_groups = int(inst.attribute("batch_group_count") or 1)
    fin = lhs.dimensions[labels.lhs.index("f")]
    fout = out.dimensions[labels.output.index("f")]
    batch = lhs.dimensions[labels.lhs.index("b")]
    spatial = sorted(c for c in labels.lhs if c.isdigit())
    win = inst.window
    positions = 1
    for i, c in enumerate(spatial):
        n_in = lhs.dimensions[labels.lhs.index(c)]
        n_k = rhs.dimensions[labels.rhs.index(c)] if c in labels.rhs else 1
        n_out = out.dimensions[labels.output.index(c)] if c in labels.output else 1
        if win is not None and i < len(win.size):
            stride, lo = win.stride[i], win.pad_low[i]
            base, dil = win.lhs_dilate[i], win.rhs_dilate[i]
        else:
            stride, lo, base, dil = 1, 0, 1, 1
        positions *= _valid_positions(n_in, n_k, n_out, stride, lo, base, dil)
    return 2.0 * (fin // max(groups, 1)) * fout * (batch // max(batch_groups, 1)) * positions


def _valid_positions(n_in: int, n_k: int, n_out: int, stride: int, lo: int, base: int,
                     dil: int) -> int:
    """(output, kernel) index pairs of one spatial dimension reading a real input element."""
    count = 0
    for k in range(n_k):
        if stride == 1 and base == 1:
            start = lo - k * dil
            count += max(min(n_in + start, n_out) - max(start, 0), 0)
            continue
        for o in range(n_out):
            undilated = o * stride - lo + k * dil
            idx = undilated // base if base > 1 else undilated
            if undilated != idx * base or not 0 <= idx < n_in:
                continue
            count += 1
    return count


def _custom_call_flops(inst: HloInstruction, ops: list[HloInstruction]) -> tuple[float, bool]:
    target = inst.custom_call_target or ""
    if target in MATMUL_CUSTOM_CALLS and len(ops) >= 2:
        contracting = gemm_lhs_contracting(inst)
        if not contracting and ops[0].shape.rank:
            contracting = (ops[0].shape.rank - 1,)
        return _dot_flops(ops[0].shape, inst.shape.leaves()[0], contracting), True
    if target.startswith("__cudnn$conv") and inst.dim_labels is not None:
        return _conv_flops(inst, ops), True
    if "fmha" in target or "fused_attn" in target:
        # attention: QK^T and PV, 4 * B * H * S_q * S_kv * D on the (B, H, S, D) operands
        if len(ops) >= 2 and ops[0].shape.rank >= 2:
            q, k = ops[0].shape, ops[1].shape
            return 4.0 * q.element_count * (k.dimensions[-2] if k.rank >= 2 else 1), True
    return 0.0, False


def instruction_flops(inst: HloInstruction, module: HloModule | None = None
                      ) -> tuple[float, float, bool]:
    """(flops, transcendentals, is_matmul) of one instruction, nested computations included
    (fusions, calls); control flow (while/conditional) counts nothing of its own."""
    op = inst.opcode
    out = inst.shape
    if op in FREE_OPCODES or op in DATA_MOVEMENT:
        return 0.0, 0.0, False
    if op in TRANSCENDENTAL:
        return 0.0, float(array_elements(out)), False
    if op in ELEMENTWISE:
        return float(array_elements(out)), 0.0, False
    ops = inst.operands
    if op == "dot":
        if len(ops) < 2:
            return 0.0, 0.0, True
        return _dot_flops(ops[0].shape, out.leaves()[0],
                          inst.dot_dimension_numbers.lhs_contracting), 0.0, True
    if op == "convolution":
        return _conv_flops(inst, ops), 0.0, True
    if op in ("reduce", "reduce-window", "scatter", "select-and-scatter", "map",
              "all-reduce", "reduce-scatter"):
        per = _apply_ops(module, inst.to_apply)
        if op == "reduce":
            n_in = len(ops) // 2 or 1
            elems = sum(o.shape.element_count for o in ops[:n_in]) if ops else 0
            return float(max(elems - array_elements(out), 0) * per / n_in), 0.0, False
        if op == "reduce-window":     # window - 1 combines per output, as XLA counts
            w = inst.window           # (a variadic one: per element of its first output)
            size = math.prod(w.size) if w is not None and w.size else 1
            first = out.leaves()[0].element_count if out.leaves() else 0
            return float(first * max(size - 1, 0) * per), 0.0, False
        if op == "scatter":           # a scatter that sets (no op in to_apply) does no flops
            upd = ops[-1].shape.element_count if ops else 0
            return float(upd * _apply_ops(module, inst.to_apply, least=0)), 0.0, False
        if op == "select-and-scatter":
            w = inst.window
            size = math.prod(w.size) if w is not None and w.size else 1
            src = ops[1].shape.element_count if len(ops) > 1 else 0
            return float(src * size), 0.0, False
        return float(array_elements(out) * per), 0.0, False
    if op == "sort":
        n = ops[0].shape.element_count if ops else 0
        per = _apply_ops(module, inst.to_apply)
        return float(n * max(math.log2(max(n, 2)), 1.0) * per), 0.0, False
    if op == "fft":          # XLA: 2 * 4 (a complex FMA) * prod(floor(log2 length)) * input
        logs = 1
        for length in re.findall(r"\d+", inst.attribute("fft_length") or ""):
            logs *= max(int(length), 1).bit_length() - 1
        n_in = ops[0].shape.leaves()[0].element_count if ops else array_elements(out)
        return 8.0 * logs * n_in, 0.0, False
    if op == "triangular-solve" and len(ops) >= 2:
        a, b = ops[0].shape, ops[1].shape
        m = a.dimensions[-1] if a.rank else 1
        return float(b.element_count * m), 0.0, True
    if op == "cholesky":
        n = out.dimensions[-1] if out.rank else 1
        return float(out.element_count * n / 3.0), 0.0, True
    if op in ("rng", "rng-bit-generator", "rng-get-and-update-state"):
        return float(array_elements(out) * 4), 0.0, False
    if op == "custom-call":
        f, mm = _custom_call_flops(inst, ops)
        return f, 0.0, mm
    if op == "while" and module is not None and _in_single_kernel(inst):
        trips = trip_count(inst) or 1
        flops = trans = 0.0
        mm = False
        for callee in inst.called_names:
            f, t, m = _computation_flops(module, callee)
            flops, trans, mm = flops + f * trips, trans + t * trips, mm or m
        return flops, trans, mm
    if op == "conditional" and module is not None and _in_single_kernel(inst):
        branches = [_computation_flops(module, c) for c in inst.called_names]
        if branches:
            return max(b[0] for b in branches), max(b[1] for b in branches), \
                any(b[2] for b in branches)
        return 0.0, 0.0, False
    if op in ("fusion", "call") or (op not in CONTROL_FLOW and inst.called_names):
        flops = trans = 0.0
        mm = False
        if module is not None:
            for callee in inst.called_names:
                f, t, m = _computation_flops(module, callee)
                flops, trans, mm = flops + f, trans + t, mm or m
        return flops, trans, mm
    return 0.0, 0.0, False


def _computation_flops(module: HloModule, name: str) -> tuple[float, float, bool]:
    """Flops, transcendentals and 'has a matmul' of one run of a computation, with what it
    calls. Computed callees first, without recursion (a module can nest calls thousands
    deep), once per module."""
    table: dict[str, tuple[float, float, bool]] = module.derived("computation-flops",
                                                                  lambda m: {})
    if name in table:
        return table[name]
    order: list[str] = []              # callees before their callers
    stack: list[tuple[str, bool]] = [(name, False)]
    seen: set[str] = set()
    while stack:
        cur, done = stack.pop()
        if done:
            order.append(cur)
            continue
        if cur in seen or cur in table:
            continue
        seen.add(cur)
        stack.append((cur, True))
        comp = module.get_computation(cur)
        for sub in comp.instructions if comp is not None else ():
            stack.extend((c, False) for c in sub.called_names if c not in seen)
    for cur in order:
        comp = module.get_computation(cur)
        flops = trans = 0.0
        mm = False
        table[cur] = (0.0, 0.0, False)     # a call cycle (invalid HLO) counts nothing
        for sub in comp.instructions if comp is not None else ():
            f, t, m = instruction_flops(sub, module)
            flops, trans, mm = flops + f, trans + t, mm or m
        table[cur] = (flops, trans, mm)
    return table.get(name, (0.0, 0.0, False))


def _in_single_kernel(inst: HloInstruction) -> bool:
    """Is this control flow inside a computation that a single-kernel call runs? (walked
    up the callers without recursion)"""
    comp = inst.computation
    module = comp.module if comp is not None else None
    if comp is None or module is None:
        return False
    callers = module.callers()
    stack, seen = [comp], {comp.name}
    while stack:
        cur = stack.pop()
        if cur.is_entry:
            continue
        for c in callers.get(cur.name, []):
            if is_single_kernel_call(c):
                return True
            up = c.computation
            if up is not None and up.name not in seen:
                seen.add(up.name)
                stack.append(up)
    return False
