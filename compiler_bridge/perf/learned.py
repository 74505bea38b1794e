"""A learned kernel cost model, in the spirit of TpuGraphs (Phothilimthana et al., 2023).

It predicts a kernel's runtime as a *correction to the roofline in log space*::

    log(t) = log(roofline_us) + MLP([numeric features, pooled opcode embeddings])

* numeric features (``FEATURE_VERSION`` 5): the kernel's work as *times on the device
  profile* (flops over its peak, bytes read/written over its bandwidth at that working
  set, overhead, intensity over the profile's ridge point, roofline time) so that a model
  trained against one machine's calibrated profile predicts another's; output
  size/rank/minor dimension, operand and buffer counts, fused instruction count, fusion
  kind, element type, flags (reduction, physical transpose, dot, convolution, in-place
  dynamic-update-slice, slicing, gather/scatter, broadcast, trigonometry, inside a loop,
  YNNPACK fusion, intra-op partitions, a convolution XLA:CPU runs grouped or in generated
  loops), dot M/N/K, batch and which operand is read across its contiguous dimension,
  a convolution's M/N/K as a matrix product and its window against its output, loop trip
  count; the program's context (its
  total compute/memory/roofline time, the kernel's share and schedule position) and the
  kernel's producers and consumers (how many, their roofline times, whether a producer
  ran just before);
* opcode embeddings of the kernel's own opcode and every instruction it fuses, pooled
  three ways: sum, mean, and mean weighted by each instruction's log element count.

Plain JAX: an MLP trained with Adam from ``jax.example_libraries.optimizers`` on squared
log error (each program weighing the same), a few seeds averaged. Saved as ``.npz``
(arrays) + ``.json`` (vocabulary, feature names, normalisation, device profile, training
programs); never pickle. ``leave_out`` is the honest evaluation: train on every program
outside a group (a program, or its whole family), predict the group. ``kernel_graph``
gives each kernel's instruction graph for the graph network (``graph_model``); every
kind (and ``boosted``, gradient-boosted trees) shares :class:`CostModel` (prediction on
any device profile, files, description) and :func:`load_model` reads any. ``shipped_model_path``: the default model shipped
in ``models/`` (see its README), used when the user has saved none; ``train(init=...)``
fine-tunes it.

jax is imported only to train; predictions run in NumPy.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from . import metrics as M
from .costs import (
    CONTROL_FLOW,
    FREE_OPCODES,
    FRESH_PAGES,
    KernelCost,
    compute_seconds,
    control_iterations,
    costs_of,
    fresh_pages,
    fused_instructions,
    is_single_kernel_call,
    kernels,
    memory_seconds,
    moves_minor_dimension,
    outer_partitions,
    roofline_us,
    transcendental_work,
)
from ..config import settings
from .devices import DeviceProfile
from ..dumps import AFTER, BUFFER_ASSIGNMENT, Dump, DumpModule, open_dump
from ..memory import MemoryFileError, parse_buffer_assignment
from ..hlo import HloComputation, HloInstruction, HloModule, Shape, walk_through

FORMAT = "hlolens-learned-cost-model"
VERSION = 1

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
_VOCAB_INDEX = {op: i for i, op in enumerate(VOCAB)}
CLIP = 6.0              # standardized features are clipped to +-CLIP
MAX_CORRECTION = 6.0    # |log correction| at most this (a factor of ~400)
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


def default_model_path(kind: str = "cpu") -> str:
    """Where ``train`` saves by default and the app looks: one model per device kind."""
    return os.path.join(settings().cache_dir, f"cost-model-{kind}.npz")


MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


def shipped_model_path(kind: str = "cpu") -> str:
    """The default model shipped with HLO Lens for a device kind (models/README.md says
    how it was made); used when the user has saved none."""
    return os.path.join(MODELS_DIR, f"default-{kind}.npz")


# --------------------------------------------------------------------------- features

def _log(x: float) -> float:
    return math.log1p(max(float(x), 0.0))


def _kernel_token(op: str) -> str:
    tok = f"<kernel:{op}>"
    return tok if tok in _VOCAB_INDEX else "<kernel:other>"


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
        return _ModuleContext(_log(len(costs)), _lus(compute), _lus(memory), _lus(total),
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
    return [_log(len(producers)), _log(len(consumers)), _lus(sum(prod)),
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
    return [_log(batch * positions), _log(fout), _log(fin * window), _log(window),
            _log(positions), _log(window) - _log(positions)]


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
    return [float(lhs_t), float(rhs_t), _log(batch), float(lhs_t and not rhs_t)]


def kernel_features(inst: HloInstruction, cost: KernelCost, module: HloModule,
                    device: DeviceProfile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(numeric features, opcode counts, size-weighted opcode counts) of one kernel.

    Work is expressed as time on ``device`` (flops over its peak, bytes over its
    bandwidth at that working set), so the features of a kernel mean the same on any
    machine whose profile was measured."""
    fused = fused_instructions(inst, module)
    counts = np.zeros(len(VOCAB), np.float32)
    weighted = np.zeros(len(VOCAB), np.float32)
    counts[_VOCAB_INDEX[_kernel_token(inst.opcode)]] += 1
    weighted[_VOCAB_INDEX[_kernel_token(inst.opcode)]] += 1 + _log(inst.shape.byte_size)
    ops = set()
    for sub in fused:
        k = _VOCAB_INDEX.get(sub.opcode, _VOCAB_INDEX["<other>"])
        counts[k] += 1
        weighted[k] += 1 + _log(sum(s.element_count for s in sub.shape.leaves() if s.is_array))
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
    cfg_text = inst.attributes.get("backend_config", "")
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
        _log(out.element_count if out is not None else 0),
        float(len(dims)), float(len(leaves)), _log(minor), _log(max(dims, default=0)),
        _log(len(inst.operand_names)), _log(cost.buffers),
        _log(sum(1 for f in fused if f.opcode not in FREE_OPCODES)),
        _log(m), _log(n), _log(k), _log(trips),
        float(inst.opcode == "while" and cost.trip_count is None),
        _log(cost.loop_kernels), float(comp is not None and not comp.is_entry),
        float(cost.matmul), float(cost.in_place), float(bool(ops & {"reduce", "reduce-window"})),
        float(any(_physical_transpose(f) for f in [inst] + fused)),
        float("dot" in ops), float("convolution" in ops),
        float(bool(ops & {"slice", "dynamic-slice"})), float(bool(ops & {"gather", "scatter"})),
        float("broadcast" in ops), float(bool(ops & {"concatenate", "pad"})),
        float(cost.transcendentals > 0), float("__ynn_fusion" in cfg_text),
        _log(min(float(partitions), max(device.threads, 1.0))),
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


# --------------------------------------------------------------------------- graphs

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
    return [_log(sum(s.element_count for s in leaves)) / 4.0, len(dims) / 4.0,
            _log(minor) / 4.0, _log(len(i.operand_names)) / 2.0,
            float(i.is_root and not as_parameter), float(as_parameter or i.opcode == "parameter"),
            float(i.opcode == "constant"),
            float(lay is not None and len(dims) > 1 and not lay.is_default),
            float(et == "f32"), float(et in ("bf16", "f16")),
            float(et.startswith(("s", "u")) or et == "pred"), float(is_kernel)]


def kernel_graph(inst: HloInstruction, module: HloModule) -> KernelGraph:
    """The instruction graph of one kernel (at most MAX_NODES nodes)."""
    feats: list[list[float]] = [_node_features(inst, is_kernel=True)]
    ops = [_VOCAB_INDEX[_kernel_token(inst.opcode)]]
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
            ops.append(_VOCAB_INDEX.get(sub.opcode, _VOCAB_INDEX["<other>"]))
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
            ops.append(_VOCAB_INDEX["parameter"])
            feats.append(_node_features(operand, as_parameter=True))
            edges.append((len(ops) - 1, 0))
    src = np.asarray([e[0] for e in edges], np.int32)
    dst = np.asarray([e[1] for e in edges], np.int32)
    return KernelGraph(np.asarray(ops, np.int32), np.asarray(feats, np.float32), src, dst)


# --------------------------------------------------------------------------- dataset

@dataclass
class Dataset:
    """Measured kernels of several programs, as arrays."""

    numeric: np.ndarray          # [n, len(NUMERIC)]
    counts: np.ndarray           # [n, len(VOCAB)]
    weighted: np.ndarray         # [n, len(VOCAB)]
    log_roofline: np.ndarray     # [n]
    label_us: np.ndarray         # [n] measured (the chosen statistic)
    half_a: np.ndarray           # [n] the statistic over half the runs (NaN if none)
    half_b: np.ndarray           # [n]
    program: list[str]           # [n] program of each kernel (a dump folder)
    instruction: list[str]       # [n]
    roofline_us: np.ndarray      # [n]
    programs: list[str] = field(default_factory=list)
    graphs: list[KernelGraph] = field(default_factory=list)    # [n] (empty: not built)
    executions: np.ndarray = field(default_factory=lambda: np.zeros((0,)))  # [n] per step
    step_us: dict[str, float] = field(default_factory=dict)    # program -> median step
    # program -> median step over two halves of the runs (the noise floor of step times)
    step_halves: dict[str, tuple[float, float]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.label_us)

    def subset(self, mask: np.ndarray) -> "Dataset":
        idx = np.nonzero(mask)[0]
        progs = sorted({self.program[i] for i in idx})
        return Dataset(self.numeric[idx], self.counts[idx], self.weighted[idx],
                       self.log_roofline[idx], self.label_us[idx], self.half_a[idx],
                       self.half_b[idx], [self.program[i] for i in idx],
                       [self.instruction[i] for i in idx], self.roofline_us[idx], progs,
                       [self.graphs[i] for i in idx] if self.graphs else [],
                       self.executions[idx] if len(self.executions) else self.executions,
                       {p: v for p, v in self.step_us.items() if p in set(progs)},
                       {p: v for p, v in self.step_halves.items() if p in set(progs)})

    @staticmethod
    def concat(parts: Sequence["Dataset"]) -> "Dataset":
        parts = [p for p in parts if len(p)]
        if not parts:
            return empty_dataset()
        graphs = sum((p.graphs for p in parts), []) if all(p.graphs for p in parts) else []
        execs = np.concatenate([p.executions for p in parts]) \
            if all(len(p.executions) == len(p) for p in parts) else np.zeros((0,))
        steps: dict[str, float] = {}
        halves: dict[str, tuple[float, float]] = {}
        for p in parts:
            for k, v in p.step_us.items():
                steps[k] = steps.get(k, 0.0) + v
            for k, (a, b) in p.step_halves.items():
                was = halves.get(k, (0.0, 0.0))
                halves[k] = (was[0] + a, was[1] + b)
        return Dataset(np.concatenate([p.numeric for p in parts]),
                       np.concatenate([p.counts for p in parts]),
                       np.concatenate([p.weighted for p in parts]),
                       np.concatenate([p.log_roofline for p in parts]),
                       np.concatenate([p.label_us for p in parts]),
                       np.concatenate([p.half_a for p in parts]),
                       np.concatenate([p.half_b for p in parts]),
                       sum((p.program for p in parts), []),
                       sum((p.instruction for p in parts), []),
                       np.concatenate([p.roofline_us for p in parts]),
                       sorted({x for p in parts for x in p.programs}), graphs, execs, steps,
                       halves)


def empty_dataset() -> Dataset:
    z = np.zeros((0,), np.float32)
    return Dataset(np.zeros((0, len(NUMERIC)), np.float32), np.zeros((0, len(VOCAB)), np.float32),
                   np.zeros((0, len(VOCAB)), np.float32), z, z, z, z, [], [], z, [])


def module_features(module: HloModule, insts: Sequence[HloInstruction],
                    costs: Sequence[KernelCost], device: DeviceProfile):
    feats = [kernel_features(i, c, module, device) for i, c in zip(insts, costs)]
    if not feats:
        return (np.zeros((0, len(NUMERIC)), np.float32), np.zeros((0, len(VOCAB)), np.float32),
                np.zeros((0, len(VOCAB)), np.float32))
    return (np.stack([f[0] for f in feats]), np.stack([f[1] for f in feats]),
            np.stack([f[2] for f in feats]))


def module_with_pages(dump: Dump, mod: DumpModule) -> HloModule:
    """The module after optimizations, its costs told which pages its dump's buffer
    assignment maps fresh in every run (``costs.fresh_pages``); without a readable
    assignment, none."""
    hlo = dump.stage(mod, AFTER)
    if hlo.knows(FRESH_PAGES):
        return hlo
    pages: dict[str, float] = {}
    ba = mod.first(BUFFER_ASSIGNMENT)
    if ba is not None:
        try:
            assignment = parse_buffer_assignment(dump.read_text(ba.path), ba.path)
            pages = fresh_pages(hlo, assignment)
        except (OSError, KeyError, MemoryFileError):
            pass           # the memory view names the broken file; costs go without it
    hlo.attach(FRESH_PAGES, pages)
    return hlo


def dataset_from_dump(dump: Dump | str, device: DeviceProfile, stat: str = "median",
                      program: str | None = None) -> Dataset:
    """The measured kernels of a dump with traces (raises TraceError without them)."""
    from .traces import measure
    if isinstance(dump, str):
        dump = open_dump(dump)
    name = program or dump.name
    measured = measure(dump)
    parts = []
    for mid, timings in measured.modules.items():
        hlo = module_with_pages(dump, dump.module(mid))
        insts = [i for i in kernels(hlo) if i.name in timings.kernels]
        costs = costs_of(hlo, insts)
        num, cnt, wtd = module_features(hlo, insts, costs, device)
        label, ha, hb, execs = [], [], [], []
        for i in insts:
            t = timings.kernels[i.name]
            label.append(t.stat(stat))
            h = t.halves(stat)
            ha.append(h[0] if h else np.nan)
            hb.append(h[1] if h else np.nan)
            execs.append(t.executions_per_run)
        roof = np.asarray([roofline_us(c, device) for c in costs], np.float64)
        parts.append(Dataset(num, cnt, wtd, np.log(np.maximum(roof, 1e-3)).astype(np.float32),
                             np.asarray(label, np.float64), np.asarray(ha, np.float64),
                             np.asarray(hb, np.float64), [name] * len(insts),
                             [i.name for i in insts], roof, [name],
                             [kernel_graph(i, hlo) for i in insts],
                             np.asarray(execs, np.float64), {name: timings.step_median_us},
                             {name: h} if (h := timings.step_halves()) else {}))
    return Dataset.concat(parts)


def dataset_from_dumps(paths: Sequence[str], device: DeviceProfile, stat: str = "median",
                       log=None) -> Dataset:
    parts = []
    for p in paths:
        name = os.path.basename(os.path.normpath(p))
        ds = dataset_from_dump(p, device, stat, program=name)
        if log is not None:
            log(f"{name}: {len(ds)} measured kernels")
        parts.append(ds)
    return Dataset.concat(parts)


# --------------------------------------------------------------------------- the model

@dataclass
class TrainConfig:
    hidden: int = 16
    embed: int = 8
    steps: int = 600
    learning_rate: float = 3e-3
    # strong enough to keep corrections tame on families never seen (chosen by
    # leave-one-family-out on the 11 families of the first traced corpus)
    weight_decay: float = 3e-2
    seeds: int = 3
    rank_weight: float = 1.0     # pairwise ranking loss (within each program), 0 = off


def _init(key, n_in: int, cfg: TrainConfig, vocab: int):
    import jax
    import jax.numpy as jnp
    k = jax.random.split(key, 4)
    d_in = n_in + 3 * cfg.embed

    def dense(kk, a, b, scale=1.0):
        return jax.random.normal(kk, (a, b)) * scale / jnp.sqrt(a)
    return {
        "embed": jax.random.normal(k[0], (vocab, cfg.embed)) * 0.1,
        "w1": dense(k[1], d_in, cfg.hidden), "b1": jnp.zeros((cfg.hidden,)),
        "w2": dense(k[2], cfg.hidden, cfg.hidden), "b2": jnp.zeros((cfg.hidden,)),
        "w3": dense(k[3], cfg.hidden, 1, 0.1), "b3": jnp.zeros((1,)),
    }


def _forward(params, numeric, counts, weighted):
    import jax
    import jax.numpy as jnp
    e = params["embed"]
    total = jnp.maximum(counts.sum(-1, keepdims=True), 1.0)
    wtotal = jnp.maximum(weighted.sum(-1, keepdims=True), 1e-6)
    pooled = jnp.concatenate([
        jnp.log1p(counts) @ e,            # sum pooling (log-damped counts)
        (counts / total) @ e,             # mean pooling
        (weighted / wtotal) @ e,          # size-weighted mean pooling
    ], axis=-1)
    x = jnp.concatenate([numeric, pooled], axis=-1)
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    h = jax.nn.gelu(h @ params["w2"] + params["b2"])
    return (h @ params["w3"] + params["b3"])[:, 0]


def gelu_np(x: np.ndarray) -> np.ndarray:
    """jax.nn.gelu (tanh approximation, its default) in NumPy."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def _forward_np(params, numeric, counts, weighted) -> np.ndarray:
    """_forward in NumPy: predictions need no JAX (the app stays light)."""
    e = params["embed"].astype(np.float64)
    total = np.maximum(counts.sum(-1, keepdims=True), 1.0)
    wtotal = np.maximum(weighted.sum(-1, keepdims=True), 1e-6)
    pooled = np.concatenate([np.log1p(counts) @ e, (counts / total) @ e,
                             (weighted / wtotal) @ e], axis=-1)
    x = np.concatenate([numeric, pooled], axis=-1)
    h = gelu_np(x @ params["w1"] + params["b1"])
    h = gelu_np(h @ params["w2"] + params["b2"])
    return (h @ params["w3"] + params["b3"])[:, 0]


PAD_ROWS = 256        # kernels are padded to a multiple of this (one compile serves many sizes)
MAX_PAIRS = 20000     # ranking pairs, padded to exactly this many
_TRAINERS: dict = {}  # a model kind's forward function -> its compiled trainer


class FitSettings(Protocol):
    """What :func:`fit_seeds` reads of a model kind's configuration."""

    steps: int
    learning_rate: float
    weight_decay: float
    rank_weight: float


def _trainer(forward):
    """The compiled trainer of one model kind (``forward(params, *inputs)`` -> its log
    correction per kernel), built once per process: every argument is an array padded to
    a bucketed size, the configuration is static, so folds of an evaluation share it."""
    got = _TRAINERS.get(forward)
    if got is not None:
        return got
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.example_libraries import optimizers

    @jax.jit
    def fit(params, inputs, target, weights, pi, pj, pw, gap, steps, lr, wd, rank):
        # params: one set per seed, stacked (fresh ones, or a model to fine-tune)
        opt_init, opt_update, get_params = optimizers.adam(lr)
        wsum = jnp.maximum(jnp.sum(weights), 1e-9)

        def loss(p):
            corr = forward(p, *inputs)
            err = corr - target
            fit_loss = jnp.sum(weights * err * err) / wsum
            # ranking on predicted log times (log roofline + correction): the pair
            # (pi, pj) has label[pi] > label[pj]; gap = log_roof[pi] - log_roof[pj]
            d = corr[pi] - corr[pj] + gap
            fit_loss = fit_loss + rank * jnp.sum(pw * jax.nn.softplus(-2.0 * d))
            reg = sum(jnp.sum(v * v) for k_, v in p.items() if k_.startswith("w"))
            return fit_loss + wd * reg

        def total(stacked):
            return jnp.sum(jax.vmap(loss)(stacked))

        def body(i, st):
            return opt_update(i, jax.grad(total)(get_params(st)), st)
        return get_params(lax.fori_loop(0, steps, body, opt_init(params)))

    _TRAINERS[forward] = fit
    return fit


def fit_seeds(forward, start, inputs: Sequence[np.ndarray], log_roof: np.ndarray,
              log_label: np.ndarray, weights: np.ndarray, groups: np.ndarray,
              cfg: FitSettings, pad_rows: int = PAD_ROWS) -> list[dict[str, np.ndarray]]:
    """Adam on squared log error (``weights``) plus the pairwise ranking loss within each
    program (``groups``), every seed of ``start`` (parameters stacked over seeds) at once;
    ``inputs``: the arrays ``forward`` takes after the parameters, one row per kernel.
    Returns each seed's parameters."""
    n = len(log_roof)
    rows = -(-n // pad_rows) * pad_rows

    def pad(a):
        out = np.zeros((rows,) + a.shape[1:], np.float32)
        out[:n] = a
        return out
    pi = np.zeros(MAX_PAIRS, np.int32)
    pj = np.zeros(MAX_PAIRS, np.int32)
    pw = np.zeros(MAX_PAIRS, np.float32)
    if cfg.rank_weight > 0:
        i, j, w = ranking_pairs(groups, log_label, weights, 0, MAX_PAIRS)
        if i is not None:
            pi[:len(i)], pj[:len(j)], pw[:len(w)] = i, j, w
    gap = (log_roof[pi] - log_roof[pj]).astype(np.float32)
    stacked = _trainer(forward)(start, tuple(pad(a) for a in inputs), pad(log_label - log_roof),
                                pad(weights), pi, pj, pw, gap, np.int32(cfg.steps),
                                np.float32(cfg.learning_rate), np.float32(cfg.weight_decay),
                                np.float32(cfg.rank_weight))
    stacked = {k: np.asarray(v) for k, v in stacked.items()}
    seeds = len(next(iter(stacked.values())))
    return [{k: v[s] for k, v in stacked.items()} for s in range(seeds)]


def _initial(cfg: TrainConfig, n_in: int, init: list[dict[str, np.ndarray]] | None):
    """Parameters to start from, stacked over seeds: fresh, or a model's (fine-tuning)."""
    if init is not None:
        return {k: np.stack([np.asarray(p[k], np.float32) for p in init]) for k in init[0]}
    import jax
    keys = jax.random.split(jax.random.PRNGKey(0), cfg.seeds)
    return jax.vmap(lambda k: _init(k, n_in, cfg, len(VOCAB)))(keys)


def ranking_pairs(groups: np.ndarray, log_label: np.ndarray, weights: np.ndarray, seed: int,
           max_pairs: int = 20000):
    """Ordered pairs (slower, faster) of kernels of one program whose labels differ by
    more than 10%, sampled to at most ``max_pairs``; weights sum to 1."""
    rng = np.random.RandomState(seed)
    ii, jj = [], []
    for g in np.unique(groups):
        idx = np.nonzero(groups == g)[0]
        if len(idx) < 2:
            continue
        a = np.repeat(idx, len(idx))
        b = np.tile(idx, len(idx))
        keep = log_label[a] > log_label[b] + 0.1
        ii.append(a[keep])
        jj.append(b[keep])
    if not ii:
        return None, None, None
    i = np.concatenate(ii)
    j = np.concatenate(jj)
    if len(i) > max_pairs:
        pick = rng.choice(len(i), max_pairs, replace=False)
        i, j = i[pick], j[pick]
    if len(i) == 0:
        return None, None, None
    w = weights[i] * weights[j]
    w = w / w.sum()
    return i.astype(np.int32), j.astype(np.int32), w.astype(np.float32)


class CostModel:
    """What every learned model shares: the device profile it was trained against, what
    it was trained on (``meta``), its files, and prediction as a correction to the
    roofline of the device it predicts for."""

    kind = "model"

    def __init__(self, device: DeviceProfile, meta: dict | None = None) -> None:
        self.device = device
        self.meta = meta or {}
        self.path = ""

    def arrays(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    @property
    def key(self) -> str:
        """Content identity: a hash of the arrays, the device profile and what
        ``describe`` says."""
        h = hashlib.blake2b(digest_size=16)
        for name, a in sorted(self.arrays().items()):
            arr = np.ascontiguousarray(np.asarray(a))
            h.update(f"{name}{arr.dtype}{arr.shape}".encode())
            h.update(arr.tobytes())
        h.update(self.device.key.encode())
        h.update(self.describe().encode())
        return h.hexdigest()

    @property
    def is_default(self) -> bool:
        return bool(self.meta.get("default"))

    def describe(self) -> str:
        progs = self.meta.get("programs", [])
        fams = self.meta.get("families") or []
        what = {"gnn": "graph network", "gbm": "gradient-boosted trees"}.get(self.kind, "MLP")
        if self.is_default:
            return (f"default model — trained on {len(progs)} programs of {len(fams)} "
                    f"families ({what}, {self.meta.get('kernels', '?')} kernels)")
        where = f" ({self.path})" if self.path else ""
        base = self.meta.get("fine_tuned_from")
        tuned = (f", fine-tuned from a model of {len(base.get('programs') or [])} programs"
                 if isinstance(base, dict) else "")
        return (f"learned model{where} ({what}), trained on {len(progs)} programs, "
                f"{self.meta.get('kernels', '?')} kernels{tuned}")

    def correction(self, module: HloModule, insts: Sequence[HloInstruction],
                   costs: Sequence[KernelCost], device: DeviceProfile) -> np.ndarray:
        raise NotImplementedError

    def correction_dataset(self, ds: Dataset) -> np.ndarray:
        raise NotImplementedError

    def predict_dataset(self, ds: Dataset) -> np.ndarray:
        """Predicted µs for a dataset (its features and roofline on the dataset's device)."""
        if len(ds) == 0:
            return np.zeros((0,))
        return np.exp(ds.log_roofline.astype(np.float64) + self.correction_dataset(ds))

    def predict(self, module: HloModule, insts: Sequence[HloInstruction],
                costs: Sequence[KernelCost] | None = None,
                device: DeviceProfile | None = None) -> np.ndarray:
        """Predicted µs per kernel on ``device`` (default: the one it was trained
        against): its roofline there, times the learned correction of features that are
        themselves times on that device, so a model trained on one machine's calibrated
        profile predicts another's."""
        if not insts:
            return np.zeros((0,))
        device = device or self.device
        costs = costs if costs is not None else costs_of(module, insts)
        roof = np.asarray([roofline_us(c, device) for c in costs], np.float64)
        return np.exp(np.log(np.maximum(roof, 1e-3))
                      + self.correction(module, insts, costs, device))

    # -- files: <path>.npz (arrays) + <path>.json (everything else)
    def save(self, path: str) -> str:
        base = path[:-4] if path.endswith(".npz") else path
        os.makedirs(os.path.dirname(os.path.abspath(base)) or ".", exist_ok=True)
        # numpy's stub matches **arrays against savez's allow_pickle: bool
        np.savez_compressed(base + ".npz", **self.arrays())  # type: ignore[arg-type]
        meta = dict(self.meta)
        meta.update({"format": FORMAT, "version": VERSION, "model": self.kind,
                     "feature_version": FEATURE_VERSION, "vocab": list(VOCAB),
                     "numeric": list(NUMERIC), "device": self.device.to_json()})
        meta.update(self.extra_meta())
        with open(base + ".json", "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        self.path = base + ".npz"
        return self.path

    def extra_meta(self) -> dict:
        return {}


def read_model_files(path: str) -> tuple[str, dict, dict[str, np.ndarray]]:
    """(base path, meta, arrays) of a saved model, checked to be one this version of HLO
    Lens can use (raises ValueError saying why not)."""
    base = path[:-4] if path.endswith(".npz") else (path[:-5] if path.endswith(".json") else path)
    try:
        with open(base + ".json", encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{base}.json: not a readable cost model ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{base}.json: not an HLO Lens cost model")
    if meta.get("feature_version") != FEATURE_VERSION or meta.get("vocab") != list(VOCAB) \
            or meta.get("numeric") != list(NUMERIC):
        raise ValueError(f"{base}.json: made by another version of HLO Lens (features "
                         f"version {meta.get('feature_version', 1)}, this one reads "
                         f"{FEATURE_VERSION}); train it again")
    try:
        with np.load(base + ".npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise ValueError(f"{base}.npz: not a readable cost model ({e})") from None
    return base, meta, arrays


class SeededModel(CostModel):
    """What both kinds (MLP, graph network) are: parameters of each seed, averaged, over
    numeric features standardized by the training set's mean and std."""

    def __init__(self, params: list[dict[str, np.ndarray]], mean: np.ndarray, std: np.ndarray,
                 device: DeviceProfile, meta: dict | None = None) -> None:
        super().__init__(device, meta)
        self.params = params
        self.mean = mean
        self.std = std

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"mean": np.asarray(self.mean, np.float32), "std": np.asarray(self.std, np.float32)}
        for s, p in enumerate(self.params):
            for k, v in p.items():
                out[f"seed{s}.{k}"] = np.asarray(v, np.float32)
        return out

    def extra_meta(self) -> dict:
        return {"seeds": len(self.params)}

    def standardized(self, numeric) -> np.ndarray:
        return np.clip((np.asarray(numeric, np.float64) - self.mean) / self.std, -CLIP, CLIP)

    @classmethod
    def from_files(cls, base: str, meta: dict, arrays: dict[str, np.ndarray]):
        """The model ``read_model_files`` read (its kind already checked)."""
        params = []
        for s in range(int(meta.get("seeds", 1))):
            prefix = f"seed{s}."
            params.append({k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)})
        model = cls(params, arrays["mean"], arrays["std"],
                    DeviceProfile.from_json(meta["device"]), meta)
        model.path = base + ".npz"
        return model


def normalisation(ds: Dataset, init: SeededModel | None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std that standardize the numeric features: a fine-tuned model keeps its
    start's; else the dataset's (a feature constant in training stays tame)."""
    if init is not None:
        return init.mean.astype(np.float64), init.std.astype(np.float64)
    return ds.numeric.mean(0), np.maximum(ds.numeric.std(0), 0.1)


def try_load_model(path: str, which: str) -> tuple[CostModel | None, str]:
    """The ``which`` ('saved', 'default') model at ``path``, or (None, why not) when it is
    missing, stale or broken: the caller falls back and says why."""
    if not os.path.exists(path):
        return None, f"no {which} cost model"
    try:
        return load_model(path), ""
    except (OSError, ValueError, KeyError) as e:
        return None, f"{which} cost model not used: {str(e).splitlines()[0]}"


def load_model(path: str) -> CostModel:
    """A saved model of any kind (MLP, graph network, gradient-boosted trees)."""
    base, meta, _ = read_model_files(path)
    if meta.get("model") == "gnn":
        from .graph_model import GraphModel
        return GraphModel.load(path)
    if meta.get("model") == "gbm":
        from .boosted import BoostedModel
        return BoostedModel.load(path)
    return LearnedModel.load(path)


class LearnedModel(SeededModel):
    """The MLP: normalisation, parameters of each seed, and what it was trained on."""

    kind = "mlp"

    def _correction(self, numeric, counts, weighted) -> np.ndarray:
        x = self.standardized(numeric)
        counts = np.asarray(counts, np.float64)
        weighted = np.asarray(weighted, np.float64)
        outs = [_forward_np({k: np.asarray(v, np.float64) for k, v in p.items()}, x, counts,
                            weighted) for p in self.params]
        return np.clip(np.mean(outs, axis=0), -MAX_CORRECTION, MAX_CORRECTION)

    def correction_dataset(self, ds: Dataset) -> np.ndarray:
        return self._correction(ds.numeric, ds.counts, ds.weighted)

    def correction(self, module, insts, costs, device) -> np.ndarray:
        num, cnt, wtd = module_features(module, insts, costs, device)
        return self._correction(num, cnt, wtd)

    @staticmethod
    def load(path: str) -> "LearnedModel":
        base, meta, arrays = read_model_files(path)
        if meta.get("model", "mlp") != "mlp":
            raise ValueError(f"{base}.json: a {meta.get('model')} model, not an MLP")
        return LearnedModel.from_files(base, meta, arrays)


def program_weights(programs: Sequence[str]) -> np.ndarray:
    """Each program weighs the same in total (sqrt-damped, so big ones still count more)."""
    names, inverse, counts = np.unique(np.asarray(programs), return_inverse=True,
                                       return_counts=True)
    return (1.0 / np.sqrt(counts[inverse])).astype(np.float32)


def train(ds: Dataset, device: DeviceProfile, cfg: TrainConfig | None = None,
          meta: dict | None = None, init: "LearnedModel | None" = None) -> "LearnedModel":
    """Fit a model on a dataset (built with ``device``'s roofline). ``init``: a model to
    fine-tune (its normalisation and weights are the start; its training programs are
    kept in the new model's record)."""
    cfg = cfg or TrainConfig()
    if len(ds) < 4:
        raise ValueError(f"too little data to train on: {len(ds)} measured kernels")
    mean, std = normalisation(ds, init)
    x = np.clip((ds.numeric - mean) / std, -CLIP, CLIP).astype(np.float32)
    log_roof = ds.log_roofline.astype(np.float32)
    log_label = np.log(np.maximum(ds.label_us, 1e-3)).astype(np.float32)
    _, groups = np.unique(np.asarray(ds.program), return_inverse=True)
    start = _initial(cfg, x.shape[1], init.params if init is not None else None)
    params = fit_seeds(_forward, start, (x, ds.counts, ds.weighted), log_roof, log_label,
                       program_weights(ds.program), groups, cfg)
    info = {"model": "mlp", "programs": ds.programs, "kernels": len(ds),
            "config": cfg.__dict__}
    if init is not None:
        info["fine_tuned_from"] = fine_tune_record(init)
    info.update(meta or {})
    return LearnedModel(params, mean.astype(np.float32), std.astype(np.float32), device, info)


def fine_tune_record(base) -> dict:
    """What a fine-tuned model keeps of the model it started from."""
    return {k: base.meta.get(k) for k in ("model", "programs", "families", "corpus_hash",
                                         "calibration", "kernels") if k in base.meta}


# --------------------------------------------------------------------------- evaluation

def _metrics(pred: np.ndarray, meas: np.ndarray) -> dict[str, float]:
    return M.all_metrics(pred, meas)


def noise_floor(ds: Dataset) -> dict[str, float]:
    ok = ~(np.isnan(ds.half_a) | np.isnan(ds.half_b))
    if ok.sum() < 2:
        return {k: math.nan for k in M.METRICS}
    return M.noise_floor(ds.half_a[ok], ds.half_b[ok])


@dataclass
class FoldResult:
    program: str
    kernels: int
    roofline: dict[str, float]
    learned: dict[str, float]
    noise_floor: dict[str, float]
    ratio: float = math.nan            # median predicted / measured, learned
    roofline_ratio: float = math.nan   # the same for the roofline
    # the same between the two halves of the measured runs: how close the measurement
    # itself comes to its own program-level ratio
    noise_ratio: float = math.nan


def median_ratio(pred: np.ndarray, meas: np.ndarray) -> float:
    ok = np.asarray(meas) > 0
    return float(np.median(np.asarray(pred)[ok] / np.asarray(meas)[ok])) if ok.any() else math.nan


def halves_ratio(ds: Dataset) -> float:
    """Median over kernels of one half of the runs' time over the other's."""
    ok = ~(np.isnan(ds.half_a) | np.isnan(ds.half_b))
    return median_ratio(ds.half_a[ok], ds.half_b[ok]) if ok.sum() >= 2 else math.nan


def leave_out(ds: Dataset, fit, group_of: dict[str, str] | None = None,
              log=None, keep: dict[str, np.ndarray] | None = None) -> list[FoldResult]:
    """For each program: ``fit`` (Dataset -> model) on every program outside its group
    (``group_of``: program -> group, e.g. its family; default: the program alone), predict
    it; metrics per held-out program for the roofline the dataset was built with and the
    model, with the noise floor. One model per group. ``keep``: filled with each
    program's predictions (µs per kernel, in dataset order)."""
    out = []
    models: dict[str, CostModel] = {}
    group_of = group_of or {}
    for prog in ds.programs:
        held = np.array([p == prog for p in ds.program])
        test = ds.subset(held)
        if len(test) < 2:
            continue
        group = group_of.get(prog, prog)
        model = models.get(group)
        if model is None:
            out_of_group = np.array([group_of.get(p, p) != group for p in ds.program])
            model = models[group] = fit(ds.subset(out_of_group))
        pred = model.predict_dataset(test)
        if keep is not None:
            keep[prog] = pred
        res = FoldResult(prog, len(test), _metrics(test.roofline_us, test.label_us),
                         _metrics(pred, test.label_us), noise_floor(test),
                         median_ratio(pred, test.label_us),
                         median_ratio(test.roofline_us, test.label_us),
                         halves_ratio(test))
        if log is not None:
            log(f"{prog}: {len(test)} kernels, tau roofline {res.roofline['kendall_tau']:.2f} "
                f"learned {res.learned['kendall_tau']:.2f} (floor "
                f"{res.noise_floor['kendall_tau']:.2f}), median APE "
                f"{res.roofline['median_ape']:.0%} / {res.learned['median_ape']:.0%}")
        out.append(res)
    return out


def leave_one_program_out(ds: Dataset, device: DeviceProfile, cfg: TrainConfig | None = None,
                          log=None, group_of: dict[str, str] | None = None) -> list[FoldResult]:
    """:func:`leave_out` with the MLP: for each program, train on the others, predict it.

    ``group_of`` (program -> group, e.g. its family) makes it stricter: a program's whole
    group is left out of its training set, so no sibling of another size helps."""
    return leave_out(ds, lambda d: train(d, device, cfg), group_of, log)


def summarize(folds: Sequence[FoldResult]) -> dict[str, dict[str, float]]:
    """Mean over held-out programs of each metric, for roofline, learned and noise floor."""
    out: dict[str, dict[str, float]] = {}
    for which in ("roofline", "learned", "noise_floor"):
        out[which] = {}
        for k in M.METRICS:
            vals = [getattr(f, which)[k] for f in folds]
            vals = [v for v in vals if not math.isnan(v)]
            out[which][k] = float(np.mean(vals)) if vals else math.nan
    return out
