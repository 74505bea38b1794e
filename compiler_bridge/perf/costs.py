"""Analytical per-kernel costs from the HLO: flops, transcendentals, bytes, roofline time.

A *kernel* is an instruction that runs on its own and gets timed: an instruction of the
ENTRY computation or of a computation that control flow runs (``while`` body/condition,
``conditional`` branches, ``call``), other than the free ones (parameter, constant,
tuple, get-tuple-element, bitcast...). Fused computations are costed as part of their
fusion, never on their own.

Counting follows XLA's ``HloCostAnalysis`` where it can (one flop per element of an
elementwise op, transcendentals apart, ``2 * M * N * K`` for a dot) with two corrections
that a naive roofline gets wrong (DESIGN.md section 4):

* in-place ``dynamic-update-slice`` (a DUS at a fusion's root, its buffer a fusion
  parameter, or a top-level DUS): the buffer is neither read nor rewritten, only the
  update is;
* fusion parameters that are only sliced (``slice``, ``dynamic-slice``, ``gather``) are read
  as far as the slices go, not whole.

Wide fusions (a hundred operands) cost their bytes plus a per-buffer overhead
(``DeviceProfile.per_buffer_us``), since each operand costs address setup and its own
stream. Roofline time: ``max(flops / peak, bytes / bandwidth) + overhead``.

A convolution runs at the matmul rate only when XLA:CPU hands it to a library (Eigen,
YNNPACK): one with feature or batch groups (depthwise) runs at the profile's
``grouped_conv_flops``, and one whose dimensions are not in the library's order
(``b01f_01io->b01f``: a backward-filter convolution often is not) in generated loops at
the vector rate of one thread (``conv_path``; CPU profiles only).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

from .devices import DeviceProfile
from ..hlo import HloComputation, HloInstruction, HloModule, Shape, walk_through

if TYPE_CHECKING:
    from ..memory import BufferAssignment

# Instructions that never become a kernel of their own.
FREE_OPCODES = frozenset({
    "parameter", "constant", "get-tuple-element", "tuple", "bitcast", "after-all",
    "add-dependency", "opt-barrier", "domain", "get-dimension-size", "set-dimension-size",
})
# Control flow: the instruction's called computations run as kernels of their own.
CONTROL_FLOW = frozenset({"while", "conditional", "call", "async-start", "async-update",
                          "async-done"})

TRANSCENDENTAL = frozenset({
    "exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic",
    "rsqrt", "sqrt", "cbrt", "sine", "cosine", "tan", "atan2", "power", "erf",
})
# Far dearer on XLA:CPU than exp or tanh (a profile may measure them apart: trig_flops).
TRIGONOMETRIC = frozenset({"sine", "cosine", "tan"})
ELEMENTWISE = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "compare", "select",
    "and", "or", "xor", "not", "negate", "abs", "sign", "floor", "ceil", "round-nearest-afz",
    "round-nearest-even", "remainder", "clamp", "convert", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "popcnt", "count-leading-zeros",
    "is-finite", "real", "imag", "complex", "reduce-precision", "stochastic-convert",
    "bitcast-convert",
})
DATA_MOVEMENT = frozenset({
    "broadcast", "reshape", "transpose", "copy", "slice", "dynamic-slice",
    "dynamic-update-slice", "concatenate", "pad", "gather", "iota", "reverse", "bitcast",
    "copy-start", "copy-done",
})
SLICING = frozenset({"slice", "dynamic-slice", "gather"})
MATMUL_CUSTOM_CALLS = ("__cublas$gemm", "__cublas$lt$matmul", "__onednn$matmul",
                       "__cublas$lt$matmul$f8")


@dataclass(frozen=True)
class KernelCost:
    """What one execution of a kernel computes and moves."""

    instruction: str
    computation: str
    opcode: str
    fusion_kind: str
    flops: float
    transcendentals: float
    bytes_read: float
    bytes_written: float
    dtype: str                       # element type that sets the flop rate
    matmul: bool                     # has a dot/convolution (runs at the matmul rate)
    buffers: int                     # operand + output buffers (leaves)
    trip_count: int | None = None    # while loops with a known trip count
    in_place: bool = False           # an in-place dynamic-update-slice or scatter
    loop_kernels: int = 0            # while/conditional: kernels its body/branch runs each time
    output_bytes: float = 0.0        # bytes written straight into a program output buffer
    partitions: int = 1              # XLA:CPU splits the kernel over this many threads
    conv_path: str = ""              # a convolution's: '' (a library), 'grouped', 'loops'
    trig: float = 0.0                # of the transcendentals, sines, cosines and tangents
    fresh_bytes: float = 0.0         # of the bytes written, into pages mapped fresh this run
    fft_work: float = 0.0            # an FFT's flops as 5·n·log2(n) per transform
    window_flops: float = 0.0        # of the flops, reduce-windows in generated loops
    notes: tuple[str, ...] = field(default=())

    @property
    def bytes(self) -> float:
        return self.bytes_read + self.bytes_written

    @property
    def intensity(self) -> float:
        """Flops per byte moved (0 when nothing is moved)."""
        return self.flops / self.bytes if self.bytes > 0 else 0.0

    def to_json(self) -> dict:
        return {"instruction": self.instruction, "computation": self.computation,
                "opcode": self.opcode, "fusion_kind": self.fusion_kind, "flops": self.flops,
                "transcendentals": self.transcendentals, "bytes_read": self.bytes_read,
                "bytes_written": self.bytes_written, "bytes": self.bytes,
                "intensity": self.intensity, "dtype": self.dtype, "matmul": self.matmul,
                "conv_path": self.conv_path, "trig": self.trig,
                "buffers": self.buffers, "trip_count": self.trip_count,
                "in_place": self.in_place, "partitions": self.partitions,
                "fresh_bytes": self.fresh_bytes, "fft_work": self.fft_work,
                "window_flops": self.window_flops}


# --------------------------------------------------------------------------- which kernels

def is_single_kernel_call(inst: HloInstruction) -> bool:
    """A ``call`` that XLA:CPU compiles into one kernel (``xla_cpu_small_call``): small
    loops are wrapped this way and run with no per-op events inside."""
    return inst.opcode == "call" and "xla_cpu_small_call" in inst.attributes.get(
        "frontend_attributes", "")


def executed_computations(module: HloModule) -> list[HloComputation]:
    """ENTRY and every computation that control flow runs from it, in module order."""
    if module.entry is None:
        return []
    seen = {module.entry.name}
    stack = [module.entry]
    while stack:
        comp = stack.pop()
        for inst in comp.instructions:
            if inst.opcode in CONTROL_FLOW and not is_single_kernel_call(inst):
                for callee in inst.called_names:
                    c = module.get_computation(callee)
                    if c is not None and c.name not in seen and not c.is_fusion:
                        seen.add(c.name)
                        stack.append(c)
    return [c for c in module.computations if c.name in seen]


def kernels(module: HloModule) -> list[HloInstruction]:
    """Instructions that run as kernels (see the module docstring), in schedule order."""
    return [inst for comp in executed_computations(module) for inst in comp.instructions
            if inst.opcode not in FREE_OPCODES]


def runs_per_step(module: HloModule) -> dict[str, tuple[float, bool]]:
    """Computation name -> (times it runs per execution of the module, whether that is
    known): the entry once; a while loop's body once per trip and its condition once
    more (the trip count XLA wrote in the loop's backend config; a loop without one
    counts UNKNOWN_TRIP_COUNT trips, not known); each branch of a conditional once (at
    most: an upper bound, not known); what a call calls as often as the call runs. Only
    computations control flow runs (``executed_computations``) are counted."""
    executed = {c.name: c for c in executed_computations(module)}
    if module.entry is None or not executed:
        return {}
    calls: dict[str, list[tuple[str, float, bool]]] = {}   # caller -> (callee, times, known)
    waiting = dict.fromkeys(executed, 0)                     # callee -> callers not yet done
    for comp in executed.values():
        for inst in comp.instructions:
            if inst.opcode not in CONTROL_FLOW or is_single_kernel_call(inst):
                continue
            trips = _trip_count(inst) if inst.opcode == "while" else None
            for callee in inst.called_names:
                if callee not in executed:
                    continue
                if inst.opcode == "while":
                    times = float(trips if trips is not None else UNKNOWN_TRIP_COUNT)
                    times += 1.0 if callee == inst.condition else 0.0
                    ok = trips is not None
                else:
                    times, ok = 1.0, inst.opcode != "conditional"
                calls.setdefault(comp.name, []).append((callee, times, ok))
                waiting[callee] += 1
    # callers before callees (a computation's runs are its callers' summed)
    runs: dict[str, tuple[float, bool]] = {module.entry.name: (1.0, True)}
    ready = [module.entry.name]
    while ready:
        name = ready.pop()
        n, known = runs.get(name, (0.0, True))
        for callee, times, ok in calls.get(name, []):
            before, was = runs.get(callee, (0.0, True))
            runs[callee] = (before + n * times, was and known and ok)
            waiting[callee] -= 1
            if waiting[callee] == 0:
                ready.append(callee)
    return runs


# --------------------------------------------------------------------------- flops

def _elements(shape: Shape) -> int:
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
    return 2.0 * _elements(out) * k


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
        return 2.0 * _elements(out) * per_output
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
        cfg = inst.backend_config
        dims = None
        if isinstance(cfg, dict):
            gemm = cfg.get("gemm_backend_config", cfg)
            dims = gemm.get("dot_dimension_numbers") if isinstance(gemm, dict) else None
        contracting: tuple[int, ...] = ()
        if isinstance(dims, dict):
            contracting = tuple(int(x) for x in dims.get("lhs_contracting_dimensions", []))
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
        return 0.0, float(_elements(out)), False
    if op in ELEMENTWISE:
        return float(_elements(out)), 0.0, False
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
            return float(max(elems - _elements(out), 0) * per / n_in), 0.0, False
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
        return float(_elements(out) * per), 0.0, False
    if op == "sort":
        n = ops[0].shape.element_count if ops else 0
        per = _apply_ops(module, inst.to_apply)
        return float(n * max(math.log2(max(n, 2)), 1.0) * per), 0.0, False
    if op == "fft":          # XLA: 2 * 4 (a complex FMA) * prod(floor(log2 length)) * input
        logs = 1
        for length in re.findall(r"\d+", inst.attribute("fft_length") or ""):
            logs *= max(int(length), 1).bit_length() - 1
        n_in = ops[0].shape.leaves()[0].element_count if ops else _elements(out)
        return 8.0 * logs * n_in, 0.0, False
    if op == "triangular-solve" and len(ops) >= 2:
        a, b = ops[0].shape, ops[1].shape
        m = a.dimensions[-1] if a.rank else 1
        return float(b.element_count * m), 0.0, True
    if op == "cholesky":
        n = out.dimensions[-1] if out.rank else 1
        return float(out.element_count * n / 3.0), 0.0, True
    if op in ("rng", "rng-bit-generator", "rng-get-and-update-state"):
        return float(_elements(out) * 4), 0.0, False
    if op == "custom-call":
        f, mm = _custom_call_flops(inst, ops)
        return f, 0.0, mm
    if op == "while" and module is not None and _in_single_kernel(inst):
        trips = _trip_count(inst) or 1
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


# --------------------------------------------------------------------------- bytes

def _through_bitcasts(inst: HloInstruction) -> list[tuple[HloInstruction, HloInstruction]]:
    """(user, operand-as-seen-by-user) pairs, looking through bitcasts/reshapes."""
    out = []
    stack = [inst]
    seen = set()
    while stack:
        cur = stack.pop()
        for u in cur.users:
            if u.name in seen:
                continue
            if u.opcode in ("bitcast", "reshape") and u.shape.element_count == cur.shape.element_count:
                seen.add(u.name)
                stack.append(u)
            else:
                out.append((u, cur))
    return out


def _feeds_root(inst: HloInstruction, comp: HloComputation) -> bool:
    """Is ``inst`` the root, an element of a root tuple, or a bitcast chain to one?"""
    root = comp.root
    cur = inst
    for _ in range(8):
        if cur is root:
            return True
        users = cur.users
        if len(users) != 1:
            return False
        u = users[0]
        if u.opcode == "tuple" and u is root:
            return True
        if u.opcode not in ("bitcast", "reshape"):
            return False
        cur = u
    return False


def _in_place_dus(comp: HloComputation) -> dict[str, HloInstruction]:
    """Update instructions of a fused computation that write in place: name -> the
    dynamic-update-slice or scatter.

    In place when it feeds the root and its buffer (operand 0) is, through bitcasts, a
    parameter of the fusion: XLA then aliases the output with that operand (a copy kernel
    before the fusion pays for the operand when it cannot), and the kernel touches only
    the update window. XLA:CPU wraps every scatter in such a fusion: the roofline of one
    that adds 256 rows into a 16,000-row table was 1.6 ms against 50 µs measured."""
    out = {}
    for inst in comp.instructions:
        if inst.opcode not in ("dynamic-update-slice", "scatter") or not inst.operand_names:
            continue
        if inst.opcode == "scatter" and len(inst.operands) != 3:
            continue       # a variadic scatter: several buffers, kept as full reads
        buf = inst.operands[0] if inst.operands else None
        while buf is not None and buf.opcode in ("bitcast", "reshape") and buf.operands:
            buf = buf.operands[0]
        if buf is not None and buf.opcode == "parameter" and _feeds_root(inst, comp):
            out[inst.name] = inst
    return out


def _update_bytes(inst: HloInstruction) -> float:
    """What an in-place update writes: a dynamic-update-slice's update, a scatter's
    updates (at most the whole buffer)."""
    if inst.opcode == "scatter":
        return float(min(inst.operands[2].shape.byte_size, inst.shape.byte_size))
    return float(inst.operands[1].shape.byte_size)


# ops whose every output element needs just one element of each operand: a slice of
# their result needs only that share of their operands
_PER_ELEMENT = ELEMENTWISE | TRANSCENDENTAL | {"bitcast", "reshape", "copy", "transpose"}


def _demanded(comp: HloComputation) -> dict[str, float]:
    """The share of each fused instruction's elements the kernel computes. XLA:CPU's loop
    emitter computes each output element on demand, so under a slice only the sliced
    elements of elementwise producers are computed, and only their share of a parameter
    read (recsys: a slice of one feature out of 27 after an add; wavenet: half the
    channels after a bias add). The root's outputs count whole; an instruction's share is
    the largest any user asks; anything but a per-element op or a slice asks all."""
    share: dict[str, float] = {}
    root = comp.root
    outs = set(root.operand_names) if root is not None and root.opcode == "tuple" else set()
    for inst in reversed(comp.instructions):
        if inst is root or inst.name in outs:
            share[inst.name] = 1.0
        mine = share.get(inst.name, 0.0)
        for op in inst.operands:
            if inst.opcode in ("slice", "dynamic-slice") and op is inst.operands[0]:
                ask = mine * inst.shape.element_count / max(op.shape.element_count, 1)
            elif inst.opcode in _PER_ELEMENT or inst.opcode == "tuple":
                ask = mine
            else:
                ask = 1.0
            share[op.name] = min(max(share.get(op.name, 0.0), ask), 1.0)
    return share


def _param_read_bytes(param: HloInstruction, comp: HloComputation,
                      in_place: dict[str, HloInstruction],
                      demanded: dict[str, float] | None = None) -> float:
    full = float(param.shape.byte_size)
    uses = _through_bitcasts(param)
    if not uses:
        return 0.0
    total = 0.0
    for user, seen_as in uses:
        if user.opcode in SLICING and user.operand_names and user.operand_names[0] == seen_as.name:
            total += user.shape.byte_size
        elif user.name in in_place and user.operand_names and user.operand_names[0] == seen_as.name:
            # the in-place buffer: untouched outside the update window, which a scatter
            # reads to combine into
            if user.opcode == "scatter":
                total += _update_bytes(user)
        elif user.opcode == "dynamic-update-slice" and user.operand_names \
                and user.operand_names[0] == seen_as.name:
            # a DUS into a copy of the parameter: read what is not overwritten
            upd = user.operands[1].shape.byte_size if len(user.operands) > 1 else 0
            total += max(full - upd, 0.0)
        elif demanded is not None and user.opcode in _PER_ELEMENT:
            total += full * demanded.get(user.name, 1.0)
        else:
            return full
    return min(total, full)


def _fusion_bytes(inst: HloInstruction, comp: HloComputation) -> tuple[float, float, bool]:
    in_place = _in_place_dus(comp)
    demanded = _demanded(comp)
    params = comp.parameters
    read = 0.0
    for p in params:
        read += _param_read_bytes(p, comp, in_place, demanded)
    # outputs: an in-place DUS writes only its update
    written = 0.0
    root = comp.root
    outs = list(root.operands) if root is not None and root.opcode == "tuple" else [root]
    for o in outs:
        if o is None:
            continue
        src = o
        while src.opcode in ("bitcast", "reshape") and src.operands:
            src = src.operands[0]
        if src.name in in_place and len(src.operands) > 1:
            written += _update_bytes(in_place[src.name])
        else:
            written += o.shape.byte_size
    return read, written, bool(in_place)


def instruction_bytes(inst: HloInstruction, module: HloModule | None = None
                      ) -> tuple[float, float, bool]:
    """(bytes read, bytes written, in_place) of one kernel execution."""
    op = inst.opcode
    if (op in CONTROL_FLOW and not is_single_kernel_call(inst)) or op in FREE_OPCODES:
        return 0.0, 0.0, False
    if op == "fusion" and module is not None and inst.called_names:
        comp = module.get_computation(inst.called_names[0])
        if comp is not None:
            return _fusion_bytes(inst, comp)
    ops = inst.operands
    out = float(inst.shape.byte_size)
    if op in ("dynamic-slice", "slice"):
        idx = sum(o.shape.byte_size for o in ops[1:])
        return out + idx, out, False
    if op == "gather":
        idx = ops[1].shape.byte_size if len(ops) > 1 else 0
        return out + idx, out, False
    if op == "dynamic-update-slice" and len(ops) >= 2:
        upd = float(ops[1].shape.byte_size)
        idx = sum(o.shape.byte_size for o in ops[2:])
        return upd + idx, upd, True
    if op == "scatter" and len(ops) >= 3:
        n = len(ops) // 2
        upd = float(sum(o.shape.byte_size for o in ops[n + 1:]))
        indices = float(ops[n].shape.byte_size)
        return upd * 2 + indices, upd, True
    read = float(sum(o.shape.byte_size for o in dict((o.name, o) for o in ops).values()))
    if op == "custom-call" and inst.shape.is_tuple and (inst.custom_call_target or "") in MATMUL_CUSTOM_CALLS:
        out = float(inst.shape.tuple_shapes[0].byte_size)   # (result, workspace)
    return read, out, False


# glibc's malloc maps a block larger than its largest mmap threshold (32 MiB on 64-bit)
# fresh from the kernel and unmaps it on free, so XLA:CPU's temp allocation of that size
# is new memory in every run: the first write to each page takes a page fault and the
# kernel zeroing it. Smaller blocks come back from the heap, already mapped.
MMAP_THRESHOLD = 32 << 20
PAGE = 4096
FRESH_PAGES = "fresh-pages"     # the module's derived entry: kernel -> fresh bytes


def fresh_pages(module: HloModule, assignment: "BufferAssignment") -> dict[str, float]:
    """Bytes of fresh pages each ENTRY kernel writes first in a run: pages of a temp
    allocation of at least ``MMAP_THRESHOLD`` that no kernel before it in the schedule
    touched. A loop or call takes the first touches of everything inside it (its kernels
    run many times; only the first run pays). ssm_l_f32_train, 168 MiB of temps: broadcasts
    writing 16 MiB each into fresh pages ran 6-7 ms against a roofline of 0.2 ms."""
    big = {a.index: a.size for a in assignment.allocations
           if a.is_temp and a.size >= MMAP_THRESHOLD}
    if not big or module.entry is None:
        return {}
    where: dict[str, list[tuple[int, int, int]]] = {}
    for a in assignment.allocations:
        if a.index in big:
            for v in a.values:
                where.setdefault(v.instruction, []).append((a.index, v.offset, v.size))
    # pages touched so far, per allocation, as a sorted list of disjoint [lo, hi) runs
    touched: dict[int, list[tuple[int, int]]] = {i: [] for i in big}

    def touch(alloc: int, lo: int, hi: int) -> int:
        runs = touched[alloc]
        new = hi - lo
        merged_lo, merged_hi = lo, hi
        keep = []
        for a, b in runs:
            if b < lo or a > hi:
                keep.append((a, b))
                continue
            new -= max(0, min(b, hi) - max(a, lo))
            merged_lo, merged_hi = min(merged_lo, a), max(merged_hi, b)
        keep.append((merged_lo, merged_hi))
        keep.sort()
        touched[alloc] = keep
        return new

    def inside(inst: HloInstruction) -> list[str]:
        """Everything a loop or call runs, nested too (a stack: call chains can be
        thousands deep)."""
        acc: list[str] = []
        seen: set[str] = set()
        stack = list(inst.called_names)
        while stack:
            name = stack.pop()
            comp = module.get_computation(name)
            if name in seen or comp is None:
                continue
            seen.add(name)
            for sub in comp.instructions:
                acc.append(sub.name)
                stack.extend(sub.called_names)
        return acc

    out: dict[str, float] = {}
    for inst in module.entry.instructions:
        names = [inst.name]
        if inst.opcode in CONTROL_FLOW or inst.opcode == "call":
            names += inside(inst)
        new = 0
        for n in names:
            for alloc, off, size in where.get(n, ()):
                new += touch(alloc, off // PAGE, (off + size + PAGE - 1) // PAGE)
        if new:
            out[inst.name] = float(new * PAGE)
    return out


def _no_pages(module: HloModule) -> dict[str, float]:
    return {}


def fft_work(inst: HloInstruction) -> float:
    """An FFT's flops as the usual 5·n·log2(n) per transform of n points (n the product of
    ``fft_length``), times the transforms (the operand's other elements). XLA's count
    multiplies the log2 of each length instead (``instruction_flops``): 3x more for a 2-D
    64x64 transform, which is why the roofline prices FFTs by this one."""
    lengths = [int(x) for x in re.findall(r"\d+", inst.attribute("fft_length") or "")]
    if not lengths or not inst.operands:
        return 0.0
    n = math.prod(max(x, 1) for x in lengths)
    shape = inst.operands[0].shape.leaves()[0]
    dims = shape.dimensions[:max(shape.rank - len(lengths), 0)]
    return 5.0 * math.prod(dims) * n * math.log2(max(n, 2))


# --------------------------------------------------------------------------- kernel cost

def _trip_count(inst: HloInstruction) -> int | None:
    cfg = inst.backend_config if "backend_config" in inst.attributes else None
    if isinstance(cfg, dict):
        n = (cfg.get("known_trip_count") or {}).get("n")
        try:
            return int(n) if n is not None else None
        except (TypeError, ValueError):
            return None
    return None


def _dtype(inst: HloInstruction, module: HloModule | None) -> str:
    """The element type that sets the rate: a dot's operand type, else the output's."""
    def first_dot(i: HloInstruction) -> HloInstruction | None:
        if i.opcode in ("dot", "convolution"):
            return i
        if i.opcode == "fusion" and module is not None:
            for callee in i.called_names:
                comp = module.get_computation(callee)
                for sub in comp.instructions if comp else ():
                    d = first_dot(sub)
                    if d is not None:
                        return d
        return None
    d = first_dot(inst)
    if d is not None and d.operands:
        return d.operands[0].shape.element_type
    leaves = [s for s in inst.shape.leaves() if s.is_array]
    return leaves[0].element_type if leaves else "f32"


def _library_order(labels) -> bool:
    """Are a convolution's dimensions in the order XLA:CPU's library calls take: batch,
    spatial in order, feature (input and output); spatial, in, out (kernel)?"""
    if labels is None:
        return False
    spatial = "".join(sorted(c for c in labels.lhs if c.isdigit()))
    return (labels.lhs == f"b{spatial}f" and labels.output == f"b{spatial}f"
            and labels.rhs == f"{spatial}io")


def fused_instructions(inst: HloInstruction, module: HloModule) -> list[HloInstruction]:
    """Every instruction a kernel runs inside (fused computations, nested fusions,
    reducers, single-kernel calls); none for control flow, whose bodies are kernels of
    their own."""
    out: list[HloInstruction] = []
    if inst.opcode in CONTROL_FLOW and not is_single_kernel_call(inst):
        return out
    seen: set[str] = set()
    stack = list(inst.called_names)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        comp = module.get_computation(name)
        if comp is None:
            continue
        for sub in comp.instructions:
            out.append(sub)
            stack.extend(sub.called_names)
    return out


def _kernel_instructions(inst: HloInstruction, module: HloModule | None) -> list[HloInstruction]:
    """The kernel itself and, for a fusion, every instruction it fuses (nested too)."""
    if inst.opcode != "fusion" or module is None:
        return [inst]
    return [inst] + fused_instructions(inst, module)


def trig_elements(inst: HloInstruction, module: HloModule | None = None) -> float:
    """Elements of sines, cosines and tangents one execution of a kernel computes."""
    return float(sum(_elements(i.shape) for i in _kernel_instructions(inst, module)
                     if i.opcode in TRIGONOMETRIC))


def window_flops(inst: HloInstruction, module: HloModule | None = None) -> float:
    """Flops of the reduce-windows of a kernel that XLA:CPU runs as generated scalar loops:
    every one outside a YNNPACK fusion (which takes max and sum windows; not a cumulative
    sum, nor the tree XLA's reduction rewriter makes of a large bf16 sum). The traced
    corpus's ran 20-40x slower than the vector rate's roofline."""
    if "__ynn_fusion" in inst.attributes.get("backend_config", ""):
        return 0.0
    return float(sum(instruction_flops(i, module)[0] for i in _kernel_instructions(inst, module)
                     if i.opcode == "reduce-window"))


def _minor(shape: Shape) -> int | None:
    """The logical dimension laid out contiguously (the first of ``minor_to_major`` with
    more than one element), None for a scalar-like or layout-less shape."""
    if not shape.is_array or shape.layout is None:
        return None
    for d in shape.layout.minor_to_major:
        if d < len(shape.dimensions) and shape.dimensions[d] > 1:
            return d
    return None


def moves_minor_dimension(inst: HloInstruction) -> bool:
    """Does a transpose or layout-changing copy move the contiguous dimension, so that one
    side is read or written with a stride? (A transpose of major dimensions copies
    contiguous rows.) How much slower depends on the sizes: a 1024x1024 one ran at 2 GB/s
    here, but one rate for every such kernel priced the corpus's worse than none, so only
    the learned models see it (a feature)."""
    if inst.opcode not in ("transpose", "copy") or not inst.operands:
        return False
    src, out = inst.operands[0].shape, inst.shape
    m_out, m_src = _minor(out), _minor(src)
    if m_out is None or m_src is None:
        return False
    if inst.opcode == "copy":
        return m_out != m_src
    dims = inst.dimensions or ()
    return m_out < len(dims) and dims[m_out] != m_src


def conv_path(inst: HloInstruction, module: HloModule | None = None) -> str:
    """How XLA:CPU runs the convolutions of a kernel (the kernel itself or what it fuses):
    '' a library call (or no convolution), 'grouped' one with feature or batch groups
    (depthwise: far below the matmul rate), 'loops' one whose dimensions are not in the
    library's order (generated loops)."""
    convs = [i for i in _kernel_instructions(inst, module) if i.opcode == "convolution"]
    path = ""
    for c in convs:
        if int(c.attribute("feature_group_count") or 1) > 1 \
                or int(c.attribute("batch_group_count") or 1) > 1:
            return "grouped"
        if not _library_order(c.dim_labels):
            path = "loops"
    return path


def kernel_cost(inst: HloInstruction, module: HloModule | None = None) -> KernelCost:
    """Flops, transcendentals and bytes of one execution of a kernel."""
    module = module if module is not None else (
        inst.computation.module if inst.computation is not None else None)
    flops, trans, mm = instruction_flops(inst, module)
    read, written, in_place = instruction_bytes(inst, module)
    buffers = len(set(inst.operand_names)) + len([s for s in inst.shape.leaves() if s.is_array])
    control = inst.opcode in CONTROL_FLOW and not is_single_kernel_call(inst)
    if control:
        buffers = 0
    comp = inst.computation.name if inst.computation is not None else ""
    output_bytes = written if _writes_program_output(inst) else 0.0
    fresh = module.derived(FRESH_PAGES, _no_pages) \
        if module is not None and comp == getattr(module.entry, "name", None) else {}
    loop_kernels = 0
    if control and module is not None:
        for callee in inst.called_names:
            c = module.get_computation(callee)
            if c is not None:
                n = sum(1 for i in c.instructions if i.opcode not in FREE_OPCODES)
                loop_kernels = loop_kernels + n if inst.opcode == "while" else max(loop_kernels, n)
    return KernelCost(inst.name, comp, inst.opcode, inst.fusion_kind or "", flops, trans,
                      read, written, _dtype(inst, module), mm, buffers,
                      _trip_count(inst) if inst.opcode == "while" else None, in_place,
                      loop_kernels=loop_kernels, output_bytes=output_bytes,
                      partitions=_partitions(inst),
                      conv_path=conv_path(inst, module) if mm else "",
                      trig=trig_elements(inst, module) if trans else 0.0,
                      fresh_bytes=min(fresh.get(inst.name, 0.0), written),
                      fft_work=fft_work(inst) if inst.opcode == "fft" else 0.0,
                      window_flops=window_flops(inst, module) if flops > 0 else 0.0)


def outer_partitions(inst: HloInstruction) -> int:
    """The product of the backend config's ``outer_dimension_partitions``: how many threads
    XLA:CPU splits a loop fusion over; 0 when the config has none (or an unreadable one)."""
    if "outer_dimension_partitions" not in inst.attributes.get("backend_config", ""):
        return 0
    cfg = inst.backend_config
    parts = cfg.get("outer_dimension_partitions") if isinstance(cfg, dict) else None
    try:
        return math.prod(int(p) for p in parts) if parts else 0
    except (TypeError, ValueError):
        return 0


def _partitions(inst: HloInstruction) -> int:
    return max(outer_partitions(inst), 1)


def _writes_program_output(inst: HloInstruction) -> bool:
    """Does the kernel write an ENTRY result (the ROOT, or what a ROOT tuple holds, through
    bitcasts and get-tuple-element)?

    XLA:CPU gives each program output its own buffer, allocated fresh for every run,
    while temporaries share one arena that stays warm: writing an output is slower."""
    comp = inst.computation
    if comp is None or not comp.is_entry or comp.module is None:
        return False
    return inst.name in comp.module.derived("program-outputs", _program_outputs)


def _program_outputs(module: HloModule) -> set[str]:
    """What the ENTRY ROOT holds, through tuple, bitcast and get-tuple-element."""
    root = module.entry.root if module.entry is not None else None
    held = walk_through([root] if root is not None else [],
                        ("tuple", "bitcast", "get-tuple-element"), upward=True)
    return {i.name for i in held}


def module_costs(module: HloModule) -> dict[str, KernelCost]:
    """Every kernel's cost, by instruction name."""
    return {inst.name: c for inst, c in zip(kernels(module), costs_of(module))}


def costs_of(module: HloModule, insts: Sequence[HloInstruction] | None = None
             ) -> list[KernelCost]:
    """The costs of ``insts`` (default: every kernel, in order), each computed once per
    module: the report, the learned features and their program context share them."""
    every = module.derived("kernel-costs", _every_cost)
    if insts is None:
        return list(every.values())
    return [every.get(id(i)) or kernel_cost(i, module) for i in insts]


def _every_cost(module: HloModule) -> dict[int, KernelCost]:
    return {id(i): kernel_cost(i, module) for i in kernels(module)}


# --------------------------------------------------------------------------- XLA's totals

@dataclass(frozen=True)
class CostTotals:
    flops: float
    transcendentals: float
    bytes: float


def xla_cost_totals(module: HloModule) -> CostTotals:
    """The module's flops, transcendentals and bytes accessed as XLA's ``HloCostAnalysis``
    totals them (``compiled.cost_analysis()``), from our kernel costs. Where XLA's rules
    differ from ours, XLA's are applied here (the kernel costs keep ours, which model one
    execution for the runtime predictor):

    1. ``while``: its body and condition once, whatever the trip count (XLA: the number of
       iterations cannot always be known statically); ours: per iteration, times the trips;
    2. ``conditional``: each quantity of its largest branch; ours: each branch's kernels;
    3. ``sort``: n·⌈log2 n⌉ flops for n elements, the comparator not counted; ours: the
       comparator's ops per comparison;
    4. a fusion's parameters are read as XLA's ``FusionParameterReadBytes`` reads them:
       its direct users only (a slice through a ``bitcast`` reads the whole parameter), a
       ``broadcast`` or ``reshape`` user reading it whole once more; ours: looking through
       bitcasts and reshapes, each parameter read at most once;
    5. ``custom-call`` (LAPACK's LU and triangular solve, oneDNN/XNNPACK library calls): -1
       flops and -1 bytes each, XLA's "unknown" (``HandleCustomCall``) summed as is; ours:
       the bytes of its operands and results (and a matmul's flops);
    6. ``call`` (e.g. XLA CPU's ``xla_cpu_small_call`` around a scatter's while loop): the
       totals of its computation, rules 1-5 inside; ours: the call as one kernel, a loop
       inside it counted for every trip;
    7. a fusion whose root is a scatter into a parameter (how XLA:CPU emits every scatter):
       its whole output written; ours: the updates, in place (``_in_place_dus``).

    With these, ``tests/test_costs.py`` finds every sample's totals equal to XLA's."""
    costs = {k.instruction: k for k in costs_of(module)}
    done: dict[str, tuple[float, float, float]] = {}

    def kernel(inst: HloInstruction) -> tuple[float, float, float]:
        c = costs.get(inst.name)
        if c is None:
            return 0.0, 0.0, 0.0
        flops, read, written = c.flops, c.bytes_read, c.bytes_written
        if inst.opcode == "custom-call":
            return -1.0, 0.0, -1.0
        if inst.opcode == "sort" and inst.operands:
            n = inst.operands[0].shape.element_count
            flops = float(n * math.ceil(math.log2(n))) if n > 1 else 0.0
        if inst.opcode == "fusion" and inst.called_names:
            fused = module.get_computation(inst.called_names[0])
            if fused is not None:
                read = sum(_xla_param_read(p) for p in fused.parameters)
                written += sum(u.shape.byte_size - _update_bytes(u)      # rule 7
                               for u in _in_place_dus(fused).values() if u.opcode == "scatter")
        return flops, c.transcendentals, read + written

    # callees before callers (module order), without recursion: call chains can be
    # thousands deep
    for comp in module.reachable([module.entry.name]):
        total = [0.0, 0.0, 0.0]
        for inst in comp.instructions:
            if inst.opcode == "while":
                parts = [done.get(n, (0.0, 0.0, 0.0)) for n in inst.called_names]
                add = tuple(sum(p[i] for p in parts) for i in range(3))
            elif inst.opcode == "conditional":
                parts = [done.get(n, (0.0, 0.0, 0.0)) for n in inst.called_names]
                add = tuple(max((p[i] for p in parts), default=0.0) for i in range(3))
            elif inst.opcode == "call":       # rule 6
                parts = [done.get(n, (0.0, 0.0, 0.0)) for n in inst.called_names]
                add = tuple(sum(p[i] for p in parts) for i in range(3))
            else:
                add = kernel(inst)
            total = [t + a for t, a in zip(total, add)]
        done[comp.name] = (total[0], total[1], total[2])
    f, t, b = done.get(module.entry.name, (0.0, 0.0, 0.0))
    return CostTotals(f, t, b)


def _xla_param_read(param: HloInstruction) -> float:
    """Bytes of a fused parameter read, by the rule of XLA's ``FusionParameterReadBytes``
    (rule 4 of ``xla_cost_totals``): a slice reads its own size, a dynamic-slice of it too,
    a dynamic-update-slice into it nothing (it aliases the output), a broadcast or reshape
    the whole parameter each, and the other users one whole read between them."""
    full = float(param.shape.byte_size)
    size, shared = 0.0, False
    for user in param.users:
        op = user.opcode
        first = bool(user.operand_names) and user.operand_names[0] == param.name
        if op == "slice":
            size += user.shape.byte_size
        elif op == "dynamic-slice" and first:
            size += user.shape.byte_size
        elif op == "dynamic-update-slice" and first:
            continue
        elif op in ("broadcast", "reshape"):
            size += full
        elif not shared:
            shared = True
            size += full
    return size


# --------------------------------------------------------------------------- roofline

# A while loop whose trip count XLA does not know is assumed to run this many times.
UNKNOWN_TRIP_COUNT = 10


def control_iterations(cost: KernelCost) -> int:
    if cost.opcode == "while":
        return cost.trip_count if cost.trip_count is not None else UNKNOWN_TRIP_COUNT
    return 1


def roofline_us(cost: KernelCost, device: DeviceProfile) -> float:
    """``max(flops / peak, bytes / bandwidth) + overhead`` in µs for one execution.

    Control flow (``while``/``conditional``): its self time is dispatching the body's
    kernels (which are timed on their own), so one overhead per kernel the body runs
    per iteration, plus one."""
    if cost.opcode in CONTROL_FLOW and cost.buffers == 0:
        n = control_iterations(cost) * max(cost.loop_kernels, 1)
        return device.launch_overhead_us * (n + 1)
    return max(compute_seconds(cost, device), memory_seconds(cost, device)) * 1e6 \
        + device.launch_overhead_us + device.per_buffer_us * cost.buffers


def compute_seconds(cost: KernelCost, device: DeviceProfile) -> float:
    """Flops (transcendentals at their cost in flops) over the peak: the matmul rate for
    dots and library convolutions (a grouped one: ``grouped_conv_flops``; one in generated
    loops: the vector rate of one thread), else the vector rate of one thread times the
    threads the kernel is split over, up to the device's measured parallel speed-up. Where
    the profile measured them: an FFT's transforms at ``fft_flops``, reduce-windows in
    generated loops at ``window_flops``."""
    if cost.fft_work > 0 and device.fft_flops > 0:
        return cost.fft_work / device.fft_flops
    windows = 0.0
    if cost.window_flops > 0 and device.window_flops > 0:
        windows = min(cost.window_flops, cost.flops)
    slow = slow_conv_rate(cost, device)
    if slow is not None:
        peak = slow
    elif cost.matmul:
        peak = device.matmul_rate(cost.dtype)
    else:
        peak = device.vector_flops * min(float(max(cost.partitions, 1)),
                                         max(device.threads, 1.0))
    if peak <= 0:
        return 0.0
    rest = (cost.flops - windows + transcendental_work(cost, device)) / peak
    return rest + (windows / device.window_flops if windows else 0.0)


def slow_conv_rate(cost: KernelCost, device: DeviceProfile) -> float | None:
    """The flop rate of a convolution XLA:CPU runs outside its libraries: a grouped one at
    the profile's ``grouped_conv_flops`` (the vector rate when it has none), one out of the
    library's dimension order at the vector rate of one thread; None for any other kernel,
    and on GPUs, whose libraries take any convolution."""
    path = cost.conv_path if device.kind == "cpu" else ""
    if path == "grouped" and device.grouped_conv_flops > 0:
        return device.grouped_conv_flops
    if path in ("grouped", "loops"):
        return device.vector_flops
    return None


def transcendental_work(cost: KernelCost, device: DeviceProfile) -> float:
    """The kernel's transcendentals in flops: each at the profile's cost of one (tanh),
    sines, cosines and tangents at theirs (``trig_flops``) when it has one."""
    trig = min(cost.trig, cost.transcendentals)
    per_trig = device.trig_flops or device.transcendental_flops
    return (cost.transcendentals - trig) * device.transcendental_flops + trig * per_trig


def memory_seconds(cost: KernelCost, device: DeviceProfile) -> float:
    """Bytes over bandwidth: the working set's bandwidth (caches) for everything, except
    bytes written into a program output at ``output_bandwidth`` and into pages of a large
    temp allocation mapped fresh this run at ``fresh_bandwidth``, when the profile has
    them."""
    bw = device.bandwidth_for(cost.bytes)
    if bw <= 0:
        return 0.0
    seconds, rest = 0.0, cost.bytes
    if device.output_bandwidth > 0 and cost.output_bytes > 0:
        seconds += cost.output_bytes / min(device.output_bandwidth, bw)
        rest -= cost.output_bytes
    fresh_bw = device.fresh_rate
    if fresh_bw > 0 and cost.fresh_bytes > 0:
        seconds += cost.fresh_bytes / min(fresh_bw, bw)
        rest -= cost.fresh_bytes
    return seconds + max(rest, 0.0) / bw


def bound(cost: KernelCost, device: DeviceProfile) -> str:
    """'compute', 'memory' or 'overhead': which term of the roofline is largest."""
    if cost.opcode in CONTROL_FLOW and cost.buffers == 0:
        return "overhead"
    compute = compute_seconds(cost, device) * 1e6
    memory = memory_seconds(cost, device) * 1e6
    overhead = device.launch_overhead_us + device.per_buffer_us * cost.buffers
    return max((compute, "compute"), (memory, "memory"), (overhead, "overhead"))[1]
