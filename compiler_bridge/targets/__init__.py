"""targets: what is particular to each machine XLA compiles for, in one place per target.

- ``target``: :class:`Target` and :func:`target_of_platform` (which target a dump's file
  names say it was compiled for);
- ``device``: :class:`DeviceProfile`, what the roofline needs to know about a device;
- ``cpu``, ``gpu``, ``tpu``: each target's knowledge: its file naming (``gpu``: the
  ``sm_9.0a_gpu_`` prefix), its backend_config readers, its device facts (``gpu``: the
  dump's ``gpu_target_config.pbtxt``; ``tpu``: the chip and slice of ``topology.textproto``,
  the ``.cl_<N>`` compile id of a module's name) and its datasheets (built-in profiles: TPU
  clocks and HBM included);
- ``textproto``: the protobuf text (and wire) format those facts are written in.
- ``gpu_kernels``, ``tpu_kernels``: what each backend decided per kernel, read from text
  (emitters, Triton tiles, thunk sequence, PTX; tiled layouts, memory spaces, window configs,
  estimated cycles; the TPU clocks are the profiles' ``clock_hz``); ``compiler_bridge.kernels``
  brings them the files.

Imports ``hlo`` at most; ``dumps``, ``perf``, ``memory`` and ``spmd`` ask it about targets.
"""

from __future__ import annotations

from .cpu import CPU, CPU_MATMUL_CALLS, is_single_kernel_call, is_ynnpack_fusion, outer_partitions
from .device import DeviceProfile
from .gpu import (A100, GPU_MATMUL_CALLS, H100, H200, GpuArch, GpuDeviceInfo,
                  gemm_lhs_contracting, gpu_arch, gpu_device_info, gpu_profile)
from .target import CompileTarget, Target, compile_target, target_of_files, target_of_platform
from .tpu import (CLOCK_SOURCE, TPU_V4, TPU_V5E, TPU_V5P, TPU_V6E, TpuGeneration, TpuTopology,
                  chip_generation, split_compile_id, tpu_topology)
from .memory_spaces import (HOST_COLOR, PEAK_HEAP_COLORS, PEAK_HEAP_OCCUPIED, TPU_HBM_CHUNK,
                            space_name)
from .gpu_kernels import (COLLECTIVE_THUNKS, COMPUTE_STREAM, AutotuneResult, Thunk, TileConfig,
                          collective_op, collective_strategy, gpu_emitter, instruction_kernel, is_sync,
                          kernel_name, match_collectives, match_thunks,
                          parse_autotune_results, parse_thunk_sequence, ptx_kernels,
                          tile_config)
from .tpu_kernels import (Tiling, WindowConfig, cycles_to_us, memory_space, memory_space_name,
                          tiling, window_config)

# every library matmul a backend calls as a custom call
MATMUL_CUSTOM_CALLS = GPU_MATMUL_CALLS + CPU_MATMUL_CALLS

# the built-in device profiles by key (``python -m compiler_bridge runtimes --device KEY``)
BUILTIN: dict[str, DeviceProfile] = {
    "cpu": CPU, "h100": H100, "h200": H200, "a100": A100, "tpu_v4": TPU_V4,
    "tpu_v5e": TPU_V5E, "tpu_v5p": TPU_V5P, "tpu_v6e": TPU_V6E,
}
# the profile of a target whose device no file names (a TPU dump without its topology)
DEFAULT_CHIP = {"gpu": "h100", "tpu": "tpu_v5e"}

__all__ = [
    "A100", "BUILTIN", "CPU", "CompileTarget", "compile_target", "DEFAULT_CHIP", "DeviceProfile", "GpuArch", "GpuDeviceInfo", "H100",
    "H200", "MATMUL_CUSTOM_CALLS", "TPU_V4", "TPU_V5E", "TPU_V5P", "TPU_V6E", "Target",
    "TpuTopology", "gemm_lhs_contracting", "gpu_arch", "gpu_device_info", "gpu_profile",
    "is_single_kernel_call", "is_ynnpack_fusion", "outer_partitions", "target_of_files",
    "target_of_platform", "tpu_topology", "TpuGeneration", "chip_generation",
    "split_compile_id",
    # what each backend decided per kernel (gpu_kernels, tpu_kernels)
    "AutotuneResult", "CLOCK_SOURCE", "COLLECTIVE_THUNKS", "COMPUTE_STREAM", "collective_op",
    "collective_strategy", "instruction_kernel", "is_sync", "match_collectives",
    "Thunk", "TileConfig",
    "Tiling", "WindowConfig", "cycles_to_us", "gpu_emitter", "kernel_name", "match_thunks",
    "memory_space", "memory_space_name", "parse_autotune_results", "parse_thunk_sequence",
    "ptx_kernels", "tile_config", "tiling", "window_config",
    "HOST_COLOR", "PEAK_HEAP_COLORS", "PEAK_HEAP_OCCUPIED", "TPU_HBM_CHUNK",
    "space_name",
]
