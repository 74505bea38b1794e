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
- **The clock** that turns cycles into time is not in the dump: each TPU generation's
  profile holds it (``DeviceProfile.clock_hz``, derived from the datasheet in ``tpu``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..hlo import HloInstruction, Shape
from .memory_spaces import known_space


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
    """'HBM', 'VMEM', 'SMEM', 'host' for XLA:TPU's ``S(n)``; else 'S(n)'."""
    return known_space("tpu", space) or f"S({space})"


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


def cycles_to_us(cycles: float | None, clock_hz: float | None) -> float | None:
    """Cycles at a clock (a profile's ``clock_hz``), in µs; None when either is unknown."""
    if cycles is None or not clock_hz:
        return None
    return cycles / clock_hz * 1e6
