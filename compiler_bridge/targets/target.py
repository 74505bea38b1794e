"""Which machine a module was compiled for, from what XLA wrote: a :class:`Target`.

XLA names the platform in the after-optimizations file's prefix (``cpu_``, ``sm_9.0a_gpu_``,
``gfx942_gpu_``; no prefix in older XLA and, with it, no word on the target). Each target's
own knowledge lives in its module (``cpu``, ``gpu``, ``tpu``); this one only dispatches.
"""

from __future__ import annotations

from dataclasses import dataclass

from .gpu import gpu_arch, gpu_chip

@dataclass(frozen=True, slots=True)
class Target:
    """``kind``: 'cpu', 'gpu', 'tpu' or '' (the dump does not say); ``platform``: the file-name
    prefix as XLA wrote it; ``arch``: the GPU architecture ('sm_9.0a', 'gfx942') or '';
    ``chip``: the key of the built-in device profile that stands for it ('h100', 'a100',
    'tpu_v4'; '' for a CPU, whose profile is this machine's)."""

    kind: str
    platform: str = ""
    arch: str = ""
    chip: str = ""

    @property
    def label(self) -> str:
        """'XLA:GPU sm_9.0a', 'XLA:CPU', ... for a page or a JSON field."""
        if not self.kind:
            return "unknown target"
        return f"XLA:{self.kind.upper()}" + (f" {self.arch}" if self.arch else "")


def target_of_platform(platform: str) -> Target:
    """The target an after-optimizations file's prefix names (``sm_9.0a_gpu`` -> GPU)."""
    p = platform.lower()
    arch = gpu_arch(p)
    if arch is not None or "gpu" in p:
        return Target("gpu", platform, arch.name if arch else "", gpu_chip(arch))
    if "tpu" in p:
        return Target("tpu", platform, chip="tpu_v4")
    if p == "cpu":
        return Target("cpu", platform)
    return Target("", platform)
