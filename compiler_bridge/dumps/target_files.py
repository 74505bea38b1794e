"""Which target a dump's module was compiled for, from the dump's files: the
after-optimizations prefix, ``gpu_target_config.pbtxt``, the module folder's
``topology.textproto`` and XLA:TPU's own file names (what each means is
``compiler_bridge.targets``' knowledge; this module only finds the files).

XLA writes the target config and the topology once per module; a dump pruned to one copy
(the committed samples) still tells every module, as every module of a dump is compiled
by one process for one target: a module without its own file takes the dump's first.
"""

from __future__ import annotations

from .dump import AFTER, GPU_TARGET_CONFIG, TOPOLOGY, Dump, DumpFile, DumpModule
from ..targets import Target, gpu_device_info, target_of_files


def _text(dump: Dump, f: DumpFile | None) -> str:
    if f is None:
        return ""
    try:
        return dump.read_text(f.path)
    except (OSError, KeyError, UnicodeDecodeError):
        return ""


def _first(dump: Dump, module: DumpModule, kind: str) -> DumpFile | None:
    own = module.first(kind)
    if own is not None:
        return own
    return next((f for f in dump.files if f.kind == kind), None)


def module_target(dump: Dump, module: DumpModule | str | None = None) -> Target:
    """The target ``module`` (default: the dump's main module) was compiled for;
    ``Target('')`` when nothing in the dump says. Cached per dump and module."""
    mod = dump.pick(module) if not isinstance(module, DumpModule) else module
    return dump.derived(f"target:{mod.id}", lambda d: _target(d, mod))


def _target(dump: Dump, mod: DumpModule) -> Target:
    after = mod.first(AFTER)
    platform = after.platform if after is not None else ""
    if not platform:    # a module that was not compiled: its siblings say
        platform = next((f.platform for f in dump.files if f.kind == AFTER and f.platform), "")
    return target_of_files(platform, gpu_target_config(dump, mod),
                           _text(dump, _first(dump, mod, TOPOLOGY)),
                           tuple(f.name for f in mod.files), mod.compile_id)


def gpu_target_config(dump: Dump, module: DumpModule) -> str:
    """The text of the ``gpu_target_config.pbtxt`` the module was compiled for ('' if none)."""
    return _text(dump, _first(dump, module, GPU_TARGET_CONFIG))


def dump_target(dump: Dump) -> Target:
    """The target of the dump's main module (``Target('')`` for a dump without modules)."""
    if not dump.modules:
        return Target("")
    return module_target(dump)


def target_note(dump: Dump, module: DumpModule) -> str:
    """Why the device a module was compiled for is unknown although a file of the dump
    should say it: that file, and what it was expected to hold ('' when the target is
    known, or when no such file is there)."""
    target = module_target(dump, module)
    if target.kind == "tpu" and not target.chip:
        f = _first(dump, module, TOPOLOGY)
        if f is not None:
            return (f"{f.path}: expected a TPU topology naming a known chip "
                    "(platform_name: \"tpu\", platform_version: \"TFRT TPU v5 lite ...\"); "
                    "it names none")
    if target.kind == "gpu":
        f = _first(dump, module, GPU_TARGET_CONFIG)
        text = _text(dump, f)
        if f is not None:
            try:
                gpu_device_info(text)
            except ValueError as e:
                return (f"{f.path}: expected a GpuTargetConfigProto text "
                        f"(gpu_device_info {{...}}): {str(e).splitlines()[0]}")
    return ""
