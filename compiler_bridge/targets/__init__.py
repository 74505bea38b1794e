"""targets: what is particular to each machine XLA compiles for, in one place per target.

- ``target``: :class:`Target` and :func:`target_of_platform` (which target a dump's file
  names say it was compiled for);
- ``device``: :class:`DeviceProfile`, what the roofline needs to know about a device;
- ``cpu``, ``gpu``, ``tpu``: each target's knowledge: its file naming (``gpu``: the
  ``sm_9.0a_gpu_`` prefix), its backend_config readers, its datasheets (built-in profiles).

Imports ``hlo`` at most; ``dumps``, ``perf``, ``memory`` and ``spmd`` ask it about targets.
"""

from __future__ import annotations

from .cpu import CPU
from .device import DeviceProfile
from .gpu import A100, H100, H200, GpuArch, gpu_arch
from .target import Target, target_of_platform
from .tpu import TPU_V4, TPU_V5E

# the built-in device profiles by key (``python -m compiler_bridge runtimes --device KEY``)
BUILTIN: dict[str, DeviceProfile] = {
    "cpu": CPU, "h100": H100, "h200": H200, "a100": A100, "tpu_v4": TPU_V4,
    "tpu_v5e": TPU_V5E,
}

__all__ = [
    "A100", "BUILTIN", "CPU", "DeviceProfile", "GpuArch", "H100", "H200", "TPU_V4", "TPU_V5E",
    "Target", "gpu_arch", "target_of_platform",
]
