"""Device profiles for the roofline: peak flop rates, memory bandwidth, kernel overhead.

A profile is data: the built-in ones below come from vendors' public datasheets (each
number's source is cited beside it); ``python -m compiler_bridge calibrate`` measures this
machine and saves a profile as JSON (``~/.cache/hlolens/device.json`` unless ``--out``),
which :func:`profile_for_platform` then prefers to the generic CPU profile for CPU dumps.
``DeviceProfile.key`` hashes every field: caches of what a profile computes key on it.

All rates are dense (no 2:4 sparsity) peaks per chip; real kernels reach a fraction of
them, which is what the learned model corrects for.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
from dataclasses import asdict, dataclass, field
from functools import cached_property

from ..config import settings


T = 1e12
G = 1e9


@dataclass(frozen=True)
class DeviceProfile:
    """What the roofline needs to know about one device."""

    name: str
    kind: str                            # 'cpu' | 'gpu' | 'tpu'
    matmul_flops: dict[str, float]       # dtype -> flop/s of dot/convolution kernels
    vector_flops: float                  # flop/s of elementwise/reduction work
    bandwidth: float                     # bytes/s of main memory (HBM, DRAM)
    launch_overhead_us: float            # fixed cost of one kernel
    per_buffer_us: float = 0.0           # extra fixed cost per operand/output buffer
    transcendental_flops: float = 4.0    # one exp/tanh/rsqrt costs this many flops
    # [[bytes moved, bytes/s], ...] by working-set size (caches); empty: `bandwidth` always
    bandwidth_curve: list = field(default_factory=list)
    # bytes/s of writing a program output (a new buffer each run, reused from the heap:
    # cold cache lines); 0: same as any write
    output_bandwidth: float = 0.0
    # how much faster a kernel XLA:CPU splits over threads (outer_dimension_partitions)
    # runs its vector work, at most: `vector_flops` is one thread's rate
    threads: float = 1.0
    # flop/s of a convolution with feature groups (depthwise), which XLA:CPU's libraries
    # run far below the matmul rate; 0: the vector rate (not measured)
    grouped_conv_flops: float = 0.0
    # one sine, cosine or tangent costs this many flops; 0: transcendental_flops
    trig_flops: float = 0.0
    # flop/s of an FFT, its flops counted as 5·n·log2(n) per transform (costs.fft_work);
    # 0: XLA's count of its flops at the vector rate (not measured)
    fft_flops: float = 0.0
    # flop/s of a reduce-window in generated loops (XLA:CPU's max-pool); 0: the vector rate
    window_flops: float = 0.0
    # bytes/s of writing pages malloc mapped fresh this run (a block over glibc's 32 MiB
    # mmap threshold: page faults); 0: output_bandwidth
    fresh_bandwidth: float = 0.0
    source: str = ""                     # where the numbers come from
    measured: bool = False               # True for a calibrated profile
    details: dict = field(default_factory=dict)   # calibration raw figures

    @property
    def fresh_rate(self) -> float:
        """Bytes/s of writing pages mapped fresh this run (the program-output rate when
        not measured; 0: neither)."""
        return self.fresh_bandwidth or self.output_bandwidth

    def matmul_rate(self, dtype: str) -> float:
        """Flop/s of a dot in this element type (falls back to f32, then the best rate)."""
        if dtype in self.matmul_flops:
            return self.matmul_flops[dtype]
        if dtype.startswith("f8") and "f8" in self.matmul_flops:
            return self.matmul_flops["f8"]
        if dtype.startswith(("s8", "u8")) and "s8" in self.matmul_flops:
            return self.matmul_flops["s8"]
        return self.matmul_flops.get("f32", max(self.matmul_flops.values(), default=self.vector_flops))

    def bandwidth_for(self, nbytes: float) -> float:
        """Bytes/s for a kernel moving ``nbytes``: log-log interpolation of
        ``bandwidth_curve`` (clamped at its ends), else ``bandwidth``."""
        curve = self.bandwidth_curve
        if not curve:
            return self.bandwidth
        if nbytes <= curve[0][0]:
            return curve[0][1]
        for (x0, y0), (x1, y1) in zip(curve, curve[1:]):
            if nbytes <= x1:
                f = (math.log(nbytes) - math.log(x0)) / (math.log(x1) - math.log(x0))
                return math.exp(math.log(y0) + f * (math.log(y1) - math.log(y0)))
        return curve[-1][1]

    def to_json(self) -> dict:
        return asdict(self)

    @cached_property
    def key(self) -> str:
        """Content identity: a hash of every field (every rate counts, not just the name).
        A profile is a value: build another one (``dataclasses.replace``) to change it."""
        text = json.dumps(self.to_json(), sort_keys=True, default=repr)
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    @staticmethod
    def from_json(data: dict) -> "DeviceProfile":
        known = {f for f in DeviceProfile.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["matmul_flops"] = {str(k): float(v) for k, v in kwargs.get("matmul_flops", {}).items()}
        kwargs["bandwidth_curve"] = sorted([float(a), float(b)] for a, b in
                                           kwargs.get("bandwidth_curve", []) or [])
        return DeviceProfile(**kwargs)


# ---------------------------------------------------------------------------- built-ins
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

# Google Cloud TPU v4: cloud.google.com/tpu/docs/v4 ("System architecture"): peak 275 TFLOPS
# (bf16) per chip, 32 GiB HBM2 at 1,200 GB/s. f32 dots run as bf16 passes under JAX's default
# precision. Vector units: about 1/16 of the MXU rate (estimate; not in the datasheet).
TPU_V4 = DeviceProfile(
    "TPU v4", "tpu",
    {"bf16": 275 * T, "f32": 275 * T, "s8": 275 * T},
    vector_flops=275 * T / 16, bandwidth=1.2 * T, launch_overhead_us=1.0,
    transcendental_flops=4.0,
    source="cloud.google.com/tpu/docs/v4 (275 TFLOPS bf16, 1200 GB/s HBM)")

# Google Cloud TPU v5e: cloud.google.com/tpu/docs/v5e ("System architecture"): 197 TFLOPS bf16,
# 394 TOPS int8 per chip, 16 GB HBM2 at 819 GB/s. Vector-unit rate: estimate as for v4.
TPU_V5E = DeviceProfile(
    "TPU v5e", "tpu",
    {"bf16": 197 * T, "f32": 197 * T, "s8": 394 * T},
    vector_flops=197 * T / 16, bandwidth=0.819 * T, launch_overhead_us=1.0,
    transcendental_flops=4.0,
    source="cloud.google.com/tpu/docs/v5e (197 TFLOPS bf16, 394 TOPS int8, 819 GB/s HBM)")

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

BUILTIN: dict[str, DeviceProfile] = {
    "cpu": CPU, "h100": H100, "h200": H200, "a100": A100, "tpu_v4": TPU_V4, "tpu_v5e": TPU_V5E,
}


def device_profile(name: str) -> DeviceProfile:
    """A built-in profile by key ('cpu', 'h100', 'h200', 'a100', 'tpu_v4', 'tpu_v5e'),
    'local' (the calibrated profile of this machine), or a path to a profile JSON."""
    key = name.lower().replace("-", "_").replace(" ", "_")
    if key in BUILTIN:
        return BUILTIN[key]
    if key == "local":
        prof = load_calibrated()
        if prof is None:
            raise KeyError("no calibrated profile: run `python -m compiler_bridge calibrate`")
        return prof
    if os.path.exists(name):
        return load_profile(name)
    raise KeyError(f"unknown device {name!r}; known: {', '.join(BUILTIN)}, local, or a JSON path")


def load_profile(path: str) -> DeviceProfile:
    with open(path, encoding="utf-8") as f:
        return DeviceProfile.from_json(json.load(f))


def save_profile(profile: DeviceProfile, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(profile.to_json(), f, indent=2)
        f.write("\n")
    return path


def load_calibrated(path: str = "") -> DeviceProfile | None:
    path = path or settings().calibrated_profile
    if not os.path.exists(path):
        return None
    try:
        return load_profile(path)
    except (OSError, ValueError, TypeError):
        return None


def profile_for_platform(platform_prefix: str) -> DeviceProfile:
    """The profile for a dump's platform (the after-optimizations file's prefix).

    ``cpu`` -> this machine's calibrated profile when there is one, else the generic CPU;
    ``sm_9.0_gpu`` -> H100 (H200 shares sm_90: pick it by name), ``sm_8.0_gpu`` -> A100;
    ``tpu`` -> TPU v4.
    """
    p = platform_prefix.lower()
    if p.startswith("sm_9"):
        return H100
    if p.startswith("sm_8") or "gpu" in p:
        return A100
    if "tpu" in p:
        return TPU_V4
    return load_calibrated() or CPU


def host_name() -> str:
    return f"{platform.node() or 'host'} ({platform.machine()}, {os.cpu_count()} cores)"
