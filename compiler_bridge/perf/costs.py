"""Analytical per-kernel costs from the HLO: :class:`KernelCost` (flops and
transcendentals from ``flops``, bytes read and written, buffers, what sets its rate) of one
execution of each kernel (``execution`` says which instructions are kernels), computed once
per module. Bytes follow XLA's ``HloCostAnalysis`` with two corrections a naive roofline
gets wrong (DESIGN.md section 4): an in-place ``dynamic-update-slice`` or scatter (at a
fusion's root, its buffer a fusion parameter, or a top-level one) reads and writes only
its update, and fusion parameters that are only sliced (``slice``, ``dynamic-slice``,
``gather``) are read as far as the slices go; under a slice, elementwise producers
compute only the sliced share. Pages of a large temp allocation mapped fresh in a run are
counted apart (``fresh_pages``). How XLA:CPU runs a convolution (``conv_path``): a library
call only when its dimensions are in the library's order and it has no groups. Time on a
device is ``roofline``'s; XLA's own totals are ``xla_costs``'.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .execution import (CONTROL_FLOW, ELEMENTWISE, FREE_OPCODES, SLICING, TRANSCENDENTAL,
                        TRIGONOMETRIC, kernels, trip_count)
from .flops import array_elements, instruction_flops
from ..hlo import HloComputation, HloInstruction, HloModule, Shape, walk_through
from ..targets import (MATMUL_CUSTOM_CALLS, is_single_kernel_call, is_ynnpack_fusion,
                       outer_partitions)

if TYPE_CHECKING:
    from ..memory import BufferAssignment


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


def in_place_updates(comp: HloComputation) -> dict[str, HloInstruction]:
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


def update_bytes(inst: HloInstruction) -> float:
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
                total += update_bytes(user)
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
    in_place = in_place_updates(comp)
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
            written += update_bytes(in_place[src.name])
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
    return float(sum(array_elements(i.shape) for i in _kernel_instructions(inst, module)
                     if i.opcode in TRIGONOMETRIC))


def window_flops(inst: HloInstruction, module: HloModule | None = None) -> float:
    """Flops of the reduce-windows of a kernel that XLA:CPU runs as generated scalar loops:
    every one outside a YNNPACK fusion (which takes max and sum windows; not a cumulative
    sum, nor the tree XLA's reduction rewriter makes of a large bf16 sum). The traced
    corpus's ran 20-40x slower than the vector rate's roofline."""
    if is_ynnpack_fusion(inst):
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
                      trip_count(inst) if inst.opcode == "while" else None, in_place,
                      loop_kernels=loop_kernels, output_bytes=output_bytes,
                      partitions=_partitions(inst),
                      conv_path=conv_path(inst, module) if mm else "",
                      trig=trig_elements(inst, module) if trans else 0.0,
                      fresh_bytes=min(fresh.get(inst.name, 0.0), written),
                      fft_work=fft_work(inst) if inst.opcode == "fft" else 0.0,
                      window_flops=window_flops(inst, module) if flops > 0 else 0.0)


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
