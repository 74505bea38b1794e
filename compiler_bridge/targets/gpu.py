"""XLA:GPU: what its dump's file names say about the device, and the GPUs' datasheets.

XLA:GPU prefixes a module's after-optimizations files with the device's architecture:
``sm_9.0a_gpu_after_optimizations.txt`` (NVIDIA compute capability 9.0, the ``a`` features of
Hopper), ``sm_8.0_gpu_...`` (Ampere A100), ``gfx942_gpu_...`` (AMD ROCm, MI300).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..hlo import HloInstruction
from .device import DeviceProfile, G, T
from .textproto import first, parse_text

# XLA's published H100 SXM spec (openxla/xla xla/backends/gpu/target_config/specs/
# h100_sxm.txtpb, Apache-2.0, without the fields newer than jaxlib 0.10.2's proto): the
# device `python -m compiler_bridge compile --target h100` compiles for
H100_SPEC = os.path.join(os.path.dirname(__file__), "specs", "h100_sxm.txtpb")

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


def gpu_chip(arch: GpuArch | None, name: str = "") -> str:
    """The built-in profile for an architecture: compute capability 9.x -> ``h100``, or
    ``h200`` when the device's name says H200 (both are sm_90), every other GPU -> ``a100``
    (the datasheets we have)."""
    if arch is not None and arch.vendor == "nvidia" and arch.major == 9:
        return "h200" if "h200" in name.lower() else "h100"
    return "a100"


# XLA's PrimitiveType numbers (xla/xla_data.proto), the keys of a target config's
# rate_infos maps, for the element types a roofline prices
PRIMITIVE_TYPES = {2: "s8", 6: "u8", 10: "f16", 11: "f32", 12: "f64", 16: "bf16",
                   19: "f8e5m2", 20: "f8e4m3fn", 28: "f8e4m3"}


@dataclass(frozen=True)
class GpuDeviceInfo:
    """What a ``gpu_target_config.pbtxt`` (XLA's ``stream_executor.GpuTargetConfigProto``,
    the device XLA:GPU compiled for) says the roofline needs: ``name`` (XLA's and jax's
    device kind, e.g. 'NVIDIA H100 80GB HBM3'), SMs (``core_count``), FP32 lanes per SM
    (``fpus_per_core``), clock, bandwidth, memory, and per element type the matrix units'
    (tensor cores') and scalar units' flop rates."""

    name: str
    core_count: int
    fpus_per_core: int
    clock_ghz: float
    memory_bandwidth: float           # bytes/s
    memory_bytes: int
    l2_cache_bytes: int
    matrix_flops: dict[str, float]    # element type -> flop/s
    scalar_flops: dict[str, float]

    @property
    def vector_flops(self) -> float:
        """XLA's ``CalculateEffectiveFlopsPerNs`` with every SM and lane busy: one FMA (2
        flops) per FP32 lane per cycle."""
        return self.core_count * self.fpus_per_core * self.clock_ghz * G * 2


def _rates(unit: dict | None, cores: int) -> dict[str, float]:
    """Flop/s per element type of an ``ExecutionUnitDescriptionProto``, as XLA's
    ``GpuPerformanceModelBase::CalculatePeakMatrixOpsPerNs`` computes them
    (xla/service/gpu/model/gpu_performance_model_base.cc): clock x ops per clock x 2 (an
    FMA is two flops) x units per core x cores."""
    out: dict[str, float] = {}
    for entry in (unit or {}).get("rate_infos", []):
        dtype = PRIMITIVE_TYPES.get(int(first(entry, "key", default=0)))
        rate = first(entry, "value", default={})
        if dtype is None or not isinstance(rate, dict):
            continue
        out[dtype] = (float(first(rate, "clock_rate_ghz", default=0)) * G
                      * int(first(rate, "ops_per_clock", default=0)) * 2
                      * int(first(rate, "units_per_core", default=0)) * cores)
    return out


def gpu_device_info(text: str) -> GpuDeviceInfo:
    """The device of a ``gpu_target_config.pbtxt``; ``ValueError`` when the text is no
    target config (no ``gpu_device_info`` with SMs and a clock)."""
    info = first(parse_text(text), "gpu_device_info")
    if not isinstance(info, dict) or not first(info, "core_count") \
            or not first(info, "clock_rate_ghz"):
        raise ValueError("expected a GpuTargetConfigProto with gpu_device_info (core_count, "
                         "clock_rate_ghz)")
    cores = int(first(info, "core_count"))
    return GpuDeviceInfo(
        name=str(first(info, "name", default="") or first(info, "device_description_str",
                                                          default="")),
        core_count=cores, fpus_per_core=int(first(info, "fpus_per_core", default=0)),
        clock_ghz=float(first(info, "clock_rate_ghz")),
        memory_bandwidth=float(first(info, "memory_bandwidth", default=0)),
        memory_bytes=int(first(info, "device_memory_size", default=0)),
        l2_cache_bytes=int(first(info, "l2_cache_size", default=0)),
        matrix_flops=_rates(first(info, "matrix_unit_description"), cores),
        scalar_flops=_rates(first(info, "scalar_unit_description"), cores))


def gpu_profile(info: GpuDeviceInfo, fallback: DeviceProfile) -> DeviceProfile:
    """The roofline's profile of the device a dump was compiled for, from its target
    config: matmul rates from the matrix units (f32 dots on TF32 tensor cores: XLA:GPU's
    default precision), the vector rate from the FP32 lanes, the bandwidth as XLA's cost
    model takes it. A figure the config lacks (an older XLA writes no unit descriptions)
    comes from ``fallback``, the datasheet of its architecture."""
    matmul = {**fallback.matmul_flops, **info.matrix_flops}
    if "f8e4m3fn" in info.matrix_flops:
        matmul["f8"] = info.matrix_flops["f8e4m3fn"]
    return DeviceProfile(
        info.name or fallback.name, "gpu", matmul,
        vector_flops=info.vector_flops or fallback.vector_flops,
        bandwidth=info.memory_bandwidth or fallback.bandwidth,
        launch_overhead_us=fallback.launch_overhead_us,
        transcendental_flops=fallback.transcendental_flops,
        source=f"the dump's gpu_target_config.pbtxt ({info.core_count} SMs at "
               f"{info.clock_ghz:g} GHz, {info.memory_bandwidth / 1e12:.3g} TB/s; rates as "
               "XLA's GPU performance model computes them); launch overhead and what the "
               f"config lacks from {fallback.source}")


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

