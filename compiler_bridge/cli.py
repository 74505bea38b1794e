"""``python -m compiler_bridge``: the bridge's commands for scripts, CI and bug reports."""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile

from .dump import DumpError, open_dump
from .errors import HloParseError
from .parser import parse_hlo_bytes
from .printer import extract_text


def _is_single_file(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    lower = path.lower()
    return not (zipfile.is_zipfile(path) or lower.endswith((".tar.gz", ".tgz", ".tar")))


def _read_module(path: str):
    with open(path, "rb") as f:
        return parse_hlo_bytes(f.read(), path)


def cmd_stats(args: argparse.Namespace) -> int:
    if _is_single_file(args.path):
        stats = _read_module(args.path).stats()
        if args.json:
            print(json.dumps(stats, indent=2))
        else:
            print(f"module {stats['module']}: {stats['computations']} computations, "
                  f"{stats['instructions']} instructions ({stats['entry_instructions']} in "
                  f"ENTRY), {stats['fusions']} fusions")
            for op, n in stats["opcodes"].items():
                print(f"  {n:7d}  {op}")
        return 0
    dump = open_dump(args.path)
    stats = dump.stats()
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    print(f"dump {dump.name}: {len(dump.modules)} modules, {len(dump.files)} files, "
          f"{len(dump.traces)} trace files; main program: {stats['main']}")
    for m in stats["modules"]:
        after = m["stages"].get("after_optimizations") or m["stages"].get("before_optimizations")
        size = f"{after['instructions']} instructions, {after['fusions']} fusions" if after else "-"
        print(f"  {m['id']}  {m['name']:<40} {size:<40} {m['passes']} pass files")
    for e in stats["errors"]:
        print(f"error: {e['error']}", file=sys.stderr)
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    module = _read_module(args.file)
    try:
        text = extract_text(module, args.computation)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compiler_bridge",
                                description="Read XLA dump folders and HLO text.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("stats", help="counts for an HLO file or a whole dump")
    s.add_argument("path", help="a dump folder, .zip, .tar.gz, or one HLO text file")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_stats)
    e = sub.add_parser("extract", help="cut one computation or instruction into a module")
    e.add_argument("file", help="an HLO text file")
    e.add_argument("--computation", required=True,
                   help="a computation name, or an instruction name (e.g. a fusion)")
    e.add_argument("--out", help="write here instead of standard output")
    e.set_defaults(func=cmd_extract)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HloParseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (DumpError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
