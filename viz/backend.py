"""Badges of what the backend decided, on the graph's kernel nodes: a label line with the
GPU emitter (and Triton's output tile, and the stream when not the compute stream), or XLA:TPU's estimated cycles and the memory space
of the output. A pure builder: ``compiler_bridge.kernels.ModuleKernels`` -> decorations."""

from __future__ import annotations

from compiler_bridge.kernels import ModuleKernels
from compiler_bridge.targets import COMPUTE_STREAM, memory_space_name


def kernel_decorations(kernels: ModuleKernels) -> dict[str, dict[str, str]]:
    """Instruction name -> ``{"label": badge, "tooltip": ...}`` for each kernel with
    something to say (nothing on CPU)."""
    out: dict[str, dict[str, str]] = {}
    for k in kernels.kernels:
        if kernels.kind == "gpu" and k.emitter:
            tile = " " + "x".join(map(str, k.tile.output_tiles[0])) \
                if k.tile is not None and k.tile.output_tiles else ""
            stream = f" · {k.thunk.stream}" \
                if k.thunk is not None and k.thunk.stream != COMPUTE_STREAM else ""
            tip = f"XLA:GPU emitter: {k.emitter}" + (f"; {k.tile.label}" if k.tile else "")
            out[k.name] = {"label": f"⚙ {k.emitter}{tile}{stream}", "tooltip": tip}
        elif kernels.kind == "tpu":
            parts = []
            if k.window is not None and k.window.estimated_cycles is not None:
                parts.append(f"est. {k.window.estimated_cycles:,} cycles")
            if k.memory_space:
                parts.append(memory_space_name(k.memory_space))
            if parts:
                us = f" ({k.estimate_us:.2f} µs)" if k.estimate_us is not None else ""
                out[k.name] = {"label": " · ".join(parts),
                               "tooltip": f"XLA:TPU: {' · '.join(parts)}{us}"}
    return out
