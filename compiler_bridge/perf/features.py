"""The learned cost models' view of a kernel (in the spirit of TpuGraphs, Phothilimthana
et al., 2023): every model predicts a kernel's runtime as a correction to the roofline in
log space, ``log(t) = log(roofline_us) + f(features)``, from what this module computes.

* numeric features (``FEATURE_VERSION`` 5, names in ``NUMERIC``): the kernel's work as
  *times on the device profile* (flops over its peak, bytes read/written over its
  bandwidth at that working set, overhead, intensity over the profile's ridge point,
  roofline time) so that a model trained against one machine's calibrated profile predicts
  another's; output size/rank/minor dimension, operand and buffer counts, fused
  instruction count, fusion kind, element type, flags (reduction, physical transpose, dot,
  convolution, in-place dynamic-update-slice, slicing, gather/scatter, broadcast,
  trigonometry, inside a loop, YNNPACK fusion, intra-op partitions, a convolution XLA:CPU
  runs grouped or in generated loops), dot M/N/K, batch and which operand is read across
  its contiguous dimension, a convolution's M/N/K as a matrix product and its window
  against its output, loop trip count; the program's context (its total
  compute/memory/roofline time, the kernel's share and schedule position) and the kernel's
  producers and consumers (how many, their roofline times, whether a producer ran just
  before);
* opcode counts over ``VOCAB`` (the kernel's own opcode and every instruction it fuses),
  plain and weighted by each instruction's log element count, for the models' pooled
  opcode embeddings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .costs import KernelCost, costs_of, fused_instructions, moves_minor_dimension
from .execution import CONTROL_FLOW, FREE_OPCODES, kernels
from .roofline import (compute_seconds, control_iterations, memory_seconds, roofline_us,
                       transcendental_work)
from .devices import DeviceProfile
from ..hlo import HloComputation, HloInstruction, HloModule, Shape, walk_through
from ..targets import is_ynnpack_fusion, outer_partitions

# Opcodes with an embedding of their own; anything else shares '<other>'.
VOCAB = (
    "<kernel:fusion>", "<kernel:dot>", "<kernel:copy>", "<kernel:while>",
    "<kernel:convolution>", "<kernel:custom-call>", "<kernel:other>",
    "parameter", "constant", "add", "subtract", "multiply", "divide", "maximum", "minimum",
    "compare", "select", "and", "or", "not", "negate", "abs", "sign", "floor", "ceil",
    "clamp", "convert", "exponential", "exponential-minus-one", "log", "log-plus-one",
    "tanh", "logistic", "rsqrt", "sqrt", "sine", "cosine", "power", "erf", "atan2",
    "remainder", "round-nearest-even", "is-finite", "broadcast", "reshape", "bitcast",
    "transpose", "copy", "slice", "dynamic-slice", "dynamic-update-slice", "concatenate",
    "pad", "gather", "scatter", "iota", "reverse", "reduce", "reduce-window",
    "select-and-scatter", "dot", "convolution", "sort", "tuple", "get-tuple-element",
    "custom-call", "while", "conditional", "call", "fusion", "rng-bit-generator",
    "bitcast-convert", "shift-left", "shift-right-logical", "xor", "popcnt", "map",
    "<other>",
)
VOCAB_INDEX = {op: i for i, op in enumerate(VOCAB)}
FUSION_KINDS = ("kLoop", "kInput", "kOutput", "kCustom")
DTYPES = ("f32", "bf16", "f16", "f64", "s32", "pred", "s8", "other")
# Version 2: every amount of work is a time on the device profile (flops over its peak,
# bytes over its bandwidth), so a model trained against one machine's profile predicts
# another's; plus the kernel's producers and consumers in the module.
# Version 3: how XLA:CPU runs a kernel's convolution (a library, grouped, generated loops)
# and whether it computes trigonometric functions (far dearer than exp or tanh on CPU).
# Version 4: the roofline terms price FFTs, reduce-windows in generated loops, fresh pages
# and in-place scatters; whether the kernel transposes its contiguous dimension.
# Version 5: a convolution's shape as a matrix product (the library runs a 64x64 window
# over a 3x3 output, a backward-filter convolution, ~80x slower than its flops say) and
# which operand of a dot holds the contracted dimension as its contiguous one (a dot
# contracting both operands' major dimension runs ~3x slower than one that does not).
FEATURE_VERSION = 5
NUMERIC = (
    "log_roofline_us", "log_compute_us", "log_transcendental_us", "log_read_us",
    "log_write_us", "log_overhead_us", "log_intensity_vs_ridge", "log_out_elements",
    "out_rank", "out_leaves", "log_minor_dim", "log_max_dim", "log_operands", "log_buffers",
    "log_fused_ops", "log_dot_m", "log_dot_n", "log_dot_k", "log_trip_count",
    "trip_unknown", "log_loop_kernels", "in_loop", "matmul", "in_place_dus", "has_reduce",
    "has_transpose", "has_dot", "has_convolution", "has_slice", "has_gather_scatter",
    "has_broadcast", "has_concat_pad", "has_transcendental", "ynn_fusion",
    "log_partitions", "log_largest_operand_us", "log_smallest_operand_us", "control_flow",
    "log_output_write_us", "program_log_kernels", "program_log_compute_us",
    "program_log_memory_us", "program_log_roofline_us", "share_of_program_roofline",
    "log_parameter_read_us", "hot_input_share", "schedule_position",
    "log_producers", "log_consumers", "producers_log_roofline_us",
    "producers_max_log_roofline_us", "consumers_log_roofline_us",
    "consumers_max_log_roofline_us", "producer_just_before", "conv_grouped", "conv_loops",
    "has_trig", "minor_transpose",
    "log_conv_m", "log_conv_n", "log_conv_k", "log_conv_window", "log_conv_out_positions",
    "log_conv_window_over_out", "dot_lhs_transposed", "dot_rhs_transposed", "log_dot_batch",
    "dot_k_major_both",
) + tuple(f"kind_{k}" for k in FUSION_KINDS + ("none",)) + tuple(f"dtype_{d}" for d in DTYPES)


def log_amount(x: float) -> float:
    return math.log1p(max(float(x), 0.0))


def kernel_token(op: str) -> str:
    tok = f"<kernel:{op}>"
    return tok if tok in VOCAB_INDEX else "<kernel:other>"


def _physical_transpose(i: HloInstruction) -> bool:
    if i.opcode == "transpose":
        dims = i.dimensions or ()
        return list(dims) != sorted(dims)
    return False


def _lus(us: float) -> float:
    """Log of a time in µs (the floor keeps nothing-to-do terms finite)."""
    return math.log(max(float(us), 0.0) + 1e-3)


def _bytes_us(nbytes: float, device: DeviceProfile) -> float:
    bw = device.bandwidth_for(max(nbytes, 1.0))
    return nbytes / bw * 1e6 if bw > 0 else 0.0


@dataclass(frozen=True)
class _ModuleContext:
    """What every kernel of a module shares, on one device profile: the whole step's
    work (cache pressure, contention) and each kernel's roofline time (for its
    producers' and consumers' features)."""

    log_kernels: float
    log_compute_us: float
    log_memory_us: float
    log_roofline_us: float
    roofline_total_us: float
    roofline_of: dict[str, float]


def _program_context(module: HloModule, device: DeviceProfile) -> _ModuleContext:
    """Once per module and device profile (keyed by the whole profile: every rate counts,
    not just the name)."""
    def context(m: HloModule) -> _ModuleContext:
        insts = kernels(m)
        costs = costs_of(m, insts)
        roof = [roofline_us(c, device) for c in costs]
        compute = sum(compute_seconds(c, device) for c in costs) * 1e6
        memory = sum(memory_seconds(c, device) for c in costs) * 1e6
        total = sum(roof)
        return _ModuleContext(log_amount(len(costs)), _lus(compute), _lus(memory), _lus(total),
                              total, {i.name: r for i, r in zip(insts, roof)})
    return module.derived(f"learned-context:{device.key}", context)


def _neighbours(inst: HloInstruction) -> tuple[list[HloInstruction], list[HloInstruction]]:
    """The kernels of the same computation that produce this kernel's operands and that
    consume its result (through bitcasts and get-tuple-elements)."""
    producers: dict[str, HloInstruction] = {}
    for op in inst.operands:
        src = _source(op)
        if src.opcode not in FREE_OPCODES and src.opcode != "parameter":
            producers.setdefault(src.name, src)
    consumers = [u for u in walk_through(inst.users, ("bitcast", "get-tuple-element"))
                 if u.opcode not in FREE_OPCODES]
    return list(producers.values()), consumers


def _neighbour_features(inst: HloInstruction, ctx: _ModuleContext) -> list[float]:
    producers, consumers = _neighbours(inst)
    prod = [ctx.roofline_of.get(p.name, 0.0) for p in producers]
    cons = [ctx.roofline_of.get(c.name, 0.0) for c in consumers]
    comp = inst.computation
    before = 0.0
    if comp is not None and producers:
        order = _schedule(comp)
        pos = order.get(inst.name, 0)
        before = float(any(order.get(p.name, -99) == pos - 1 for p in producers))
    return [log_amount(len(producers)), log_amount(len(consumers)), _lus(sum(prod)),
            _lus(max(prod, default=0.0)), _lus(sum(cons)), _lus(max(cons, default=0.0)),
            before]


def _source(i: HloInstruction) -> HloInstruction:
    """The instruction that produced a value, through bitcasts and get-tuple-element."""
    for _ in range(16):
        if i.opcode in ("bitcast", "get-tuple-element") and i.operands:
            i = i.operands[0]
        else:
            break
    return i


def _input_locality(inst: HloInstruction, window: int = 2) -> tuple[float, float]:
    """(bytes read straight from program parameters, share of operand bytes produced by
    one of the ``window`` kernels scheduled just before: still in cache)."""
    comp = inst.computation
    if comp is None or inst.opcode in CONTROL_FLOW:
        return 0.0, 0.0
    order = _schedule(comp)
    pos = order.get(inst.name, 0)
    params = hot = total = 0.0
    for op in dict.fromkeys(inst.operands):
        b = float(op.shape.byte_size)
        total += b
        src = _source(op)
        if src.opcode == "parameter" and comp.is_entry:
            params += b
        elif src.opcode not in FREE_OPCODES and 0 < pos - order.get(src.name, -99) <= window:
            hot += b
    return params, (hot / total if total > 0 else 0.0)


def _schedule(comp: HloComputation) -> dict[str, int]:
    """Kernel position in the computation's (scheduled) instruction order (1 = first),
    once per computation: kept in the module's derived results."""
    if comp.module is None:
        return _kernel_order(comp)
    per_comp: dict[str, dict[str, int]] = comp.module.derived("learned-schedule",
                                                              lambda m: {})
    got = per_comp.get(comp.name)
    if got is None:
        got = per_comp.setdefault(comp.name, _kernel_order(comp))
    return got


def _kernel_order(comp: HloComputation) -> dict[str, int]:
    order: dict[str, int] = {}
    k = 0
    for i in comp.instructions:
        if i.opcode not in FREE_OPCODES:
            k += 1
            order[i.name] = k
    return order


def _position(inst: HloInstruction) -> float:
    """Where in its computation's schedule the kernel runs, 0 (first) to 1 (last): the
    first kernels of a step meet cold caches and idle threads."""
    comp = inst.computation
    if comp is None:
        return 0.0
    order = _schedule(comp)
    return (order.get(inst.name, 1) - 1) / max(len(order) - 1, 1)


def _conv_gemm(conv: HloInstruction | None) -> list[float]:
    """A convolution as the matrix product it computes (log M = batch x output positions,
    N = output features, K = input features per group x window positions), its window
    and output positions, and the window over the output (large for a backward-filter
    convolution, whose window is the whole image); zeros for anything else."""
    if conv is None or conv.opcode != "convolution" or len(conv.operands) < 2:
        return [0.0] * 6
    lhs, rhs = conv.operands[0].shape, conv.operands[1].shape
    out = conv.shape.leaves()[0]
    labels = conv.dim_labels
    if labels is None or len(labels.lhs) != lhs.rank or len(labels.rhs) != rhs.rank \
            or len(labels.output) != out.rank or "f" not in labels.lhs \
            or "b" not in labels.output or "f" not in labels.output:
        return [0.0] * 6
    groups = int(conv.attribute("feature_group_count") or 1)
    fin = lhs.dimensions[labels.lhs.index("f")] // max(groups, 1)
    positions = math.prod(d for d, c in zip(out.dimensions, labels.output) if c.isdigit())
    window = math.prod(d for d, c in zip(rhs.dimensions, labels.rhs) if c.isdigit())
    batch = out.dimensions[labels.output.index("b")]
    fout = out.dimensions[labels.output.index("f")]
    return [log_amount(batch * positions), log_amount(fout), log_amount(fin * window), log_amount(window),
            log_amount(positions), log_amount(window) - log_amount(positions)]


def _minor(shape: Shape) -> int:
    lay = shape.layout
    return lay.minor_to_major[0] if lay is not None and lay.minor_to_major else shape.rank - 1


def _dot_orientation(dot: HloInstruction | None) -> list[float]:
    """Which operand of a dot is read across its contiguous dimension: the LHS when it
    contracts a dimension other than its minor one, the RHS when it contracts its minor
    one; both K-major (LHS transposed, RHS not) at once; and the batch size (log)."""
    if dot is None or dot.opcode != "dot" or len(dot.operands) < 2:
        return [0.0] * 4
    lhs, rhs = dot.operands[0].shape, dot.operands[1].shape
    dn = dot.dot_dimension_numbers
    lc = dn.lhs_contracting[0] if dn.lhs_contracting else lhs.rank - 1
    rc = dn.rhs_contracting[0] if dn.rhs_contracting else 0
    lhs_t, rhs_t = lc != _minor(lhs), rc == _minor(rhs)
    batch = math.prod(lhs.dimensions[d] for d in dn.lhs_batch if d < lhs.rank)
    return [float(lhs_t), float(rhs_t), log_amount(batch), float(lhs_t and not rhs_t)]


def kernel_features(inst: HloInstruction, cost: KernelCost, module: HloModule,
                    device: DeviceProfile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(numeric features, opcode counts, size-weighted opcode counts) of one kernel.

    Work is expressed as time on ``device`` (flops over its peak, bytes over its
    bandwidth at that working set), so the features of a kernel mean the same on any
    machine whose profile was measured."""
    fused = fused_instructions(inst, module)
    counts = np.zeros(len(VOCAB), np.float32)
    weighted = np.zeros(len(VOCAB), np.float32)
    counts[VOCAB_INDEX[kernel_token(inst.opcode)]] += 1
    weighted[VOCAB_INDEX[kernel_token(inst.opcode)]] += 1 + log_amount(inst.shape.byte_size)
    ops = set()
    for sub in fused:
        k = VOCAB_INDEX.get(sub.opcode, VOCAB_INDEX["<other>"])
        counts[k] += 1
        weighted[k] += 1 + log_amount(sum(s.element_count for s in sub.shape.leaves() if s.is_array))
        ops.add(sub.opcode)
    if inst.opcode not in CONTROL_FLOW:
        ops.add(inst.opcode)
    leaves = [s for s in inst.shape.leaves() if s.is_array]
    out = leaves[0] if leaves else None
    dims = out.dimensions if out is not None else ()
    minor = dims[out.layout.minor_to_major[0]] if out is not None and out.layout is not None \
        and out.layout.minor_to_major and len(dims) > out.layout.minor_to_major[0] else \
        (dims[-1] if dims else 1)
    operand_bytes = [o.shape.byte_size for o in inst.operands] or [0]
    m = n = k = 0
    dot = next((i for i in ([inst] + fused) if i.opcode in ("dot", "convolution")), None)
    if dot is not None and len(dot.operands) >= 2 and dot.opcode == "dot":
        lhs, rhs = dot.operands[0].shape, dot.operands[1].shape
        dn = dot.dot_dimension_numbers
        k = math.prod(lhs.dimensions[d] for d in dn.lhs_contracting if d < lhs.rank) or 1
        m = max(lhs.element_count // max(k, 1), 1)
        n = max(rhs.element_count // max(k, 1), 1)
    matmul_shape = _conv_gemm(dot) + _dot_orientation(dot)
    partitions = outer_partitions(inst)
    control = inst.opcode in CONTROL_FLOW and cost.buffers == 0
    trips = control_iterations(cost) if inst.opcode == "while" else 0
    comp = inst.computation
    fk = inst.fusion_kind if inst.opcode == "fusion" and inst.fusion_kind in FUSION_KINDS \
        else "none"
    dt = cost.dtype if cost.dtype in DTYPES else (
        "s32" if cost.dtype in ("u32", "s64", "u64") else "other")
    ctx = _program_context(module, device)
    roof = roofline_us(cost, device)
    param_bytes, hot_share = _input_locality(inst)
    peak = device.matmul_rate(cost.dtype) if cost.matmul else device.vector_flops
    ridge = peak / max(device.bandwidth_for(max(cost.bytes, 1.0)), 1.0)
    compute_us = cost.flops / peak * 1e6 if peak > 0 else 0.0
    trans_us = transcendental_work(cost, device) / device.vector_flops * 1e6 \
        if device.vector_flops > 0 else 0.0
    overhead_us = device.launch_overhead_us + device.per_buffer_us * cost.buffers
    out_bw = min(device.output_bandwidth or math.inf, device.bandwidth_for(max(cost.bytes, 1.0)))
    numeric = [
        math.log(max(roof, 1e-3)), _lus(compute_us), _lus(trans_us),
        _lus(_bytes_us(cost.bytes_read, device)), _lus(_bytes_us(cost.bytes_written, device)),
        _lus(overhead_us), math.log((cost.intensity + 1e-3) / max(ridge, 1e-3)),
        log_amount(out.element_count if out is not None else 0),
        float(len(dims)), float(len(leaves)), log_amount(minor), log_amount(max(dims, default=0)),
        log_amount(len(inst.operand_names)), log_amount(cost.buffers),
        log_amount(sum(1 for f in fused if f.opcode not in FREE_OPCODES)),
        log_amount(m), log_amount(n), log_amount(k), log_amount(trips),
        float(inst.opcode == "while" and cost.trip_count is None),
        log_amount(cost.loop_kernels), float(comp is not None and not comp.is_entry),
        float(cost.matmul), float(cost.in_place), float(bool(ops & {"reduce", "reduce-window"})),
        float(any(_physical_transpose(f) for f in [inst] + fused)),
        float("dot" in ops), float("convolution" in ops),
        float(bool(ops & {"slice", "dynamic-slice"})), float(bool(ops & {"gather", "scatter"})),
        float("broadcast" in ops), float(bool(ops & {"concatenate", "pad"})),
        float(cost.transcendentals > 0), float(is_ynnpack_fusion(inst)),
        log_amount(min(float(partitions), max(device.threads, 1.0))),
        _lus(_bytes_us(max(operand_bytes), device)), _lus(_bytes_us(min(operand_bytes), device)),
        float(control), _lus(cost.output_bytes / out_bw * 1e6 if out_bw > 0 else 0.0),
        ctx.log_kernels, ctx.log_compute_us, ctx.log_memory_us, ctx.log_roofline_us,
        roof / max(ctx.roofline_total_us, 1e-9),
        _lus(_bytes_us(param_bytes, device)), hot_share, _position(inst),
    ] + _neighbour_features(inst, ctx) \
        + [float(cost.conv_path == "grouped"), float(cost.conv_path == "loops"),
           float(cost.trig > 0),
           float(any(moves_minor_dimension(f) for f in [inst] + fused))] \
        + matmul_shape \
        + [float(fk == k_) for k_ in FUSION_KINDS + ("none",)] + [float(dt == d) for d in DTYPES]
    return np.asarray(numeric, np.float32), counts, weighted


def module_features(module: HloModule, insts: Sequence[HloInstruction],
                    costs: Sequence[KernelCost], device: DeviceProfile):
    feats = [kernel_features(i, c, module, device) for i, c in zip(insts, costs)]
    if not feats:
        return (np.zeros((0, len(NUMERIC)), np.float32), np.zeros((0, len(VOCAB)), np.float32),
                np.zeros((0, len(VOCAB)), np.float32))
    return (np.stack([f[0] for f in feats]), np.stack([f[1] for f in feats]),
            np.stack([f[2] for f in feats]))
