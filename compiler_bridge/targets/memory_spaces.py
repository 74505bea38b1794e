"""Memory spaces per target: what each buffer-assignment color is and which of them XLA's
``peak_memory_in_bytes`` counts the temporaries of (a TPU chip's HBM is its profile's
``memory_bytes``).

A buffer's memory space is its layout's ``S(n)``; the buffer assignment gives each
allocation that number as its color (``allocation 94: ..., color 1``, values ``@1``) and the
memory-usage report names it (``Memory Space: vmem (color=1)``). Color 5 is XLA's host
memory space (``Layout::kHostMemorySpace``): ``memory_analysis()`` counts it apart (the
``host_*`` fields).
"""

from __future__ import annotations

__all__ = ["HOST_COLOR", "PEAK_HEAP_COLORS", "PEAK_HEAP_OCCUPIED", "TPU_HBM_CHUNK",
           "known_space", "space_name"]

HOST_COLOR = 5

# color -> name, per target kind (XLA's report says 'default' for color 0 everywhere)
_NAMES: dict[str, dict[int, str]] = {
    "tpu": {0: "HBM", 1: "VMEM", 2: "SMEM"},
    "gpu": {0: "HBM"},
    "cpu": {0: "RAM"},
}

# The colors whose temporaries enter XLA's peak, measured against memory_analysis()
# (ARCHITECTURE.md §9.9): XLA:GPU its one device space; XLA:TPU HBM and VMEM, each space's
# peak on its own and the bigger one counted (SMEM scalars and the sync-flag space 6
# not); XLA:CPU none (its peak is the buffers live for the whole run: arguments, outputs,
# constants).
PEAK_HEAP_COLORS: dict[str, tuple[int, ...]] = {"gpu": (0,), "tpu": (0, 1), "cpu": ()}
# How the temporaries' peak is summed: XLA:GPU's is the bytes the heap occupies (a value
# that takes over its operand's bytes, in place, adds none); XLA:TPU's (libtpu) adds the
# sizes of the live values, one instruction's outputs at the same bytes once.
PEAK_HEAP_OCCUPIED = {"gpu": True, "tpu": False, "cpu": True}
# XLA:TPU places the chunks of its HBM temp heap at multiples of 16 KiB (every offset of
# every HBM temp allocation dumped here is one); its temp_size_in_bytes counts each chunk
# rounded up to that granule on top of the allocation, itself rounded up (ARCHITECTURE.md
# §9.9).
TPU_HBM_CHUNK = 16 * 1024


def known_space(kind: str, color: int) -> str | None:
    """'HBM', 'VMEM', 'SMEM', 'host', ... for a target kind and color; None when this
    module does not know it."""
    return _NAMES.get(kind, {}).get(color) or ("host" if color == HOST_COLOR else None)


def space_name(kind: str, color: int, reported: str = "") -> str:
    """'HBM', 'VMEM', ... for a target kind and color; else XLA's report's name, else
    'color N'."""
    name = known_space(kind, color)
    if name:
        return name
    if reported and reported != "default":
        return reported
    return "default" if color == 0 else f"color {color}"
