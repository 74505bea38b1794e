"""What the backend decided for the selected instruction, under the inspector's card: on GPU
the emitter, Triton's tiles, the thunk that launches it (position, stream, launch) and its
PTX; on TPU the tiled layout of each output with its padding, its memory space, the window
config and XLA:TPU's estimated cycles. Not a page: the inspector places it with one call.
"""

from __future__ import annotations

import streamlit as st

from compiler_bridge import HloInstruction, HloParseError
from compiler_bridge.dumps import AFTER, AFTER_CODEGEN
from compiler_bridge.kernels import Kernel, ModuleKernels, kernel_ptx, module_kernels
from compiler_bridge.targets import kernel_name, memory_space, memory_space_name, tiling

from .kit import MAX_CODE, code, log
from .model import Opened, Shown

_DECIDED_STAGES = (AFTER, AFTER_CODEGEN)   # the stages the kernels' names belong to


def _kernels(opened: Opened, shown: Shown) -> ModuleKernels | None:
    try:
        return module_kernels(opened.dump, shown.dump_module)   # cached per dump and module
    except (KeyError, HloParseError, OSError) as e:
        log.info("no kernels for %s: %s", shown.dump_module.label, e)
        return None


def _bytes(n: int) -> str:
    return f"{n:,} B" if n < 1 << 10 else f"{n:,} B ({n / (1 << 10):,.1f} KiB)" \
        if n < 1 << 20 else f"{n:,} B ({n / (1 << 20):,.1f} MiB)"


def _layout_lines(inst: HloInstruction) -> list[str]:
    """Each tiled output of the instruction: tiles, padded shape, bytes wasted, memory
    space."""
    out = []
    leaves = inst.shape.leaves()
    for n, leaf in enumerate(leaves):
        t = tiling(leaf) if leaf.is_array else None
        space = memory_space(leaf) if leaf.is_array else 0
        if t is None and not space:
            continue
        where = f"output {{{n}}} " if len(leaves) > 1 else ""
        parts = []
        if t is not None:
            tiles = "".join("(" + ",".join(map(str, tile)) + ")" for tile in t.tiles)
            share = f" ({t.wasted_bytes / t.padded_bytes:.0%})" if t.padded_bytes else ""
            parts.append(f"tiles {code('T' + tiles)}: padded to "
                         f"{code('[' + ','.join(map(str, t.padded)) + ']')} (major to minor), "
                         f"{_bytes(t.padded_bytes)} for {_bytes(t.bytes)} of data, "
                         f"{_bytes(t.wasted_bytes)} padding{share}")
        parts.append(f"in {memory_space_name(space)}" + (f" ({code(f'S({space})')})"
                                                        if space else ""))
        out.append(f"- {where}" + "; ".join(parts))
    return out[:16]


def _gpu_lines(k: Kernel) -> list[str]:
    out = []
    if k.emitter:
        out.append(f"- emitter: **{k.emitter}**")
    if k.tile is not None:
        out.append(f"- Triton {k.tile.label}")
    if k.thunk is not None:
        t = k.thunk
        launch = f", grid {list(t.grid)}, {list(t.threads)} threads" if t.grid else ""
        shmem = f", {t.shared_memory:,} B shared memory" if t.shared_memory else ""
        out.append(f"- thunk {t.number:03d} ({code(t.kind)}), #{t.order + 1} of the thunk "
                   f"sequence, on the {code(t.stream)} stream{launch}{shmem}")
    if k.kernel and k.kernel != kernel_name(k.name):
        out.append(f"- runs kernel {code(k.kernel)}: XLA reused an identical fusion's code")
    return out


def _tpu_lines(k: Kernel, mk: ModuleKernels) -> list[str]:
    out = []
    w = k.window
    if w is not None:
        if w.estimated_cycles is not None:
            us = f" = **{k.estimate_us:.2f} µs** at {mk.clock_hz / 1e9:g} GHz" \
                if k.estimate_us is not None and mk.clock_hz else ""
            out.append(f"- XLA:TPU's estimate: **{w.estimated_cycles:,} cycles**{us}")
        bounds = [("output", w.output_window_bounds), ("input", w.input_window_bounds),
                  ("kernel", w.kernel_window_bounds), ("iterations", w.iteration_bounds)]
        shown = ", ".join(f"{name} {list(b)}" for name, b in bounds if b)
        if shown:
            out.append(f"- window config: {shown}")
    return out


def show(opened: Opened, shown: Shown, inst: HloInstruction | None) -> None:
    """The backend's facts for ``inst`` at the shown stage (nothing when there are none)."""
    if inst is None:
        return
    lines = _layout_lines(inst)
    mk = _kernels(opened, shown) if shown.stage in _DECIDED_STAGES else None
    k = mk.get(inst.name) if mk is not None else None
    if k is not None and mk is not None:
        lines = (_gpu_lines(k) if mk.kind == "gpu" else _tpu_lines(k, mk)) + lines
    if not lines:
        return
    target = f" · {mk.target}" if mk is not None else ""
    st.markdown(f"**Backend{target}**\n" + "\n".join(lines))
    # the inspector's Kernel expander finds a kernel by its instruction's name; a reused
    # kernel bears another instruction's, so its PTX is shown here
    if k is not None and k.ptx_file and k.kernel != kernel_name(inst.name):
        box = st.expander(f"PTX · {k.kernel}", key=f"backend-ptx:{inst.name}", on_change="rerun")
        if box.open:          # read when opened
            box.caption(f"`{k.ptx_file}`")
            box.code((kernel_ptx(opened.dump, k) or "")[:MAX_CODE], language=None)
