"""``python -m compiler_bridge memory PATH [--module M] [--json] [--error TEXT]``: a
module's totals and peak as ``memory_analysis()`` reports them, per memory space and per
device, the live-bytes peak and the values live there, and for a compile that ran out of
memory (``--error``: the error text JAX raised; the dump folder does not hold it) what
needed the bytes."""

from __future__ import annotations

import argparse
import json
import sys

from ..dumps import open_dump, require_modules
from .errors import MemoryFileError
from .analysis import ModuleMemory
from .loader import module_memory

__all__ = ["add_memory_command"]


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n:,} B ({n / size:.1f} {unit})"
    return f"{n:,} B"


def _text(mem: ModuleMemory, label: str, error: str, top: int) -> None:
    t = mem.totals()
    print(f"module {label}: {len(mem.allocations)} allocations, {len(mem.lives)} values"
          + (f", {t.xla.target.upper()}" if t.xla is not None and t.xla.target else ""))
    if t.devices > 1:
        print(f"per device: the module runs on {t.devices} devices (replica_count x "
              "num_partitions); every figure below is one device's")
    for name, value in (("arguments", t.argument_bytes), ("output", t.output_bytes),
                        ("temp", t.temp_bytes), ("alias", t.alias_bytes),
                        ("constants", t.constant_bytes),
                        ("thread-local", t.thread_local_bytes),
                        ("all allocations", t.total_bytes), ("peak (XLA)", t.peak_bytes),
                        ("live-bytes peak", t.live_peak_bytes)):
        print(f"  {name:<16} {_bytes(value)}")
    if t.devices > 1 and t.peak_bytes is not None:
        print(f"  {'peak x devices':<16} {_bytes(t.peak_bytes * t.devices)}")
    x = t.xla
    for name, value in ((("host arguments", x.host_argument_bytes),
                         ("host output", x.host_output_bytes),
                         ("host temp", x.host_temp_bytes)) if x is not None else ()):
        if value:       # memory_analysis()'s host_*: jax's pinned_host buffers
            print(f"  {name:<16} {_bytes(value)}")
    for space, size in t.spaces.items():
        print(f"  space {space:<10} {_bytes(size)}")
    if t.xla is not None:
        print(f"peak: {t.xla.rule}")
        for figure, d in t.xla.known_differences.items():
            print(f"note: {figure} may be {d['direction']} XLA's memory_analysis() by up to "
                  f"{d['up_to']:.1%}: {d['why']}")
    if t.live_peak_index is not None:
        print(f"live-bytes peak at {t.live_peak_index} ({t.live_peak_instruction}); "
              "live there:")
        for v in mem.live_at(t.live_peak_index)[:top]:
            print(f"  {v.value.size:>12,} B  {v.value.name:<40} {v.value.shape}")
    oom = mem.oom(error)
    if oom is not None:
        print(f"out of memory: needs {_bytes(oom.required_bytes)} of {oom.space}, "
              f"{_bytes(oom.available_bytes)} available ({oom.available_from}); the "
              "largest buffers:")
        for b in oom.largest:
            pad = f", {_bytes(b.padding_bytes)} tile padding" if b.padding_bytes else ""
            print(f"  {b.bytes:>16,} B  {b.buffer:<36} {b.kind:<9} {b.source or '-'}{pad}")
    for line in t.missing:
        print(f"note: {line}")


def cmd_memory(args: argparse.Namespace) -> int:
    dump = open_dump(args.path)
    require_modules(dump, args.path)
    try:
        module = dump.pick(args.module)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    try:
        mem = module_memory(dump, module)
    except MemoryFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    error = args.error or ""
    if args.error_file:
        try:
            with open(args.error_file, encoding="utf-8", errors="replace") as f:
                error = f.read(1 << 20)      # an error message, not a log to scan
        except OSError as e:
            print(f"error: cannot read the error file {args.error_file}: {e.strerror}",
                  file=sys.stderr)
            return 2
    if args.json:
        # the id as stats, kernels, runtimes give it: names repeat (a program compiled twice)
        print(json.dumps({"id": module.id, **mem.to_json(error)}, indent=2))
    else:
        _text(mem, module.label, error, args.top)
    for problem in dump.errors:     # the report stands; the input has a problem: exit 1
        print(f"error: {problem.text}", file=sys.stderr)
    return 1 if dump.errors else 0


def add_memory_command(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("memory", help="a module's memory: totals, peak, allocations")
    m.add_argument("path", help="a dump folder, .zip or .tar.gz")
    m.add_argument("--module", help="module id or name (default: the main program)")
    m.add_argument("--json", action="store_true")
    m.add_argument("--top", type=int, default=20, help="values listed at the peak")
    m.add_argument("--error", help="the compile's error text (RESOURCE_EXHAUSTED: ...), "
                   "for the out-of-memory explanation")
    m.add_argument("--error-file", help="a file holding the compile's error text")
    m.set_defaults(func=cmd_memory)
