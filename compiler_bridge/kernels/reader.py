"""What each backend decided for each kernel of a module, read from the dump's files.

The kernels of a module are the instructions of its non-fused computations (the entry and
the bodies of its control flow) that XLA generated code for:

- **GPU** (the after-optimizations module): fusions and custom calls, with the emitter, the
  Triton tile configuration, the kernel's thunk (place in ``thunk_sequence.txt``, stream,
  launch dimensions) and its PTX (the ``.ptx`` file whose ``.entry`` is the kernel); then
  the collectives (their starts and dones) with the thunk and stream each runs on;
- **TPU** (the after-codegen module when the dump has it, else after optimizations): every
  instruction with a ``window_config`` and every fusion or custom call, with the tiled
  layout of its output, its memory space, the window config and XLA:TPU's estimated
  cycles, in µs at the generation's clock (its profile's ``clock_hz``, the figure the
  runtimes report prices them at);
- **CPU**: fusions and custom calls with their fusion kind.

A module's ``name`` is the program's, from its HLO text's header (XLA:TPU's file names add a
``.cl_<N>`` suffix that is no part of it: the module's ``compile_id``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..dumps import AFTER, AFTER_CODEGEN, PTX, Dump, DumpModule, module_target, target_note
from ..hlo import HloComputation, HloInstruction, HloModule
from ..targets import (BUILTIN, CLOCK_SOURCE, AutotuneResult, Thunk, TileConfig, Tiling,
                       TpuGeneration, WindowConfig, chip_generation, collective_op,
                       collective_strategy, cycles_to_us, gpu_emitter, instruction_kernel,
                       match_collectives, match_thunks, memory_space, memory_space_name,
                       parse_autotune_results, parse_thunk_sequence, ptx_kernels, tile_config,
                       tiling, window_config)

# the opcodes whose called computations run as code of their own (not fused into a kernel)
_CONTROL_FLOW = frozenset({"while", "conditional", "call", "async-start"})
# instructions with a window_config that are no kernel of their own
_KERNEL_OPCODES = frozenset({"fusion", "custom-call"})


@dataclass(frozen=True, slots=True)
class Kernel:
    """One kernel: the instruction it runs (``name``, ``computation``), ``kind`` (the fusion
    kind, or the opcode), and what the backend decided (None where it does not apply)."""

    name: str
    computation: str
    kind: str
    emitter: str | None = None
    tile: TileConfig | None = None             # GPU: Triton's block-level config
    thunk: Thunk | None = None                 # GPU: its launch in the thunk sequence
    kernel: str | None = None                  # GPU: the kernel's name (a reused one's)
    ptx_file: str | None = None                # GPU: the dump's .ptx file holding it
    tiling: Tiling | None = None               # TPU: the output's tiled layout
    memory_space: int | None = None            # TPU: the output's S(n)
    window: WindowConfig | None = None         # TPU: window_config
    estimate_us: float | None = None           # TPU: estimated_cycles at the clock

    def to_json(self, space_name: Any = memory_space_name) -> dict[str, Any]:
        """The fields of ``kernels --json``: name, kind, emitter, tile, memory_space,
        xla_estimate_us, ptx (the PTX file), and the rest under their own names."""
        tile: dict[str, Any] | None = None
        if self.tile is not None:
            tile = self.tile.to_json()
        elif self.tiling is not None:
            tile = {"tiles": [list(t) for t in self.tiling.tiles],
                    "padded_shape": list(self.tiling.padded), "bytes": self.tiling.bytes,
                    "padded_bytes": self.tiling.padded_bytes,
                    "wasted_bytes": self.tiling.wasted_bytes}
        out: dict[str, Any] = {
            "name": self.name, "kind": self.kind, "emitter": self.emitter, "tile": tile,
            "memory_space": None if self.memory_space is None else space_name(self.memory_space),
            "xla_estimate_us": None if self.estimate_us is None else round(self.estimate_us, 4),
            "ptx": self.ptx_file,
            "computation": self.computation,
            "kernel": self.kernel,
            "window_config": self.window.to_json() if self.window is not None else None,
            "estimated_cycles": self.window.estimated_cycles if self.window is not None else None,
        }
        if self.thunk is not None:
            t = self.thunk
            out["thunk"] = {"number": t.number, "order": t.order, "kind": t.kind,
                            "stream": t.stream, "grid": list(t.grid),
                            "threads": list(t.threads), "shared_memory": t.shared_memory}
        else:
            out["thunk"] = None
        return out


@dataclass(slots=True)
class ModuleKernels:
    """The kernels of one module and where their facts come from."""

    id: str
    name: str                          # the program's name (the HLO header's)
    target: str                        # 'XLA:GPU sm_9.0a', 'XLA:TPU v5e', 'XLA:CPU', ...
    kind: str                          # 'gpu', 'tpu', 'cpu' or ''
    stage: str                         # the stage read (after_codegen on TPU)
    kernels: list[Kernel] = field(default_factory=list)
    generation: str = ""               # TPU: 'v5e', 'v6e', ...
    clock_hz: float | None = None      # TPU: the clock estimated cycles are turned into µs at
    clock_source: str = ""
    thunk_count: int = 0               # GPU: thunks in the thunk sequence
    autotune: list[AutotuneResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    compile_id: str = ""               # XLA:TPU: the cl_<N> its file names add to the name

    def get(self, name: str) -> Kernel | None:
        for k in self.kernels:
            if k.name == name:
                return k
        return None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "compile_id": self.compile_id or None,
                "target": self.target, "stage": self.stage,
                "tpu_generation": self.generation or None,
                "clock_hz": self.clock_hz, "clock_source": self.clock_source or None,
                "thunks": self.thunk_count or None,
                "autotune_results": len(self.autotune) if self.kind == "gpu" else None,
                "notes": self.notes,
                "kernels": [k.to_json() for k in self.kernels]}


def code_computations(module: HloModule) -> list[HloComputation]:
    """The entry and every computation control flow runs from it (while bodies and
    conditions, branches, calls), in the order reached: where kernels are launched."""
    if module.entry is None:
        return []
    seen = {module.entry.name}
    out = [module.entry]
    for comp in out:
        for inst in comp.instructions:
            if inst.opcode not in _CONTROL_FLOW:
                continue
            for name in inst.called_computations:
                c = module.get_computation(name)
                if c is not None and name not in seen:
                    seen.add(name)
                    out.append(c)
    return out


def _async_bodies(module: HloModule) -> set[str]:
    """The computations async starts wrap (the start stands for a collective inside)."""
    return {name for inst in module.instructions() if inst.opcode == "async-start"
            for name in inst.called_computations}


def _target(dump: Dump, mod: DumpModule) -> tuple[str, str, TpuGeneration | None]:
    """(kind, label, TPU generation) of a module, from the target its files say
    (``dumps.module_target``): 'XLA:GPU sm_9.0a', 'XLA:TPU v5e', 'XLA:CPU'."""
    target = module_target(dump, mod)
    if target.kind == "tpu":
        gen = chip_generation(target.chip)
        return "tpu", "XLA:TPU" + (f" {gen.short}" if gen is not None else ""), gen
    if not target.kind:
        return "", target.label, None
    return target.kind, f"XLA:{target.kind.upper()}" + (f" {target.arch}" if target.arch
                                                         else ""), None


def _kind(inst: HloInstruction) -> str:
    return inst.fusion_kind or inst.opcode if inst.opcode == "fusion" else inst.opcode


def _collective_done(module: HloModule, inst: HloInstruction) -> bool:
    """The done of an async collective (``all-reduce-done``, an ``async-done``)."""
    if not inst.opcode.endswith("-done"):
        return False
    start = inst.operands[0] if inst.operands else None
    return start is not None and bool(collective_op(module, start))


def _gpu(dump: Dump, mod: DumpModule, module: HloModule, out: ModuleKernels) -> None:
    every = [(c.name, i) for c in code_computations(module) for i in c.instructions]
    insts = [(c, i) for c, i in every if i.opcode in _KERNEL_OPCODES]
    wrapped = _async_bodies(module)
    collectives = [(c, i) for c, i in every if c not in wrapped
                   and (collective_op(module, i) or _collective_done(module, i))]
    thunks: list[Thunk] = []
    seq = mod.first("thunk_sequence")
    if seq is not None:
        thunks = parse_thunk_sequence(dump.read_text(seq.path))
        out.thunk_count = len(thunks)
    launched = match_thunks([i for _, i in insts], thunks)
    launched.update(match_collectives(module, [i for _, i in collectives], thunks))
    ptx: dict[str, str] = {}        # kernel -> its .ptx file (the text is read when shown)
    for f in mod.of_kind(PTX):
        ptx.update(dict.fromkeys(ptx_kernels(dump.read_text(f.path)), f.path))
    tuned = mod.first("autotune_results")
    if tuned is not None:
        out.autotune = parse_autotune_results(dump.read_text(tuned.path))
    listed = {id(i) for _, i in insts + collectives}
    for comp, inst in every:                       # in schedule order
        if id(inst) not in listed:
            continue
        thunk = launched.get(inst.name)
        if inst.opcode not in _KERNEL_OPCODES:     # a collective, its start or done
            strategy = collective_strategy(inst)
            emitter = (f"collective, {strategy}" if strategy else "collective") \
                if collective_op(module, inst) else None
            out.kernels.append(Kernel(inst.name, comp, inst.opcode, emitter, thunk=thunk))
            continue
        kname = thunk.kernel if thunk is not None else instruction_kernel(inst)
        path = ptx.get(kname)
        out.kernels.append(Kernel(
            inst.name, comp, _kind(inst), gpu_emitter(module, inst), tile_config(inst), thunk,
            kname if thunk is not None or path is not None else None, path))
    if mod.of_kind(PTX) and len(ptx) < len({k.kernel for k in out.kernels if k.kernel}):
        out.notes.append(f"the dump holds the PTX of {len(ptx)} kernels (its .ptx files); "
                         "the others' were not written or were pruned")


def _tpu(module: HloModule, out: ModuleKernels) -> None:
    """The TPU kernels, their estimated cycles in µs at ``out.clock_hz``."""
    for comp in code_computations(module):
        for inst in comp.instructions:
            window = window_config(inst)
            if window is None and inst.opcode not in _KERNEL_OPCODES:
                continue
            shape = inst.shape.leaves()[0] if inst.shape.is_tuple and inst.shape.leaves() \
                else inst.shape
            cycles = window.estimated_cycles if window is not None else None
            out.kernels.append(Kernel(
                inst.name, comp.name, _kind(inst), tiling=tiling(shape),
                memory_space=memory_space(shape) if shape.is_array else None, window=window,
                estimate_us=cycles_to_us(cycles, out.clock_hz)))


def _cpu(module: HloModule, out: ModuleKernels) -> None:
    for comp in code_computations(module):
        for inst in comp.instructions:
            if inst.opcode in _KERNEL_OPCODES:
                out.kernels.append(Kernel(inst.name, comp.name, _kind(inst)))


def _read(dump: Dump, mod: DumpModule) -> ModuleKernels:
    kind, label, gen = _target(dump, mod)
    stage = AFTER_CODEGEN if kind == "tpu" and mod.first(AFTER_CODEGEN) is not None else AFTER
    module = dump.stage(mod, stage)
    out = ModuleKernels(mod.id, module.name, label, kind, stage,
                        generation=gen.short if gen is not None else "",
                        compile_id=mod.compile_id)
    if kind == "gpu":
        _gpu(dump, mod, module, out)
    elif kind == "tpu":
        clock = BUILTIN[gen.chip].clock_hz if gen is not None else 0.0
        out.clock_hz = clock or None
        out.clock_source = CLOCK_SOURCE if out.clock_hz else ""
        if stage != AFTER_CODEGEN:
            out.notes.append("no after_codegen.txt: XLA:TPU writes window configs and "
                             "estimated cycles only there")
        if not out.clock_hz:
            out.notes.append("the TPU generation is unknown ("
                             + (target_note(dump, mod) or "no topology.textproto")
                             + "): estimated cycles are not turned into time")
        _tpu(module, out)
    else:
        _cpu(module, out)
    return out


def kernel_ptx(dump: Dump, kernel: Kernel) -> str | None:
    """The PTX function of a GPU kernel (its ``.entry`` and body), None when the dump has
    no PTX of it."""
    if not kernel.ptx_file or not kernel.kernel:
        return None
    return ptx_kernels(dump.read_text(kernel.ptx_file)).get(kernel.kernel)


def module_kernels(dump: Dump, module: DumpModule | str) -> ModuleKernels:
    """The kernels of one module (cached per dump and module). Raises KeyError when the
    module has no after-optimizations text, HloParseError when it does not parse."""
    mod = dump.module(module) if isinstance(module, str) else module
    return dump.derived(f"kernels:{mod.id}", lambda d: _read(d, mod))
