"""What the roofline needs to know about one device: peak flop rates, memory bandwidth, kernel
overhead. A profile is data: the built-in ones (``cpu``, ``gpu``, ``tpu`` beside this file) come
from vendors' public datasheets, each number's source cited beside it;
``python -m compiler_bridge calibrate`` measures this machine into one (``perf.calibrate``).
``DeviceProfile.key`` hashes every field: caches of what a profile computes key on it.

All rates are dense (no 2:4 sparsity) peaks per chip; real kernels reach a fraction of them,
which is what the learned model corrects for.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from functools import cached_property

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
    # Hz of the clock XLA's own cost model counts a kernel's cycles in (TPU
    # ``estimated_cycles``); 0: not known
    clock_hz: float = 0.0
    # bytes of the chip's own memory (TPU HBM, from the datasheet); 0: not known
    memory_bytes: int = 0
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
