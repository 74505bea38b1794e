"""XLA:CPU: the generic CPU profile, used until ``calibrate`` measures this machine."""

from __future__ import annotations

from .device import DeviceProfile, G

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

