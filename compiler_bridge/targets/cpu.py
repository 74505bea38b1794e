"""XLA:CPU: what its backend configs and attributes say about how a kernel runs, and the
generic CPU profile, used until ``calibrate`` measures this machine."""

from __future__ import annotations

import math

from ..hlo import HloInstruction
from .device import DeviceProfile, G

# the library matmul XLA:CPU calls (oneDNN), as a custom call
CPU_MATMUL_CALLS = ("__onednn$matmul",)


def is_single_kernel_call(inst: HloInstruction) -> bool:
    """A ``call`` that XLA:CPU compiles into one kernel (``xla_cpu_small_call``): small
    loops are wrapped this way and run with no per-op events inside."""
    return inst.opcode == "call" and "xla_cpu_small_call" in inst.attributes.get(
        "frontend_attributes", "")


def is_ynnpack_fusion(inst: HloInstruction) -> bool:
    """A fusion XLA:CPU hands to YNNPACK (its backend config names ``__ynn_fusion``)."""
    return "__ynn_fusion" in inst.attributes.get("backend_config", "")


def outer_partitions(inst: HloInstruction) -> int:
    """The product of the backend config's ``outer_dimension_partitions``: how many threads
    XLA:CPU splits a loop fusion over; 0 when the config has none (or an unreadable one)."""
    if "outer_dimension_partitions" not in inst.attributes.get("backend_config", ""):
        return 0
    cfg = inst.backend_config
    parts = cfg.get("outer_dimension_partitions") if isinstance(cfg, dict) else None
    try:
        return math.prod(int(p) for p in parts) if parts else 0
    except (TypeError, ValueError):
        return 0

# A generic modern server CPU core pair, until `calibrate` measures the real one: 2 cores with
# AVX2 FMA at ~3 GHz give 2 x 2 FMA x 8 lanes x 2 flops x 3 GHz ~ 192 GFLOP/s f32 peak (Intel
# 64 and IA-32 Optimization Reference Manual, FMA throughput); sustained DRAM bandwidth ~20 GB/s
# per socket slice; XLA:CPU's thunk executor runs a tiny kernel in ~0.25 µs under the
# profiler (measured here: JAX 0.10.2, 2 cores). Run `python -m compiler_bridge calibrate`
# for real figures.
CPU = DeviceProfile(
    "CPU (generic)", "cpu",
    {"f32": 100 * G, "f64": 50 * G, "bf16": 50 * G, "f16": 50 * G},
    vector_flops=30 * G, bandwidth=20 * G, launch_overhead_us=0.3, per_buffer_us=0.002,
    transcendental_flops=20.0,
    source="generic estimate; run `python -m compiler_bridge calibrate`")

