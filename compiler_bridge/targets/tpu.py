"""XLA:TPU: which TPU a dump was compiled for, and the TPU chips' datasheets.

XLA:TPU's file names carry no platform prefix (``module_0000.jit_f.cl_933746096.
after_optimizations.txt``); the module's ``module_NNNN.<name>/topology.textproto`` names the
chip (``platform_version: "TFRT TPU v5 lite ..."``, the device kind jax reports without
"TFRT ") and, in libtpu's topology message, the slice's shape: chips per host and hosts per
dimension (fields 5 and 6, each ``{1: x, 2: y, 3: z}``; measured on v4, v5e, v5p and v6e
topologies of libtpu 0.0.42.1, e.g. v5e:4x4 = 2x2x1 chips per host times 2x2x1 hosts).
A dump without it still shows it is XLA:TPU's by its ``after_codegen.txt`` and
``tpu_comp_env.txt`` files.

(Tiled layouts ``{1,0:T(8,128)(2,1)}``, memory spaces ``S(1)`` and ``window_config`` in
fusions' backend configs are read by the TPU kernel readers.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..hlo import wire_fields
from .device import DeviceProfile, G, T
from .textproto import first, parse_text

# file names only XLA:TPU writes beside a module (the rest of the name after the module's)
TPU_FILE_SUFFIXES = ("after_codegen.txt", "tpu_comp_env.txt")
# XLA:TPU's file names end the program's name with the compile's id (``jit_f.cl_933746096``)
_COMPILE_ID = re.compile(r"(.+)\.(cl_\d+)")


def split_compile_id(name: str) -> tuple[str, str]:
    """(the program's name, the compile's id) of a module's name in file names:
    ``jit_f.cl_933746096`` -> ('jit_f', 'cl_933746096'); (name, '') when it has none."""
    m = _COMPILE_ID.fullmatch(name)
    return (m.group(1), m.group(2)) if m else (name, "")


@dataclass(frozen=True)
class TpuGeneration:
    """One TPU generation: ``device_kind`` as jax reports it, ``short`` as topology names
    spell it (``v5e:2x2``), ``torus_dims`` (2: a 2D torus, named AxB), the built-in profile."""

    device_kind: str
    short: str
    torus_dims: int
    chip: str


GENERATIONS = (
    TpuGeneration("TPU v4", "v4", 3, "tpu_v4"),
    TpuGeneration("TPU v5 lite", "v5e", 2, "tpu_v5e"),
    TpuGeneration("TPU v5", "v5p", 3, "tpu_v5p"),
    TpuGeneration("TPU v6 lite", "v6e", 2, "tpu_v6e"),
)


@dataclass(frozen=True)
class TpuTopology:
    """What a TPU ``topology.textproto`` says: the device kind ('TPU v5 lite'), the slice's
    chips per dimension (x, y, z), and the generation when it is one this module knows."""

    device_kind: str
    bounds: tuple[int, int, int] | None
    generation: TpuGeneration | None

    @property
    def chips(self) -> int:
        return self.bounds[0] * self.bounds[1] * self.bounds[2] if self.bounds else 0

    @property
    def name(self) -> str:
        """The topology as jax names it (``v5e:2x2``, ``v5p:2x2x1``); '' when unknown."""
        if self.generation is None or self.bounds is None:
            return ""
        dims = self.bounds[:self.generation.torus_dims] if self.bounds[2] == 1 \
            else self.bounds
        return f"{self.generation.short}:" + "x".join(str(d) for d in dims)


def _bounds(msg: bytes) -> tuple[int, int, int]:
    fields = dict(wire_fields(msg))
    x, y, z = (fields.get(n, 1) for n in (1, 2, 3))
    return int(x), int(y), int(z)     # (varints; an absent dimension is 1)


def chip_generation(chip: str) -> TpuGeneration | None:
    """The generation whose built-in profile is ``chip`` ('tpu_v5e'); None for another."""
    return next((g for g in GENERATIONS if g.chip == chip), None)


def tpu_topology(text: str) -> TpuTopology | None:
    """The TPU a ``topology.textproto`` describes; None when it describes no TPU (a CPU
    dump writes one too). A topology message that cannot be read leaves the bounds None."""
    msg = parse_text(text)
    if str(first(msg, "platform_name", default="")).lower() != "tpu":
        return None
    version = str(first(msg, "platform_version", default="")).split("\n")[0]
    kind = version.removeprefix("TFRT ").strip()
    generation = next((g for g in GENERATIONS if g.device_kind == kind), None)
    bounds = None
    value = first(msg, "platform_specific_topology", "value")
    try:
        outer = dict(wire_fields(value.encode("latin-1"))) if isinstance(value, str) else {}
        inner = outer.get(1)
        if isinstance(inner, bytes):
            fields = dict(wire_fields(inner))
            per_host, hosts = fields.get(5), fields.get(6)
            if isinstance(per_host, bytes) and isinstance(hosts, bytes):
                a, b = _bounds(per_host), _bounds(hosts)
                bounds = (a[0] * b[0], a[1] * b[1], a[2] * b[2])
    except ValueError:
        bounds = None
    return TpuTopology(kind, bounds, generation)


GiB = 1 << 30

# The MXU clock a chip's estimated cycles (XLA:TPU's ``estimated_cycles``) are counted in
# is not on Google's pages; it is derived here from what is: peak bf16 FLOP/s = MXUs x
# 128 x 128 (v6e: 256 x 256) multiply-adds x 2 flops x clock (cloud.google.com/tpu/docs/
# system-architecture-tpu-vm: 128x128 MXUs, 4 per TensorCore; v4 and v5p: 2 TensorCores per
# chip; v6e: 256x256 MXUs). v4: 275 T / (8 x 16,384 x 2) = 1.05 GHz, the clock the TPU v4
# paper (Jouppi et al., ISCA 2023) gives, which checks the method. The dumps agree: a
# fixed-cost kernel takes 1,825 cycles on v5e and 2,121 on v6e (1.16x, the ratio of 1.75 GHz
# to 1.5 GHz, the same 1.2 µs on both).
CLOCK_SOURCE = ("TPU clock: the datasheet's peak bf16 FLOP/s over the MXUs' FLOPs per cycle "
                "(cloud.google.com/tpu/docs/<generation>; v4: 1,050 MHz, ISCA 2023 paper)")
# ``memory_bytes``: the chip's HBM as Google's pages give it (binary units, as the
# out-of-memory error's 15.75G of a v5e's 16G); XLA keeps part of it for itself, so the
# usable figure is the one an out-of-memory error names.

def _chip(name: str, *, bf16: float, s8: float, bandwidth: float, clock_hz: float,
          memory_bytes: int, source: str) -> DeviceProfile:
    """A TPU chip's profile from its datasheet: f32 dots run as bf16 passes under JAX's
    default precision; the vector units about 1/16 of the MXU rate (an estimate, in no
    datasheet); the same launch overhead and transcendental cost on every generation."""
    return DeviceProfile(name, "tpu", {"bf16": bf16, "f32": bf16, "s8": s8},
                         vector_flops=bf16 / 16, bandwidth=bandwidth, launch_overhead_us=1.0,
                         transcendental_flops=4.0, clock_hz=clock_hz,
                         memory_bytes=memory_bytes, source=source)


# Google Cloud TPU v4: cloud.google.com/tpu/docs/v4 ("System architecture"): peak 275 TFLOPS
# (bf16) per chip, 32 GiB HBM2 at 1,200 GB/s. f32 dots run as bf16 passes under JAX's default
# precision. Vector units: about 1/16 of the MXU rate (estimate; not in the datasheet).
TPU_V4 = _chip("TPU v4", bf16=275 * T, s8=275 * T, bandwidth=1.2 * T,
               clock_hz=1.05 * G, memory_bytes=32 * GiB,
               source="cloud.google.com/tpu/docs/v4 (275 TFLOPS bf16, 1200 GB/s HBM)")

# Google Cloud TPU v5e: cloud.google.com/tpu/docs/v5e ("System architecture"): 197 TFLOPS bf16,
# 394 TOPS int8 per chip, 16 GB HBM2 at 819 GB/s; one TensorCore of 4 MXUs: clock 197 T /
# (4 x 16,384 x 2) = 1.50 GHz. Vector-unit rate: estimate as for v4.
TPU_V5E = _chip("TPU v5e", bf16=197 * T, s8=394 * T, bandwidth=0.819 * T,
               clock_hz=1.5 * G, memory_bytes=16 * GiB,
               source="cloud.google.com/tpu/docs/v5e (197 TFLOPS bf16, 394 TOPS int8, 819 GB/s HBM)")

# Google Cloud TPU v5p: cloud.google.com/tpu/docs/v5p ("System architecture"): 459 TFLOPS bf16,
# 918 TOPS int8 per chip, 95 GB HBM2e at 2,765 GB/s; 2 TensorCores of 4 MXUs: clock 459 T /
# (8 x 16,384 x 2) = 1.75 GHz.
TPU_V5P = _chip("TPU v5p", bf16=459 * T, s8=918 * T, bandwidth=2.765 * T,
               clock_hz=1.75 * G, memory_bytes=95 * GiB,
               source="cloud.google.com/tpu/docs/v5p (459 TFLOPS bf16, 918 TOPS int8, 2765 GB/s HBM)")

# Google Cloud TPU v6e (Trillium): cloud.google.com/tpu/docs/v6e ("System architecture"):
# 918 TFLOPS bf16, 1,836 TOPS int8 per chip, 32 GB HBM at 1,640 GB/s (the page's table; an
# older version said 1,600); one TensorCore of 256x256 MXUs, 4 of them (versions of the page
# say 2 or 4; 4 gives a clock like v5p's): 918 T / (4 x 65,536 x 2) = 1.75 GHz.
TPU_V6E = _chip("TPU v6e", bf16=918 * T, s8=1836 * T, bandwidth=1.64 * T,
               clock_hz=1.75 * G, memory_bytes=32 * GiB,
               source="cloud.google.com/tpu/docs/v6e (918 TFLOPS bf16, 1836 TOPS int8, 1640 GB/s HBM)")
