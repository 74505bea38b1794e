"""Which machine a module was compiled for, from what XLA wrote: a :class:`Target`.

XLA names the platform in the after-optimizations file's prefix (``cpu_``, ``sm_9.0a_gpu_``,
``gfx942_gpu_``; no prefix from XLA:TPU, and none in older XLA). The device itself is in
other files: XLA:GPU's ``gpu_target_config.pbtxt`` (the device description it compiled
for), the ``topology.textproto`` jax writes in a module's folder (TPU: the chip and the
slice's shape), XLA:TPU's own files (``after_codegen.txt``, ``tpu_comp_env.txt``). Each
target's own knowledge lives in its module (``cpu``, ``gpu``, ``tpu``); this one only
dispatches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .gpu import H100_SPEC, gpu_arch, gpu_chip, gpu_device_info
from .textproto import first, parse_text
from .tpu import GENERATIONS, TPU_FILE_SUFFIXES, tpu_topology


@dataclass(frozen=True, slots=True)
class Target:
    """``kind``: 'cpu', 'gpu', 'tpu' or '' (the dump does not say); ``platform``: the file-name
    prefix as XLA wrote it; ``arch``: the GPU architecture ('sm_9.0a', 'gfx942') or '';
    ``chip``: the key of the built-in device profile that stands for it ('h100', 'a100',
    'tpu_v5e'; '' for a CPU, whose profile is this machine's); ``device_kind``: the device
    in XLA's and jax's words ('NVIDIA H100 80GB HBM3', 'TPU v5 lite', 'cpu'; '' when no
    file names it); ``topology``: a TPU slice as jax names it ('v5e:2x2'; '' otherwise)."""

    kind: str
    platform: str = ""
    arch: str = ""
    chip: str = ""
    device_kind: str = ""
    topology: str = ""

    @property
    def label(self) -> str:
        """'XLA:GPU sm_9.0a', 'XLA:TPU TPU v5 lite (v5e:2x2)', 'XLA:CPU', ... for a page or
        a JSON field."""
        if not self.kind:
            return "unknown target"
        label = f"XLA:{self.kind.upper()}" + (f" {self.arch}" if self.arch else "")
        if self.device_kind and self.kind != "cpu":
            label += f" {self.device_kind}"
        return label + (f" ({self.topology})" if self.topology else "")

    def to_json(self) -> dict:
        return {"kind": self.kind or None, "platform": self.platform or None,
                "arch": self.arch or None, "device_kind": self.device_kind or None,
                "topology": self.topology or None, "profile": self.chip or None,
                "label": self.label}


def target_of_platform(platform: str) -> Target:
    """The target an after-optimizations file's prefix names (``sm_9.0a_gpu`` -> GPU)."""
    p = platform.lower()
    arch = gpu_arch(p)
    if arch is not None or "gpu" in p:
        return Target("gpu", platform, arch.name if arch else "", gpu_chip(arch))
    if "tpu" in p:
        return Target("tpu", platform, chip="tpu_v4")
    if p == "cpu":
        return Target("cpu", platform)
    return Target("", platform)


def target_of_files(platform: str, gpu_config: str = "", topology: str = "",
                    file_names: tuple[str, ...] = (), compile_id: str = "") -> Target:
    """The target of a module from what its dump holds: the after-optimizations prefix,
    the text of a ``gpu_target_config.pbtxt`` and of a ``topology.textproto`` ('' when the
    dump has none), its files' names and the compile id its name carried (XLA:TPU's
    ``cl_<N>``, :func:`split_compile_id`). A file that cannot be read says nothing: the
    target falls back to what the others say. ``ValueError`` never escapes."""
    target = target_of_platform(platform)
    if gpu_config and target.kind in ("gpu", ""):
        try:
            info = gpu_device_info(gpu_config)
        except ValueError:
            info = None
        if info is not None:
            arch = gpu_arch(platform)
            target = replace(target, kind="gpu", device_kind=info.name,
                             chip=gpu_chip(arch, info.name))
    if topology and target.kind in ("tpu", "cpu", ""):
        try:
            tpu = tpu_topology(topology)
            cpu_kind = str(first(parse_text(topology), "platform_version", default=""))
        except ValueError:
            tpu, cpu_kind = None, ""
        if tpu is not None:
            return replace(target, kind="tpu", device_kind=tpu.device_kind,
                           topology=tpu.name,
                           chip=tpu.generation.chip if tpu.generation else "")
        if target.kind == "cpu" and cpu_kind:
            target = replace(target, device_kind=cpu_kind)   # jax's word: 'cpu'
    if not target.kind and (compile_id
                            or any(n.endswith(TPU_FILE_SUFFIXES) for n in file_names)):
        target = Target("tpu", platform)
    return target


@dataclass(frozen=True)
class CompileTarget:
    """A target to compile for, as ``compile --target`` names it: ``platform`` as jax
    names it ('tpu', 'cuda', 'cpu'), ``topology`` (a TPU's, jax's name: 'v5e:2x2'),
    ``config`` (a GPU's ``GpuTargetConfigProto`` file)."""

    name: str
    platform: str
    topology: str = ""
    config: str = ""

    @property
    def kind(self) -> str:
        return {"cuda": "gpu"}.get(self.platform, self.platform)


# the GPUs `compile --target` knows, by name: the device spec XLA publishes for each
GPU_SPECS = {"h100": H100_SPEC}
_TOPOLOGY = re.compile(r"(v\w+):(\d+(?:x\d+){1,2})")


def compile_target(name: str) -> CompileTarget:
    """The target ``name`` means: 'cpu', a GPU ('h100') or a TPU topology as jax names it
    ('v5e:2x2', 'v6e:2x2', 'v5p:2x2x1', 'v4:2x2x1'); ``ValueError`` naming the known ones."""
    key = name.strip().lower()
    if key == "cpu":
        return CompileTarget(key, "cpu")
    if key in GPU_SPECS:
        return CompileTarget(key, "cuda", config=GPU_SPECS[key])
    m = _TOPOLOGY.fullmatch(key)
    if m and any(g.short == m.group(1) for g in GENERATIONS):
        return CompileTarget(key, "tpu", topology=key)
    tpus = ", ".join(f"{g.short}:{'2x2' if g.torus_dims == 2 else '2x2x1'}"
                     for g in GENERATIONS)
    raise ValueError(f"unknown target {name!r}: cpu, {', '.join(GPU_SPECS)}, or a TPU "
                     f"topology as jax names it ({tpus}, ...)")
