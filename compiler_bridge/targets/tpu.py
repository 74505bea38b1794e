"""XLA:TPU: the TPU chips' datasheets.

(File names and layouts of XLA:TPU's dumps arrive with the GPU/TPU issue: tiled layouts
``{1,0:T(8,128)(2,1)}``, memory spaces ``S(1)``, ``window_config`` in fusions' backend
configs.)
"""

from __future__ import annotations

from .device import DeviceProfile, T

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

