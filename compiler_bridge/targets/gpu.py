"""XLA:GPU: what its dump's file names say about the device, and the GPUs' datasheets.

XLA:GPU prefixes a module's after-optimizations files with the device's architecture:
``sm_9.0a_gpu_after_optimizations.txt`` (NVIDIA compute capability 9.0, the ``a`` features of
Hopper), ``sm_8.0_gpu_...`` (Ampere A100), ``gfx942_gpu_...`` (AMD ROCm, MI300).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..hlo import HloInstruction
from .device import DeviceProfile, T

_SM = re.compile(r"sm_(\d+?)\.?(\d+)([a-z]?)_gpu")   # sm_9.0a; the dot optional
_GFX = re.compile(r"(gfx[0-9a-f]+)_gpu")


@dataclass(frozen=True, slots=True)
class GpuArch:
    """The architecture a GPU dump names: ``vendor`` 'nvidia' with its compute capability
    (``major``, ``minor``, ``suffix`` such as 'a'), or 'amd' with its ``gfx`` name."""

    vendor: str
    major: int = 0
    minor: int = 0
    suffix: str = ""
    gfx: str = ""

    @property
    def name(self) -> str:
        if self.vendor == "amd":
            return self.gfx
        return f"sm_{self.major}.{self.minor}{self.suffix}"


def gpu_arch(platform: str) -> GpuArch | None:
    """The architecture in an after-optimizations file's prefix (``sm_9.0a_gpu``), None when
    the prefix names no GPU."""
    p = platform.lower()
    m = _SM.fullmatch(p)
    if m:
        return GpuArch("nvidia", int(m.group(1)), int(m.group(2)), m.group(3))
    m = _GFX.fullmatch(p)
    if m:
        return GpuArch("amd", gfx=m.group(1))
    return None


# the library matmuls XLA:GPU calls (cuBLAS, cuBLASLt), as custom calls
GPU_MATMUL_CALLS = ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8")


def gemm_lhs_contracting(inst: HloInstruction) -> tuple[int, ...]:
    """The lhs contracting dimensions a library matmul's backend config names
    (``gemm_backend_config.dot_dimension_numbers``); () when it names none."""
    cfg = inst.backend_config
    dims = None
    if isinstance(cfg, dict):
        gemm = cfg.get("gemm_backend_config", cfg)
        dims = gemm.get("dot_dimension_numbers") if isinstance(gemm, dict) else None
    if isinstance(dims, dict):
        return tuple(int(x) for x in dims.get("lhs_contracting_dimensions", []))
    return ()


def gpu_chip(arch: GpuArch | None) -> str:
    """The built-in profile for an architecture: compute capability 9.x -> ``h100`` (H200
    shares sm_90: pick it by name), every other GPU -> ``a100`` (the datasheets we have)."""
    if arch is not None and arch.vendor == "nvidia" and arch.major == 9:
        return "h100"
    return "a100"


# NVIDIA H100 SXM5: "NVIDIA H100 Tensor Core GPU" datasheet (nvidia.com/en-us/data-center/h100):
# FP64 34 TF, FP32 67 TF, TF32 tensor 494.7 TF, BF16/FP16 tensor 989.4 TF, FP8 1,978.9 TF,
# INT8 1,978.9 TOPS (dense = half the datasheet's "with sparsity" figures), HBM3 3.35 TB/s.
# XLA runs f32 dots on TF32 tensor cores under JAX's default precision, so f32 -> TF32.
# Kernel launch overhead of a few µs: NVIDIA's CUDA C++ Best Practices Guide; 4 µs here.
H100 = DeviceProfile(
    "H100 SXM", "gpu",
    {"f64": 67 * T, "f32": 494.7 * T, "bf16": 989.4 * T, "f16": 989.4 * T,
     "f8": 1978.9 * T, "s8": 1978.9 * T},
    vector_flops=67 * T, bandwidth=3.35 * T, launch_overhead_us=4.0,
    transcendental_flops=4.0,
    source="NVIDIA H100 Tensor Core GPU datasheet (SXM5, dense peaks)")

# NVIDIA H200 SXM: "NVIDIA H200 Tensor Core GPU" datasheet (nvidia.com/en-us/data-center/h200):
# the same Hopper compute as H100 SXM (FP32 67 TF, TF32 494.7 TF, BF16 989.4 TF, FP8 1,978.9 TF
# dense), 141 GB HBM3e at 4.8 TB/s.
H200 = DeviceProfile(
    "H200 SXM", "gpu",
    {"f64": 67 * T, "f32": 494.7 * T, "bf16": 989.4 * T, "f16": 989.4 * T,
     "f8": 1978.9 * T, "s8": 1978.9 * T},
    vector_flops=67 * T, bandwidth=4.8 * T, launch_overhead_us=4.0,
    transcendental_flops=4.0,
    source="NVIDIA H200 Tensor Core GPU datasheet (SXM, dense peaks)")

# NVIDIA A100 SXM4 80GB: "NVIDIA A100 Tensor Core GPU" datasheet (nvidia.com/en-us/data-center/a100):
# FP64 tensor 19.5 TF, FP32 19.5 TF, TF32 156 TF, BF16/FP16 312 TF, INT8 624 TOPS (dense),
# HBM2e 2,039 GB/s (the 40GB part: 1,555 GB/s).
A100 = DeviceProfile(
    "A100 SXM 80GB", "gpu",
    {"f64": 19.5 * T, "f32": 156 * T, "bf16": 312 * T, "f16": 312 * T, "s8": 624 * T},
    vector_flops=19.5 * T, bandwidth=2.039 * T, launch_overhead_us=4.0,
    transcendental_flops=4.0,
    source="NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB, dense peaks)")

