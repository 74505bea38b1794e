"""XLA:TPU's decisions per kernel, read from its after-codegen HLO: tiled layouts, memory
spaces, window configs and XLA:TPU's own cycle estimates.

- **Tiled layouts.** ``bf16[1024,512]{1,0:T(8,128)(2,1)}``: the array is stored in tiles of
  8x128 elements over its two most minor (physical) dimensions, each tile then in 2x1
  sub-tiles (two bf16 packed in 32 bits). Every tiled dimension is padded up to a multiple of
  its tile, so ``f32[8,129]{1,0:T(8,128)}`` takes 8x256 elements and ``f32[]{:T(128)}`` 128.
  :func:`tiling` computes the padded shape and the bytes padding wastes; the sizes equal the
  ones XLA:TPU's buffer assignment writes (``value: <...> (size=N,...)``, tested).
- **Memory spaces.** ``S(n)`` in a layout: 0 the default (HBM), 1 VMEM, 2 SMEM on TPU (the
  names XLA writes in the memory-usage report: ``Memory Space: vmem (color=1)``).
- **Window configs.** Each kernel XLA:TPU emitted carries ``window_config`` in its
  backend_config (after codegen only): ``kernel_window_bounds``, ``output_window_bounds``,
  ``input_window_bounds``, ``iteration_bounds`` and ``estimated_cycles``, XLA:TPU's cost
  model's cycles for the kernel.
- **The clock** that turns cycles into time is not in the dump. :data:`TPU_CLOCK_HZ` is the
  peak bf16 rate of Google's datasheet divided by the MXUs' multiply-adds per cycle (see the
  table's comments); the dumps agree: a fixed-cost kernel takes 1,825 cycles on v5e and
  2,121 on v6e (1.16x, the ratio of 1.75 GHz to 1.5 GHz, the same 1.2 µs on both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..hlo import HloInstruction, Shape

# The memory spaces of XLA:TPU (``S(n)``), as its memory-usage report names them.
TPU_MEMORY_SPACES = {0: "HBM", 1: "VMEM", 2: "SMEM", 5: "host"}

# The TensorCore clock of each generation, Hz, with how it follows from the datasheet:
# clock = peak bf16 FLOP/s / (TensorCores x MXUs x MXU rows x MXU columns x 2).
TPU_CLOCK_HZ = {
    # TPU v4 paper (Jouppi et al., ISCA 2023): 1,050 MHz; = 275 TFLOPs / (2 TC x 4 MXU x 128^2 x 2)
    "v4": 1.05e9,
    # cloud.google.com/tpu/docs/v5e: 197 TFLOPs, 1 TensorCore with 4 MXUs (128x128)
    "v5e": 1.5e9,
    # cloud.google.com/tpu/docs/v5p: 459 TFLOPs, 2 TensorCores with 4 MXUs (128x128) each
    "v5p": 1.75e9,
    # cloud.google.com/tpu/docs/v6e: 918 TFLOPs on 256x256 MXUs: 1.75 GHz with 4 of them,
    # the clock the dumps' cycle counts agree with against v5e's (module docstring)
    "v6e": 1.75e9,
}
CLOCK_SOURCE = ("TPU clock: the datasheet's peak bf16 FLOP/s over the MXUs' FLOPs per cycle "
                "(cloud.google.com/tpu/docs/<generation>; v4: 1,050 MHz, ISCA 2023 paper)")

# platform_version in a module's topology.textproto ("TFRT TPU v5 lite ...") -> generation
_GENERATION = (("v6 lite", "v6e"), ("v5 lite", "v5e"), ("v5e", "v5e"), ("v6e", "v6e"),
               ("v5p", "v5p"), ("v5", "v5p"), ("v4", "v4"))
_PLATFORM_VERSION = re.compile(r'platform_version:\s*"([^"\\]*(?:\\.[^"\\]*)*)"')


def tpu_generation(topology_text: str) -> str:
    """'v5e', 'v6e', 'v5p', 'v4' from a module's ``topology.textproto``
    (``platform_version: "TFRT TPU v5 lite ..."``); '' when it names no TPU."""
    m = _PLATFORM_VERSION.search(topology_text)
    version = (m.group(1) if m else "").split("\\n")[0].lower()
    if "tpu" not in version:
        return ""
    for needle, gen in _GENERATION:
        if needle in version:
            return gen
    return ""


@dataclass(frozen=True, slots=True)
class Tiling:
    """How one tiled array is stored: ``tiles`` as written (the first is the tile shape),
    the ``padded`` physical dimensions (major to minor, before tiling into blocks), the
    array's ``bytes`` and the ``padded_bytes`` it takes."""

    tiles: tuple[tuple[int, ...], ...]
    padded: tuple[int, ...]
    bytes: int
    padded_bytes: int

    @property
    def tile(self) -> tuple[int, ...]:
        return self.tiles[0]

    @property
    def wasted_bytes(self) -> int:
        return self.padded_bytes - self.bytes


def _element_bits(shape: Shape) -> int:
    if shape.layout is not None and shape.layout.element_size_in_bits:
        return shape.layout.element_size_in_bits
    return 8 * Shape(shape.element_type).byte_size     # one element, at least a byte


def tiling(shape: Shape) -> Tiling | None:
    """The storage of a tiled array (None for an untiled one, a tuple, or a tile with
    combined dimensions). Each tile applies to the most minor dimensions of what the tiles
    before it left (the array's physical dimensions, padded with leading 1s when the tile
    has more dimensions than the array); each of them is padded up to a multiple of it."""
    layout = shape.layout
    if not shape.is_array or layout is None or not layout.tiles \
            or any(d < 0 for t in layout.tiles for d in t):
        return None
    physical = [shape.dimensions[i] for i in reversed(layout.minor_to_major)] \
        if len(layout.minor_to_major) == shape.rank else list(shape.dimensions)
    dims = list(physical)
    padded_first: tuple[int, ...] = ()
    for n, tile in enumerate(layout.tiles):
        if len(tile) > len(dims):
            dims = [1] * (len(tile) - len(dims)) + dims
        head, minor = dims[: len(dims) - len(tile)], dims[len(dims) - len(tile):]
        padded = [-(-d // t) * t for d, t in zip(minor, tile)]
        if n == 0:
            padded_first = tuple(head + padded)
        dims = head + [p // t for p, t in zip(padded, tile)] + list(tile)
    count = 1
    for d in dims:
        count *= d
    bits = _element_bits(shape)
    return Tiling(layout.tiles, padded_first, shape.byte_size, (count * bits + 7) // 8)


def memory_space(shape: Shape) -> int:
    """The ``S(n)`` of an array's layout (0 when none: the default memory)."""
    return shape.layout.memory_space if shape.is_array and shape.layout is not None else 0


def memory_space_name(space: int) -> str:
    return TPU_MEMORY_SPACES.get(space, f"S({space})")


@dataclass(frozen=True, slots=True)
class WindowConfig:
    """XLA:TPU's ``window_config`` of one kernel, as written (bounds in windows)."""

    kernel_window_bounds: tuple[int, ...]
    output_window_bounds: tuple[int, ...]
    input_window_bounds: tuple[int, ...]
    iteration_bounds: tuple[int, ...]
    estimated_cycles: int | None
    estimated_vmem_bytes: int | None

    def to_json(self) -> dict[str, Any]:
        return {"kernel_window_bounds": list(self.kernel_window_bounds),
                "output_window_bounds": list(self.output_window_bounds),
                "input_window_bounds": list(self.input_window_bounds),
                "iteration_bounds": list(self.iteration_bounds),
                "estimated_cycles": self.estimated_cycles,
                "estimated_vmem_bytes": self.estimated_vmem_bytes}


def _ints(values: Any) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in values or ())
    except (TypeError, ValueError):
        return ()


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def window_config(inst: HloInstruction) -> WindowConfig | None:
    """The ``window_config`` of an instruction's backend_config, None when it has none."""
    cfg = inst.backend_config
    wc = cfg.get("window_config") if isinstance(cfg, dict) else None
    if not isinstance(wc, dict):
        return None
    return WindowConfig(_ints(wc.get("kernel_window_bounds")),
                        _ints(wc.get("output_window_bounds")),
                        _ints(wc.get("input_window_bounds")),
                        _ints(wc.get("iteration_bounds")),
                        _int(wc.get("estimated_cycles")),
                        _int(wc.get("estimated_vmem_bytes")))


def cycles_to_us(cycles: int | None, generation: str) -> float | None:
    """Cycles at the generation's clock (:data:`TPU_CLOCK_HZ`), in µs; None when either is
    unknown."""
    hz = TPU_CLOCK_HZ.get(generation)
    if cycles is None or hz is None:
        return None
    return cycles / hz * 1e6
