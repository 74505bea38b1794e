"""``python -m compiler_bridge memory PATH [--module M] [--json]``: a module's totals,
its peak and the values live there."""

from __future__ import annotations

import argparse
import json
import sys

from ..dumps import open_dump
from .errors import MemoryFileError
from .loader import module_memory

__all__ = ["add_memory_command"]


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n:,} ({n / size:.1f} {unit})"
    return f"{n:,}"


def cmd_memory(args: argparse.Namespace) -> int:
    dump = open_dump(args.path)
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
    if args.json:
        print(json.dumps(mem.to_json(), indent=2))
    else:
        t = mem.totals()
        print(f"module {module.label}: {len(mem.allocations)} allocations, "
              f"{len(mem.lives)} values")
        for label, value in (("arguments", t.argument_bytes), ("output", t.output_bytes),
                             ("temp", t.temp_bytes), ("alias", t.alias_bytes),
                             ("constants", t.constant_bytes),
                             ("thread-local", t.thread_local_bytes),
                             ("all allocations", t.total_bytes), ("peak live", t.peak_bytes)):
            print(f"  {label:<16} {_bytes(value)}")
        if t.peak_index is not None:
            print(f"peak at {t.peak_index} ({t.peak_instruction}); live there:")
            for v in mem.live_at(t.peak_index)[:args.top]:
                print(f"  {v.value.size:>12,}  {v.value.name:<40} {v.value.shape}")
        for line in t.missing:
            print(f"note: {line}")
    for problem in dump.errors:
        print(f"error: {problem.error}", file=sys.stderr)
    return 0


def add_memory_command(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("memory", help="a module's memory: totals, peak, allocations")
    m.add_argument("path", help="a dump folder, .zip or .tar.gz")
    m.add_argument("--module", help="module id or name (default: the main program)")
    m.add_argument("--json", action="store_true")
    m.add_argument("--top", type=int, default=20, help="values listed at the peak")
    m.set_defaults(func=cmd_memory)
