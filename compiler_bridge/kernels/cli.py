"""``python -m compiler_bridge kernels PATH [--module M] [--json]``: each module's kernels
and what its backend decided for them.

``--json`` prints ``{"modules": [{"name", "target", "kernels": [{"name", "kind", "emitter",
"tile", "memory_space", "xla_estimate_us", "ptx", ...}]}]}``, null where a field does not
apply to the target; a TPU module also names the clock its µs use (``clock_hz``,
``clock_source``).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..dumps import open_dump, require_modules
from ..hlo import HloParseError
from ..targets import memory_space_name
from .reader import Kernel, ModuleKernels, module_kernels

__all__ = ["add_kernels_command"]


def _decided(k: Kernel) -> str:
    """One line of what the backend decided for a kernel."""
    parts = []
    if k.emitter:
        parts.append(k.emitter)
    if k.tile is not None:
        parts.append(k.tile.label)
    if k.thunk is not None:
        parts.append(f"thunk {k.thunk.number:03d} ({k.thunk.kind}) on {k.thunk.stream}")
    if k.ptx_file:
        parts.append("PTX")
    if k.tiling is not None:
        t = k.tiling
        parts.append(f"T{'x'.join(map(str, t.tile))} padded {t.padded_bytes:,} B "
                     f"({t.wasted_bytes:,} B wasted)")
    if k.memory_space:
        parts.append(memory_space_name(k.memory_space))
    if k.window is not None and k.window.estimated_cycles is not None:
        us = f" = {k.estimate_us:.2f} µs" if k.estimate_us is not None else ""
        parts.append(f"{k.window.estimated_cycles:,} cycles{us}")
    return ", ".join(parts) or "-"


def _print(mk: ModuleKernels) -> None:
    print(f"module {mk.id} {mk.name}: {mk.target}, {len(mk.kernels)} kernels ({mk.stage})")
    if mk.clock_hz:
        print(f"  µs at {mk.clock_hz / 1e9:g} GHz ({mk.clock_source})")
    for note in mk.notes:
        print(f"  note: {note}")
    for k in mk.kernels:
        print(f"  {k.name:<40} {k.kind:<14} {_decided(k)}")


def cmd_kernels(args: argparse.Namespace) -> int:
    dump = open_dump(args.path)        # DumpError: exit 1, as every command (cli.main)
    require_modules(dump, args.path)
    try:
        modules = [dump.pick(args.module)] if args.module else list(dump.modules)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    out: list[ModuleKernels] = []
    failed = 0
    for m in modules:
        try:
            out.append(module_kernels(dump, m))
        except KeyError as e:
            if args.module:
                print(f"error: {e.args[0]}", file=sys.stderr)
                failed += 1
        except HloParseError as e:
            print(f"error: module {m.label}: {e}", file=sys.stderr)
            failed += 1
    if args.json:
        print(json.dumps({"modules": [mk.to_json() for mk in out]}, indent=2,
                         ensure_ascii=False))
    else:
        for mk in out:
            _print(mk)
    return 1 if failed else 0


def add_kernels_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("kernels", help="each module's kernels and what the backend decided: "
                       "GPU emitter, Triton tiles, thunk, PTX; TPU tiling, memory space, "
                       "window config, estimated cycles")
    p.add_argument("path", help="a dump folder or archive")
    p.add_argument("--module", help="one module (id or name); default: every module")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_kernels)
