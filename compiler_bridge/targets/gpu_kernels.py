"""XLA:GPU's decisions per kernel: the emitter of each fusion, Triton's tile configuration,
the thunk sequence, and the PTX of each kernel. Readers of text only; ``compiler_bridge.kernels``
brings them the dump's files.

- **Emitter.** A fusion's ``kind`` and backend_config say which emitter XLA:GPU generated it
  with: ``kind=kCustom`` with ``backend_config.fusion_backend_config.kind``
  ``__triton_nested_gemm_fusion`` / ``__triton_gemm`` (a dot as a Triton GEMM),
  ``__triton`` (other Triton fusions: softmax, normalizations), ``__cudnn$fusion``,
  ``__custom_fusion`` (a library kernel, e.g. CUTLASS); ``kLoop`` the loop emitter;
  ``kInput`` an input fusion, named here by its hero (reduction, transpose, scatter). A
  custom call to ``__cublas$...`` is a cuBLAS matmul, to ``__cudnn$...`` a cuDNN call.
- **Tiles.** Triton fusions carry ``block_level_fusion_config``: ``output_tiles`` (the tile
  of the output each program computes), ``num_warps``, ``num_stages``, ``num_ctas``.
- **Kernel names.** A kernel is named after its fusion with the characters a PTX name may
  not hold (``.``, ``-``) turned into ``_`` (``gemm_fusion_dot.34`` ->
  ``gemm_fusion_dot_34``). Identical fusions share one kernel: XLA reuses the first one's
  code, says so in the metadata (``deduplicated_name="gemm_fusion_dot.40"``) and the thunk
  sequence names the reused kernel (two ``gemm_fusion_dot_40`` launches, the second for
  ``gemm_fusion_dot.42``).
- **Thunk sequence** (``thunk_sequence.txt``): one line per thunk in execution order,
  ``NNN: kKind [prev=... | next=...] <kernel> grid: [x,y,z] threads: [x,y,z]
  shared_memory: N bytes``; an async start names its stream
  (``stream=communication_stream[0]``) and lists its nested thunks indented below it.
- **PTX** (``module_NNNN.<name>.<N>.ptx``, one per LLVM module XLA compiled): each kernel is
  a ``.visible .entry <kernel>(`` function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..hlo import HloInstruction, HloModule

TRITON_GEMM_KINDS = ("__triton_nested_gemm_fusion", "__triton_gemm", "__triton_scaled_dot_fusion")
COMPUTE_STREAM = "compute"

_EMITTERS = {
    "__triton": "Triton",
    "__cudnn$fusion": "cuDNN fusion",
    "__custom_fusion": "custom fusion",
    "__dynamic_memcpy": "dynamic memcpy",
}


def kernel_name(instruction: str) -> str:
    """The name XLA:GPU gives the kernel of an instruction (``fusion.3`` -> ``fusion_3``)."""
    return re.sub(r"[^A-Za-z0-9_$]", "_", instruction)


def instruction_kernel(inst: HloInstruction) -> str:
    """The kernel an instruction runs: its own, or the one of the fusion XLA deduplicated it
    into (``metadata={deduplicated_name="gemm_fusion_dot.40"}``: identical fusions share
    the first one's code)."""
    dedup = dict(inst.metadata.other).get("deduplicated_name", "").strip('"')
    return kernel_name(dedup or inst.name)


def fusion_backend_kind(inst: HloInstruction) -> str:
    """``fusion_backend_config.kind`` of a fusion ('__triton', ...), '' when none."""
    cfg = inst.backend_config
    fb = cfg.get("fusion_backend_config") if isinstance(cfg, dict) else None
    kind = fb.get("kind") if isinstance(fb, dict) else None
    return kind if isinstance(kind, str) else ""


def custom_fusion_name(inst: HloInstruction) -> str:
    """``fusion_backend_config.custom_fusion_config.name`` ('dynamic_slice_fusion'), ''."""
    cfg = inst.backend_config
    fb = cfg.get("fusion_backend_config") if isinstance(cfg, dict) else None
    cc = fb.get("custom_fusion_config") if isinstance(fb, dict) else None
    name = cc.get("name") if isinstance(cc, dict) else None
    return name if isinstance(name, str) else ""


def _hero(module: HloModule, inst: HloInstruction) -> str:
    """What names an input fusion's emitter: a reduce, scatter or transpose in its fused
    computation ('' when none)."""
    ops = {i.opcode for name in inst.calls
           if (c := module.get_computation(name)) is not None for i in c.instructions}
    for op, emitter in (("scatter", "scatter"), ("reduce", "reduction"),
                        ("transpose", "transpose")):
        if op in ops:
            return emitter
    return ""


def gpu_emitter(module: HloModule, inst: HloInstruction) -> str | None:
    """The emitter XLA:GPU generated an instruction's kernel with (module docstring); None for
    an instruction that is no fusion or library call."""
    if inst.opcode == "custom-call":
        target = inst.custom_call_target or ""
        if target.startswith("__cublas"):
            return "cuBLAS"
        if target.startswith("__cudnn"):
            return "cuDNN"
        return f"custom call {target}" if target else "custom call"
    if inst.opcode != "fusion":
        return None
    kind = inst.fusion_kind
    if kind == "kCustom":
        backend = fusion_backend_kind(inst)
        if backend in TRITON_GEMM_KINDS:
            return "Triton GEMM"
        name = custom_fusion_name(inst)
        if name:                    # '__custom_fusion' says which: 'dynamic_slice_fusion'
            return f"custom fusion ({name})"
        return _EMITTERS.get(backend, backend or "custom")
    if kind == "kInput":
        hero = _hero(module, inst)
        return f"input ({hero})" if hero else "input"
    if kind == "kLoop":
        return "loop"
    return kind.lstrip("k").lower() if kind else "fusion"


@dataclass(frozen=True, slots=True)
class TileConfig:
    """Triton's tiling of one fusion: ``block_level_fusion_config`` (output tiles), or the
    legacy Triton GEMM's ``triton_gemm_config`` (output tile block_m x block_n, with
    ``block_k`` and ``split_k``)."""

    output_tiles: tuple[tuple[int, ...], ...]
    num_warps: int | None
    num_stages: int | None
    num_ctas: int | None
    block_k: int | None = None
    split_k: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"output_tiles": [list(t) for t in self.output_tiles],
                               "num_warps": self.num_warps, "num_stages": self.num_stages,
                               "num_ctas": self.num_ctas}
        if self.block_k is not None or self.split_k is not None:
            out.update(block_k=self.block_k, split_k=self.split_k)
        return out

    @property
    def label(self) -> str:
        tiles = " ".join("x".join(map(str, t)) for t in self.output_tiles)
        k = f", block_k {self.block_k}, split_k {self.split_k}" \
            if self.block_k is not None else ""
        return f"tile {tiles}{k}, {self.num_warps} warps, {self.num_stages} stage(s), " \
               f"{self.num_ctas} CTA" + ("s" if self.num_ctas != 1 else "")


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def tile_config(inst: HloInstruction) -> TileConfig | None:
    """The tile configuration of a Triton fusion (``block_level_fusion_config``, or a legacy
    GEMM's ``triton_gemm_config``), None when it has none."""
    cfg = inst.backend_config
    fb = cfg.get("fusion_backend_config") if isinstance(cfg, dict) else None
    blc = fb.get("block_level_fusion_config") if isinstance(fb, dict) else None
    gemm = fb.get("triton_gemm_config") if isinstance(fb, dict) else None
    if not isinstance(blc, dict) and isinstance(gemm, dict):
        m, n = _int(gemm.get("block_m")), _int(gemm.get("block_n"))
        return TileConfig(((m, n),) if m is not None and n is not None else (),
                          _int(gemm.get("num_warps")), _int(gemm.get("num_stages")),
                          _int(gemm.get("num_ctas")), _int(gemm.get("block_k")),
                          _int(gemm.get("split_k")))
    if not isinstance(blc, dict):
        return None
    tiles = []
    for t in blc.get("output_tiles") or ():
        sizes = t.get("sizes") if isinstance(t, dict) else None
        tiles.append(tuple(int(s) for s in sizes or ()))
    return TileConfig(tuple(tiles), _int(blc.get("num_warps")), _int(blc.get("num_stages")),
                      _int(blc.get("num_ctas")))


@dataclass(frozen=True, slots=True)
class Thunk:
    """One line of ``thunk_sequence.txt``: its ``number``, ``kind`` ('kCustomKernel',
    'kAllReduce', ...), ``kernel`` (the kernel it launches, '' for other thunks), launch
    dimensions, the ``stream`` it runs on, its ``order`` (position in the file, from 0), the
    ``parent`` thunk it is nested in (an async start, a while loop) and, for an async done,
    the number of its start (``async_id``)."""

    number: int
    kind: str
    kernel: str
    grid: tuple[int, ...]
    threads: tuple[int, ...]
    shared_memory: int | None
    stream: str
    order: int
    text: str
    parent: int | None = None
    async_id: int | None = None


_THUNK = re.compile(r"^(\s*)(\d+):\s+(k\w+)\s*\[[^\]]*\]\s*(.*)$")
_DIMS = re.compile(r"(grid|threads):\s*\[([\d,\s]*)\]")
_SHMEM = re.compile(r"shared_memory:\s*(\d+)")
_STREAM = re.compile(r"stream=([^,\s]+)")
_ASYNC_ID = re.compile(r"async_id=(\d+)")


def parse_thunk_sequence(text: str) -> list[Thunk]:
    """The thunks of a ``thunk_sequence.txt`` in file order; nested thunks run on the stream
    their async start names (the compute stream otherwise). Lines of another form are
    skipped."""
    out: list[Thunk] = []
    open_: list[tuple[int, int, str]] = []      # (indent, number, stream) of enclosing thunks
    for line in text.splitlines():
        m = _THUNK.match(line)
        if m is None:
            continue
        indent, number, kind, rest = len(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        while open_ and open_[-1][0] >= indent:
            open_.pop()
        own = _STREAM.search(rest)
        stream = own.group(1) if own else open_[-1][2] if open_ else COMPUTE_STREAM
        dims = {k: tuple(int(x) for x in v.split(",") if x.strip()) for k, v in _DIMS.findall(rest)}
        shmem = _SHMEM.search(rest)
        first = rest.split()[0] if rest.split() else ""
        is_kernel = "grid" in dims
        aid = _ASYNC_ID.search(rest) if kind == "kAsyncDone" else None
        out.append(Thunk(number, kind, first if is_kernel else "", dims.get("grid", ()),
                         dims.get("threads", ()), int(shmem.group(1)) if shmem else None,
                         stream, len(out), line.strip(), open_[-1][1] if open_ else None,
                         int(aid.group(1)) if aid else None))
        open_.append((indent, number, stream))
    return out


# collective opcodes -> the kind of the thunk that runs them
COLLECTIVE_THUNKS = {"all-reduce": "kAllReduce", "all-gather": "kAllGather",
                     "reduce-scatter": "kReduceScatter", "all-to-all": "kAllToAll",
                     "ragged-all-to-all": "kRaggedAllToAll",
                     "collective-permute": "kCollectivePermute",
                     "collective-broadcast": "kCollectiveBroadcast"}


def collective_op(module: HloModule, inst: HloInstruction) -> str:
    """The collective an instruction starts or runs ('all-reduce' for ``all-reduce``,
    ``all-reduce-start`` and an ``async-start`` wrapping one), '' for others."""
    op = inst.opcode
    if op == "async-start":
        comp = module.get_computation(inst.called_computations[0]) \
            if inst.called_computations else None
        root = comp.root if comp is not None else None
        op = root.opcode if root is not None else ""
    elif op.endswith("-start"):
        op = op[: -len("-start")]
    return op if op in COLLECTIVE_THUNKS else ""


def is_sync(inst: HloInstruction) -> bool:
    """``collective_backend_config.is_sync``: XLA:GPU runs the collective in line on the
    compute stream, not as an async start on a communication stream."""
    cfg = inst.backend_config
    cb = cfg.get("collective_backend_config") if isinstance(cfg, dict) else None
    return bool(cb.get("is_sync")) if isinstance(cb, dict) else False


def collective_strategy(inst: HloInstruction) -> str:
    """``collective_backend_config.kernel_strategy`` without its prefix ('TRITON_ONE_SHOT'),
    '' when default or absent."""
    cfg = inst.backend_config
    cb = cfg.get("collective_backend_config") if isinstance(cfg, dict) else None
    strategy = cb.get("kernel_strategy") if isinstance(cb, dict) else None
    name = str(strategy or "").removeprefix("KERNEL_STRATEGY_")
    return "" if name in ("", "DEFAULT", "INVALID") else name


def match_collectives(module: HloModule, insts: list[HloInstruction], thunks: list[Thunk]
                      ) -> dict[str, Thunk]:
    """Instruction name -> the thunk that runs a collective: in schedule order, a sync
    collective (or a plain one) takes the next top-level thunk of its kind; an async start
    the next ``kAsyncStart`` holding a thunk of its kind, and its done the ``kAsyncDone``
    naming that start (``async_id``)."""
    top: dict[str, list[Thunk]] = {}
    starts: dict[str, list[Thunk]] = {}
    by_number = {t.number: t for t in thunks}
    done_of = {t.async_id: t for t in thunks if t.kind == "kAsyncDone" and t.async_id is not None}
    for t in thunks:
        parent = by_number.get(t.parent) if t.parent is not None else None
        if parent is None or parent.kind != "kAsyncStart":   # in line, or in a loop's body
            top.setdefault(t.kind, []).append(t)
        elif parent.kind == "kAsyncStart" and not any(
                x is parent for xs in starts.values() for x in xs):
            starts.setdefault(t.kind, []).append(parent)
    out: dict[str, Thunk] = {}
    for inst in insts:
        op = collective_op(module, inst)
        if not op:
            continue
        kind = COLLECTIVE_THUNKS[op]
        asynchronous = inst.opcode.endswith("start") and not is_sync(inst)
        queue = starts.get(kind, []) if asynchronous else top.get(kind, [])
        if not queue:
            continue
        t = out[inst.name] = queue.pop(0)
        done = done_of.get(t.number) if asynchronous else None
        users = [u for u in inst.users if u.opcode.endswith("-done")]
        if done is not None and users:
            out[users[0].name] = done
    return out


_ENTRY = re.compile(r"^\.(?:visible\s+)?\.entry\s+([\w$]+)\s*\(", re.M)


def ptx_kernels(text: str) -> dict[str, str]:
    """Each ``.entry`` function of a PTX file: kernel name -> its text (from its
    ``.entry`` line to the closing brace at the start of a line)."""
    out: dict[str, str] = {}
    starts = list(_ENTRY.finditer(text))
    for n, m in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(text)
        body = text[m.start():end]
        close = body.find("\n}")
        out[m.group(1)] = body[: close + 2] if close >= 0 else body
    return out


# thunks of library calls (no kernel name in the file): the custom calls they run, in order
LIBRARY_THUNKS = {"kConvolution": "__cudnn", "kCuDnn": "__cudnn", "kGemm": "__cublas",
                  "kCublasLtMatmul": "__cublas"}


def match_thunks(kernels: list[HloInstruction], thunks: list[Thunk]) -> dict[str, Thunk]:
    """Instruction name -> the thunk that runs it, in schedule order: a thunk naming a kernel
    goes to the next instruction that runs it (its own, or the kernel XLA deduplicated it
    into: :func:`instruction_kernel`); without that metadata, a thunk naming a kernel already
    matched goes to the next instruction that no thunk names, of the kernel's shape when one
    is. Library thunks (``kConvolution``, ``kGemm``) go to the
    custom calls of their library in order, when both count the same."""
    out: dict[str, Thunk] = {}
    for prefix in set(LIBRARY_THUNKS.values()):
        calls = [i for i in kernels if i.opcode == "custom-call"
                 and (i.custom_call_target or "").startswith(prefix)]
        runs = [t for t in thunks if LIBRARY_THUNKS.get(t.kind) == prefix]
        if len(calls) == len(runs):
            out.update({i.name: t for i, t in zip(calls, runs)})
    # a dynamic-slice fusion runs as one thunk naming no kernel (its copy or call nested)
    fusions = [i for i in kernels if custom_fusion_name(i) == "dynamic_slice_fusion"]
    runs = [t for t in thunks if t.kind == "kDynamicSliceFusion"]
    if len(fusions) == len(runs):
        out.update({i.name: t for i, t in zip(fusions, runs)})
    kernels = [i for i in kernels if i.name not in out]
    by_kernel: dict[str, list[HloInstruction]] = {}
    for i in kernels:
        by_kernel.setdefault(instruction_kernel(i), []).append(i)
    named = {t.kernel for t in thunks if t.kernel}
    unnamed = [i for i in kernels if instruction_kernel(i) not in named]
    for t in thunks:
        if not t.kernel:
            continue
        pick = next((i for i in by_kernel.get(t.kernel, ()) if i.name not in out), None)
        if pick is None:     # reused, and XLA's metadata does not say for what: by shape
            first = by_kernel.get(t.kernel, [None])[0]
            shape = str(first.shape) if first is not None else None
            pick = next((i for i in unnamed if i.name not in out and str(i.shape) == shape),
                        None) or next((i for i in unnamed if i.name not in out), None)
        if pick is not None:
            out[pick.name] = t
    return out


@dataclass(frozen=True, slots=True)
class AutotuneResult:
    """One entry of ``autotune_results.pbtxt``: the device, the HLO it tuned (its
    fingerprint text) and the result as written."""

    device: str
    hlo: str
    result: str


_AUTOTUNE_ENTRY = re.compile(r"results\s*\{(.*?)\n\}", re.S)
_FIELD = re.compile(r'^\s*(device|hlo):\s*"((?:[^"\\]|\\.)*)"', re.M)


def parse_autotune_results(text: str) -> list[AutotuneResult]:
    """The ``results { ... }`` entries of an ``autotune_results.pbtxt`` (none when XLA
    autotuned nothing: the file then holds only ``version: 3``)."""
    out = []
    for m in _AUTOTUNE_ENTRY.finditer(text):
        body = m.group(1)
        fields = dict(_FIELD.findall(body))
        res = body.split("result", 1)[1].strip() if "result" in body else ""
        out.append(AutotuneResult(fields.get("device", ""), fields.get("hlo", ""), res))
    return out
