"""A dump module's memory files, read once per dump and module."""

from __future__ import annotations

from ..dumps import (AFTER, BUFFER_ASSIGNMENT, LIVE_RANGE, Dump,
                     DumpModule)
from ..hlo import HloModule, HloParseError
from .analysis import MemoryTotals, ModuleMemory, build_memory
from .buffer_assignment import parse_buffer_assignment
from .errors import MemoryFileError
from .live_range import parse_live_range

__all__ = ["memory_totals", "module_memory"]

NO_LIVE_RANGE = ("no live-range file (older XLA, e.g. JAX 0.4.30, writes the buffer "
                 "assignment only): no memory over the schedule and no peak")


def _read(dump: Dump, path: str) -> str:
    try:
        return dump.read_text(path)
    except (OSError, KeyError) as e:
        raise MemoryFileError(f"cannot read the file: {e}", source=path) from None


def _load(dump: Dump, mod: DumpModule) -> ModuleMemory:
    ba_file = mod.first(BUFFER_ASSIGNMENT)
    if ba_file is None:
        raise MemoryFileError(
            f"module {mod.label} has no buffer-assignment file: XLA writes "
            "'*-buffer-assignment.txt' with --xla_dump_hlo_as_text after optimizations")
    missing: list[str] = []
    try:
        assignment = parse_buffer_assignment(_read(dump, ba_file.path), ba_file.path)
    except MemoryFileError as e:
        dump.report(ba_file.path, str(e))
        raise
    lr_file = mod.first(LIVE_RANGE)
    live_range = None
    if lr_file is None:
        missing.append(NO_LIVE_RANGE)
    else:
        try:
            live_range = parse_live_range(_read(dump, lr_file.path), lr_file.path)
        except MemoryFileError as e:   # the allocations still stand without it
            dump.report(lr_file.path, str(e))
            missing.append(f"the live-range file cannot be read ({e.message}, line "
                           f"{e.line}): no memory over the schedule")
    hlo: HloModule | None = None
    after = mod.first(AFTER)
    if after is None:
        missing.append("no after-optimizations HLO: values are not linked to instructions")
    else:
        try:
            hlo = dump.parse(after.path)
        except HloParseError as e:
            missing.append(f"the after-optimizations HLO cannot be parsed ({e.message}): "
                           "values are not linked to instructions")
    return build_memory(mod.name, assignment, live_range, hlo, tuple(missing))


def module_memory(dump: Dump, module: DumpModule | str) -> ModuleMemory:
    """The memory of one module of a dump (its buffer assignment, live ranges and HLO),
    computed once per dump. Raises MemoryFileError when the module has no buffer
    assignment or it cannot be read (the broken file is also in ``dump.errors``)."""
    mod = dump.module(module) if isinstance(module, str) else module
    return dump.derived(f"memory/{mod.id}", lambda d: _load(d, mod))


def memory_totals(dump: Dump, module: DumpModule | str) -> MemoryTotals:
    """Argument, output, temp, alias, constant, thread-local and peak bytes of one module,
    as ``compiled.memory_analysis()`` counts them. Raises MemoryFileError (its message
    says why) when the module has no readable buffer assignment."""
    return module_memory(dump, module).totals()
