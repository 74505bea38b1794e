"""``python -m compiler_bridge collectives DUMP [--json]``: every collective of each sharded
module with its groups, bytes and cause; ``python -m compiler_bridge shardings DUMP
[--json]``: each ENTRY parameter's and output's sharding, mesh axes and per-device shape."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from ..dumps import Dump, DumpModule, open_dump, require_modules
from .cause import by_source
from .report import module_collectives, module_shardings

__all__ = ["add_spmd_commands"]


def _reports(args: argparse.Namespace, build: Callable[[Dump, DumpModule], dict],
             shown: Callable[[dict], bool]) -> tuple[int | None, list[dict], int]:
    """(exit code, reports, modules failed) of ``build`` over the module ``--module``
    names, else over the modules ``shown`` keeps (all of them when it keeps none); the code
    is set when the command is done: an error printed, or ``--json`` printed. A module
    that cannot be read is an error naming it and its file; the others are still
    reported (exit 1)."""
    dump = open_dump(args.path)
    require_modules(dump, args.path)
    try:
        modules = [dump.pick(args.module)] if args.module else list(dump.modules)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2, [], 0
    reports, failed = [], 0
    for m in modules:
        try:
            reports.append(build(dump, m))
        except ValueError as e:     # a file that does not parse (HloParseError), a sharding
            print(f"error: {args.path}: module {m.label}: {e}", file=sys.stderr)
            failed += 1             # or group this reader cannot take
    if not args.module:
        reports = [r for r in reports if shown(r)] or reports
    if args.json:
        print(json.dumps({"modules": reports}, indent=2))
        return (1 if failed else 0), reports, failed
    return None, reports, failed


def cmd_collectives(args: argparse.Namespace) -> int:
    # the modules that communicate (the eager helpers do not)
    code, reports, failed = _reports(args, module_collectives,
                                     lambda r: bool(r["collectives"]))
    if code is not None:
        return code
    for r in reports:
        print(f"module {r['name']}: {len(r['collectives'])} collectives on {r['devices']} "
              f"devices" + (f"; causes from {r['partitioner_input']}"
                            if r.get("partitioner_input") else ""))
        for c in r["collectives"]:
            cause = c["cause"]
            why = (f"  <- {cause['instruction']}: {cause['producer_sharding']} vs "
                   f"{cause['consumer_sharding']}") if cause else ""
            print(f"  {c['name']:<28} {c['opcode']:<22} {'async' if c['async'] else 'sync ':5} "
                  f"n={c['group_size']:<3} {c['result_bytes']:>12,} B  sent "
                  f"{c['sent_bytes']:>12,} B  {c['source']}{why}")
        groups = by_source(r["collectives"])
        if groups:
            print("  by source line:")
            for g in groups:
                kinds = ", ".join(f"{n} {k}" for k, n in sorted(g["kinds"].items()))
                print(f"    {g['source']:<50} {kinds:<40} sent {g['sent_bytes']:>12,} B")
    return 1 if failed else 0


def cmd_shardings(args: argparse.Namespace) -> int:
    code, reports, failed = _reports(args, module_shardings, lambda r: r["devices"] > 1)
    if code is not None:
        return code
    for r in reports:
        meshes = ", ".join(f"@{k} {v}" for k, v in r.get("meshes", {}).items())
        print(f"module {r['name']}: {r['devices']} devices {meshes}")
        for title, rows in (("parameters", r["parameters"]), ("outputs", r["outputs"])):
            print(f"  {title}:")
            for p in rows:
                per = "x".join(str(d) for d in p.get("per_device_shape", [])) or "-"
                print(f"    {p['name']:<24} {p['shape']:<18} {p.get('label', '-'):<28} "
                      f"per device [{per}] {p.get('per_device_bytes', '-')} B")
    return 1 if failed else 0


def add_spmd_commands(sub: argparse._SubParsersAction) -> None:
    for name, func, help_text in (
            ("collectives", cmd_collectives,
             "every collective: groups, bytes, sync/async, source line and why it is there"),
            ("shardings", cmd_shardings,
             "ENTRY parameters' and outputs' shardings, mesh axes, per-device shapes")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("path", help="a dump folder, archive or one HLO file")
        p.add_argument("--module", help="module id or name (default: every sharded module)")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)
