"""Which device profile the roofline uses: a built-in one by key (the datasheets live with
their targets, ``compiler_bridge.targets``), this machine's calibrated one, or a JSON file.

``python -m compiler_bridge calibrate`` measures this machine and saves a profile as JSON
(``~/.cache/hlolens/device.json`` unless ``--out``), which :func:`profile_for_platform` then
prefers to the generic CPU profile for CPU dumps.
"""

from __future__ import annotations

import json
import os
import platform

from ..config import settings
from ..dumps import Dump, DumpModule, gpu_target_config, module_target
from ..targets import (BUILTIN, CPU, DEFAULT_CHIP, DeviceProfile, gpu_device_info, gpu_profile,
                       target_of_platform)


def device_profile(name: str) -> DeviceProfile:
    """A built-in profile by key ('cpu', 'h100', 'h200', 'a100', 'tpu_v4', 'tpu_v5e',
    'tpu_v5p', 'tpu_v6e'),
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
    target = target_of_platform(platform_prefix)
    if target.kind != "cpu" and target.chip:
        return BUILTIN[target.chip]
    return load_calibrated() or CPU


def profile_for_module(dump: Dump, module: DumpModule) -> DeviceProfile:
    """The profile of the device the module was compiled for, from the dump's files: a GPU
    from its ``gpu_target_config.pbtxt`` (what it lacks from its architecture's
    datasheet), a TPU from its generation's datasheet (``topology.textproto``), a CPU
    dump as :func:`profile_for_platform` ``cpu``."""
    target = module_target(dump, module)
    if target.kind == "cpu" or not target.kind:
        return profile_for_platform(target.platform or "cpu")
    datasheet = BUILTIN[target.chip or DEFAULT_CHIP[target.kind]]
    if target.kind == "gpu":
        text = gpu_target_config(dump, module)
        if text:
            try:
                return gpu_profile(gpu_device_info(text), datasheet)
            except ValueError:
                pass
    return datasheet


def host_name() -> str:
    return f"{platform.node() or 'host'} ({platform.machine()}, {os.cpu_count()} cores)"
