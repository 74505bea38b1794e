"""A dump module's memory files, read once per dump and module."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..dumps import (AFTER, BUFFER_ASSIGNMENT, BUFFER_ASSIGNMENT_VALUES, LIVE_RANGE,
                     MEMORY_USAGE_REPORT, Dump, DumpModule, module_target)
from ..hlo import HLO_PROTO_BINARY, HloModule, HloParseError
from ..targets import BUILTIN
from .analysis import MemoryTotals, ModuleMemory, build_memory
from .assignment_proto import assignment_text_from_proto, heap_ranges
from .buffer_assignment import parse_buffer_assignment
from .errors import MemoryFileError
from .live_range import LiveRange, parse_live_range
from .derive import derive_live_range, flatten_schedule
from .reports import UsageReport, ValuesFile, parse_usage_report, parse_values
from .xla_stats import memory_target

T = TypeVar("T")
FROM_PROTO = ("the buffer assignment is read from the after-optimizations HloProto (a dump "
              "of protos alone: XLA writes the live ranges as text only): no memory over "
              "the schedule")
FROM_PROTO_TRACES = ("the buffer assignment and the live ranges of the heap's values are read "
                     "from the after-optimizations HloProto (a dump of protos alone: its "
                     "heap-simulator traces, on the module's schedule)")

__all__ = ["memory_totals", "module_memory"]

NO_LIVE_RANGE = ("no live-range file for this module (XLA does not always write one; "
                 "JAX 0.4.30's never does): no memory over the schedule and no peak")
DERIVED = ("no live-range file for this module (XLA does not always write one; JAX "
           "0.4.30's never does): the live ranges are derived from the scheduled HLO and "
           "the values' positions and uses, as XLA's HloLiveRange computes them (equal to "
           "XLA's on every dump that has both)")


def _read(dump: Dump, path: str) -> str:
    try:
        return dump.read_text(path)
    except (OSError, KeyError) as e:
        raise MemoryFileError(f"cannot read the file: {e}", source=path) from None


def _shape_of(hlo: HloModule | None) -> Callable[[str, tuple[int, ...]], str]:
    """The shape text of an instruction's value at a tuple index, as the assignment's
    file writes it ('' when the HLO does not say)."""
    def shape_of(name: str, index: tuple[int, ...]) -> str:
        inst = hlo.find(name) if hlo is not None else None
        shape = inst.shape if inst is not None else None
        for i in index:
            if shape is None or i >= len(shape.tuple_shapes):
                return ""
            shape = shape.tuple_shapes[i]
        return str(shape) if shape is not None else ""
    return shape_of


def _assignment_text(dump: Dump, mod: DumpModule) -> tuple[str, str, bytes | None]:
    """The assignment's text, the file it comes from and, for a proto, the file's bytes:
    the buffer-assignment file, or (a dump of protos alone) the one the
    after-optimizations ``HloProto`` holds."""
    ba_file = mod.first(BUFFER_ASSIGNMENT)
    if ba_file is not None:
        return _read(dump, ba_file.path), ba_file.path, None
    after = mod.first(AFTER)
    if after is not None and after.source == HLO_PROTO_BINARY:
        try:
            data = dump.read_bytes(after.path)
            text = assignment_text_from_proto(data, _shape_of(dump.try_parse(after.path)))
        except (OSError, KeyError) as e:
            raise MemoryFileError(f"cannot read the file: {e}", source=after.path) from None
        except ValueError as e:
            raise MemoryFileError(f"the HloProto is cut short or not one ({e}): expected "
                                  "its buffer_assignment", source=after.path) from None
        if text is not None:
            return text, after.path, data
    raise MemoryFileError(
        f"module {mod.label} has no buffer-assignment file: XLA writes "
        "'*-buffer-assignment.txt' with --xla_dump_hlo_as_text after optimizations "
        "(or the assignment inside '*.after_optimizations.hlo.pb' with "
        "--xla_dump_hlo_as_proto)")


def _proto_live_range(dump: Dump, path: str, data: bytes,
                      missing: list[str]) -> LiveRange | None:
    """The live ranges of a proto's heap-simulator traces on the module's flattened
    schedule (the values the heap holds; XLA writes the live-range file as text only)."""
    hlo = dump.try_parse(path)
    if hlo is not None and hlo.is_scheduled:
        seq, _span, time = flatten_schedule(hlo)
        try:
            ranges = heap_ranges(data, time)
        except ValueError:
            ranges = {}
        if ranges:
            missing.append(FROM_PROTO_TRACES)
            return LiveRange(f"{path} (heap simulator traces)", len(seq), seq, ranges)
    missing.append(FROM_PROTO)
    return None


def _load(dump: Dump, mod: DumpModule) -> ModuleMemory:
    missing: list[str] = []
    try:
        ba_text, ba_path, proto = _assignment_text(dump, mod)
    except MemoryFileError as e:
        if e.source:        # a file that cannot be read, not a module without one
            dump.report(e.source, str(e))
        raise
    try:
        assignment = parse_buffer_assignment(ba_text, ba_path)
    except MemoryFileError as e:
        dump.report(ba_path, str(e))
        raise
    lr_file = mod.first(LIVE_RANGE)
    live_range = None
    if proto is not None:
        live_range = _proto_live_range(dump, ba_path, proto, missing)
    elif lr_file is None:
        # JAX 0.4.30's XLA appends HloLiveRange's text to the assignment's file
        live_range = _embedded(dump, ba_text, ba_path, "\nHloLiveRange (max ",
                               parse_live_range)
        if live_range is None:
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
    report: UsageReport | None = None
    values: ValuesFile | None = None
    # the two companions repeat what the assignment says: a broken one costs only itself
    for kind, parse, what in ((MEMORY_USAGE_REPORT, parse_usage_report, "memory-usage report"),
                              (BUFFER_ASSIGNMENT_VALUES, parse_values, "values file")):
        f = mod.first(kind)
        if f is None:
            continue
        try:
            got = parse(_read(dump, f.path), f.path)
        except MemoryFileError as e:
            dump.report(f.path, str(e))
            missing.append(f"the {what} cannot be read ({e.message}, line {e.line})")
            continue
        if isinstance(got, UsageReport):
            report = got
        elif isinstance(got, ValuesFile):
            values = got
    if values is None and assignment.total_bytes_used is not None:
        # older XLA writes the values after the allocations, in the assignment's file
        values = _embedded(dump, ba_text, ba_path, "\nTotal bytes used:", parse_values)
    if live_range is None and NO_LIVE_RANGE in missing and hlo is not None \
            and hlo.is_scheduled and values is not None:
        live_range = derive_live_range(hlo, assignment, values, f"derived ({ba_path})")
        missing[missing.index(NO_LIVE_RANGE)] = DERIVED
    mem = build_memory(mod.name, assignment, live_range, hlo, tuple(missing))
    mem.report, mem.values_file = report, values
    target = module_target(dump, mod)     # what the dump's files say (targets reads them)
    mem.target = memory_target(target.kind, {a.color for a in assignment.allocations},
                               tuple(s.name for s in report.spaces) if report else ())
    mem.device_kind = target.device_kind
    chip = BUILTIN.get(target.chip) if target.kind == "tpu" else None
    mem.chip_hbm = chip.memory_bytes if chip is not None and chip.memory_bytes else None
    return mem


def _embedded(dump: Dump, text: str, path: str, marker: str,
              parse: Callable[..., T]) -> T | None:
    """What ``parse`` reads from the part of the assignment's file that starts at
    ``marker`` (line numbers those of the file); None when there is none, or it cannot
    be read (then in the dump's errors)."""
    at = text.find(marker)
    if at < 0:
        return None
    try:
        return parse(text[at + 1:], path, first_line=text.count("\n", 0, at) + 2)
    except MemoryFileError as e:
        dump.report(path, str(e))
        return None


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
