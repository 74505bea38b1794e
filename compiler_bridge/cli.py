"""``python -m compiler_bridge``: the bridge's commands for scripts, CI and bug reports.

``stats``, ``extract`` and ``passes`` read dumps and HLO files; ``store`` manages the
app's dump store; the runtime commands (``runtimes``, ``profile``, ``calibrate``,
``train``) are added by ``compiler_bridge.perf`` (:func:`add_runtime_commands`), ``memory``
by ``compiler_bridge.memory``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tarfile
import zipfile

from .dumps import DumpError, open_dump, require_modules
from .hlo import HloParseError
from .hlo import parse_hlo_bytes
from .hlo import extract_text
from .hlo import HLO_TEXT, sniff, to_hlo_text


def _is_single_file(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    lower = path.lower()
    # an archive by content (.tar.xz too) or by name (a .zip that is not one: open_dump
    # says what it expected), not HLO text
    return not (zipfile.is_zipfile(path) or tarfile.is_tarfile(path) or lower.endswith(
        (".zip", ".tar.gz", ".tgz", ".tar", ".tar.xz", ".tar.bz2")))


def _read_module(path: str):
    with open(path, "rb") as f:
        data = f.read()
    kind = sniff(data, os.path.basename(path))
    if kind and kind != HLO_TEXT:              # StableHLO/MLIR or a proto: XLA converts it
        data = to_hlo_text(data, kind, path)
    return parse_hlo_bytes(data, path)


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
    require_modules(dump, args.path)    # an empty or unrelated archive or folder: exit 1
    if args.json:
        return _file_errors(dump)
    print(f"dump {dump.name}: {len(dump.modules)} modules, {len(dump.files)} files, "
          f"{len(dump.traces)} trace files; main program: {stats['main']}")
    # ids are 4 digits, longer where runs written into one folder share them
    # (0004@<stamp>): the column is as wide as the longest
    width = max((len(m["id"]) for m in stats["modules"]), default=4)
    rows = []
    for m in stats["modules"]:
        after = m["stages"].get("after_optimizations") or m["stages"].get("before_optimizations")
        size = f"{after['instructions']} instructions, {after['fusions']} fusions" if after else "-"
        rows.append((m["id"], m["name"] + (f" ({m['compile_id']})" if m["compile_id"] else ""),
                     size, m["passes"]))
    # columns as wide as what they hold (fixed 40s made every row 100+ characters, and a
    # longer name pushed its row out of line)
    nw = max((len(r[1]) for r in rows), default=0)
    sw = max((len(r[2]) for r in rows), default=0)
    for id_, name, size, passes in rows:
        print(f"  {id_:<{width}}  {name:<{nw}}  {size:<{sw}}  {passes} pass files")
    return _file_errors(dump)


def _file_errors(dump) -> int:
    """Say each file of the dump that could not be read; exit 1 when there was one (the
    report is printed, but the input has a problem), as kernels, collectives, runtimes."""
    for e in dump.errors:
        print(f"error: {e.text}", file=sys.stderr)
    return 1 if dump.errors else 0


def cmd_extract(args: argparse.Namespace) -> int:
    if os.path.isdir(args.file):
        print(f"error: {args.file}: a folder; expected one HLO text file (a dump's "
              "module_NNNN.<name>.after_optimizations.txt, say)", file=sys.stderr)
        return 1
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


def cmd_passes(args: argparse.Namespace) -> int:
    from .passes import pass_timeline, step_diff, timeline_json

    dump = open_dump(args.path)
    require_modules(dump, args.path)
    try:
        module = dump.pick(args.module)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    timeline = pass_timeline(dump, module)
    if args.diff is not None:
        if not 0 <= args.diff < len(timeline):
            print(f"error: no step {args.diff} (0..{len(timeline) - 1})", file=sys.stderr)
            return 2
        d = step_diff(dump, timeline, args.diff)
        if d is None:
            print("error: the first step has nothing to compare with", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(d.to_json(), indent=2))
        else:
            _print_diff(d)
        return 0
    data = timeline_json(dump, timeline)
    if args.json:       # the id too: names repeat (a program compiled twice)
        print(json.dumps({"id": module.id, **data}, indent=2))
        return _file_errors(dump)
    print(f"module {module.label}: {len(timeline)} steps"
          + ("" if timeline.per_pass else " (no per-pass files)"))
    print(f"{'step':>4} {'seq':>4}  {'pipeline':<40} {'pass':<34} {'instr':>7} {'fusions':>7} "
          f"{'+':>6} {'-':>6} {'~':>6}")
    for s, row in zip(timeline.steps, data["steps"]):
        seq = f"{s.sequence:04d}" if s.sequence is not None else "-"
        if s.error:
            print(f"{s.index:4d} {seq:>4}  {s.pipeline[:40]:<40} {s.pass_name[:34]:<34} "
                  f"error: {_in_step(s.file, s.error)[:80]}")
            continue
        mark = "  (same text as the previous step)" if s.identical else ""
        print(f"{s.index:4d} {seq:>4}  {s.pipeline[:40]:<40} {s.pass_name[:34]:<34} "
              f"{s.instructions:7d} {s.fusions:7d} {row['added']:6d} {row['removed']:6d} "
              f"{row['changed']:6d}{mark}")
    if timeline.stablehlo is not None:     # listed, not converted (jaxlib runs when drawn)
        print(f"StableHLO (before step 0): {timeline.stablehlo.file} "
              "(viz render --stage stablehlo draws it)")
    if timeline.hint:
        print(timeline.hint)
    return _file_errors(dump)


def _in_step(file: str, error: str) -> str:
    """A step's error in its row, which is that file's: 'line 58:78: ...' (the file's name
    alone would fill the row)."""
    first = error.splitlines()[0]
    m = re.match(re.escape(file) + r":(?:(\d+:\d+):)? ?", first)
    if m is None:
        return first
    return (f"line {m.group(1)}: " if m.group(1) else "") + first[m.end():]


def _print_diff(d) -> None:
    s = d.summary()
    print(f"{s['added']} added, {s['removed']} removed, {s['changed']} changed; computations "
          f"+{s['computations_added']} -{s['computations_removed']}; {s['fused']} fused; "
          f"{s['layout_changes']} layout changes; {s['layout_conflicts']} layout conflicts "
          f"({s['bytes_moved']} bytes moved)")
    for f in d.fusions:
        print(f"  fusion  {f.describe()}")
    for c in d.layout_conflicts:
        print(f"  layout conflict  {c.instruction}: {c.operand} {c.from_shape} -> {c.to_shape} "
              f"({c.bytes} bytes) for {', '.join(c.users[:4])}")
    for c in d.changed:
        print(f"  ~ {c.describe()}")
    for r in d.added:
        print(f"  + {r.name} ({r.opcode}) in {r.where}")
    for r in d.removed:
        print(f"  - {r.name} ({r.opcode}) in {r.where}")


def cmd_compare(args: argparse.Namespace) -> int:
    """Two dumps side by side; exit 1 when a paired module's measured step time grew by
    more than --fail-if-slower percent, 2 when they cannot be compared (or, with the
    gate, when no pair has a measured step time on both sides)."""
    from .compare import CannotCompare, compare_dumps

    try:
        a = open_dump(args.a)
        b = open_dump(args.b) if os.path.abspath(args.b) != os.path.abspath(args.a) else a
        require_modules(a, args.a)      # else 'no module of A pairs with ... (different
        require_modules(b, args.b)      # programs?)' of a folder with no XLA files
        cmp = compare_dumps(a, b, args.a, args.b, args.module_a or "", args.module_b or "")
    except (CannotCompare, DumpError) as e:
        print(f"error: cannot compare: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(cmp.to_json(), indent=2))
    else:
        _print_comparison(cmp)
    for note in cmp.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.fail_if_slower is None:
        return 0
    if not any(r.step_us is not None for r in cmp.reports):
        print("error: cannot compare step times: no paired module has a measured step time "
              "on both sides (both dumps need a profiler trace with per-op events)",
              file=sys.stderr)
        return 2
    slower = cmp.regressions(args.fail_if_slower)
    for r, pct in slower:
        x, y = r.step_us or (0.0, 0.0)
        print(f"REGRESSION: {r.pair.name} ({r.pair.a} -> {r.pair.b}) step "
              f"{x:,.1f} -> {y:,.1f} us ({pct:+.1f}% > "
              f"{args.fail_if_slower:g}%)", file=sys.stderr)
    return 1 if slower else 0


def _print_comparison(cmp) -> None:
    j = cmp.to_json()
    for side in ("a", "b"):
        s = j[side]
        print(f"{side.upper()}: {s['path']}  jax {s['jax'] or '?'}  "
              f"{' '.join(f for f in s['xla_flags'] if not f.startswith('--xla_dump_')) or ''}")
    f = cmp.flags
    if not (f.known_a and f.known_b):
        silent = " and ".join(x for x, k in (("A", f.known_a), ("B", f.known_b)) if not k)
        print(f"flags: {silent} does not say which XLA flags it was made with "
              "(no debug_options or compile_options.textproto)")
    elif f.is_empty:
        print("flags: the same")
    for flag in f.only_a:
        print(f"flags: only A {flag}")
    for flag in f.only_b:
        print(f"flags: only B {flag}")
    for name, x, y in f.changed:
        print(f"flags: --{name} {x} -> {y}")
    for r, m in zip(cmp.reports, j["modules"]):
        step = (f"step {m['step_us'][0]:,.1f} -> {m['step_us'][1]:,.1f} us ({r.slower_pct():+.1f}%)"
                if m["step_us"] else "step time not measured")
        print(f"{m['name']} {m['a']} -> {m['b']} ({r.pair.how}): instructions "
              f"{m['instructions'][0]} -> {m['instructions'][1]}, fusions {m['fusions'][0]} -> "
              f"{m['fusions'][1]}; +{m['added']} -{m['removed']} ~{m['changed']}; {step}")
        if r.memory_a is not None or r.memory_b is not None:
            ma, mb = r.memory_a or {}, r.memory_b or {}
            print("    memory " + ", ".join(f"{k} {ma.get(k, '?')} -> {mb.get(k, '?')} B"
                                         for k in ("argument", "output", "temp", "peak")))
            for side, why in zip("AB", r.memory_missing):
                if why:
                    print(f"    memory of {side} unknown: {why}")
        for op, (x, y) in list(r.comparison.opcode_delta.items())[:8]:
            print(f"    {op:<24} {x:6d} -> {y:6d}")
        for fc in r.comparison.diff.fusions[:10]:
            print(f"    fusion  {fc.describe()}")
    from .compare import recompilations
    for side, dump in (("A", cmp.a), ("B", cmp.b)):
        for rc in recompilations(dump):
            print(f"{side} compiled {rc.name} {len(rc.modules)} times: "
                  + "; ".join(f"{m} ({d})" for m, d in zip(rc.modules, rc.differences())))
        if cmp.b is cmp.a:
            break
    if j["unpaired"]["a"] or j["unpaired"]["b"]:
        print(f"unpaired: A {', '.join(j['unpaired']['a']) or '-'}; "
              f"B {', '.join(j['unpaired']['b']) or '-'}")


def cmd_compile(args: argparse.Namespace) -> int:
    """Compile a StableHLO or HLO module for a target into a dump (compiler_bridge/
    cross_compile.py); with --compare-cpu, also for this machine's CPU, and the two side by
    side. Exit 1: it could not compile (the reason on stderr), 2: an unknown target."""
    from .compare import CannotCompare, compare_dumps
    from .cross_compile import CompileError, compile_module
    from .dumps import module_target

    try:
        done = compile_module(args.file, args.target, args.out)
        cpu = compile_module(args.file, "cpu", args.out.rstrip("/") + "-cpu") \
            if args.compare_cpu else None
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except CompileError as e:
        print(f"error: {e}", file=sys.stderr)
        if e.out:
            print(f"note: XLA dumped what it did before it stopped: {e.out}", file=sys.stderr)
        return 1
    dump = open_dump(done.out)
    target = module_target(dump) if dump.modules else None
    cmp = None
    if cpu is not None:
        try:
            cmp = compare_dumps(open_dump(cpu.out), dump, cpu.out, done.out)
        except (CannotCompare, DumpError) as e:
            print(f"note: cannot compare with the CPU compile: {e}", file=sys.stderr)
    if args.json:
        print(json.dumps({"dump": done.out, "target": target.to_json() if target else None,
                          "modules": [m.label for m in dump.modules],
                          "cpu_dump": cpu.out if cpu else None,
                          "comparison": cmp.to_json() if cmp else None}, indent=1))
        return 0
    print(f"compiled {args.file} for {target.label if target else done.target.name}: "
          f"{done.out} ({', '.join(m.label for m in dump.modules)})")
    if cmp is not None:
        print(f"against this machine's CPU ({cpu.out if cpu else ''}):")
        _print_comparison(cmp)
    return 0


def cmd_store(args: argparse.Namespace) -> int:
    """The dump store the app uploads to: add a dump (prints its share id), list, remove."""
    import time

    from .dumps import Store

    store = Store(args.data or None)
    if args.store_command == "add":
        if not os.path.exists(args.path):
            print(f"error: {args.path}: no such file or folder", file=sys.stderr)
            return 1
        stored = store.add_path(args.path, name=args.name)
        print(stored.share_id)
        print(f"stored {stored.name}: {len(stored.modules)} modules, {stored.files} files, "
              f"{stored.size:,} bytes in {store.location}; open it with ?dump={stored.share_id}",
              file=sys.stderr)
        return 0
    if args.store_command == "list":
        dumps = store.list(damage=True)
        if args.json:
            print(json.dumps([d.to_json() for d in dumps], indent=2))
            return 0
        if not dumps:
            print(f"no dumps in {store.location}")
            return 0
        print(f"{'share id':<18} {'uploaded':<16} {'bytes':>13} {'modules':>7}  name")
        for d in dumps:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(d.uploaded_at))
            lost = f"  ({len(d.damage)} files lost: store add it again)" if d.damage else ""
            print(f"{d.share_id:<18} {when:<16} {d.size:>13,} {len(d.modules):>7}  {d.name}"
                  f"{lost}")
        return 0
    if args.store_command == "verify":
        problems = store.damage(store.resolve(args.id), hashes=True)
        for p in problems:
            print(p)
        print(f"{args.id}: " + (f"{len(problems)} files differ from the upload"
                                if problems else "every file as uploaded"), file=sys.stderr)
        return 1 if problems else 0
    removed = store.remove(args.id)
    print(f"removed {removed.name} ({removed.share_id}) with its saved views and comments")
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
    ps = sub.add_parser("passes", help="a module's pass timeline: counts and changes per step")
    ps.add_argument("path", help="a dump folder, .zip or .tar.gz")
    ps.add_argument("--module", help="module id or name (default: the main program)")
    ps.add_argument("--json", action="store_true")
    ps.add_argument("--diff", type=int, metavar="STEP",
                    help="print the structural diff of this step against the previous one")
    ps.set_defaults(func=cmd_passes)
    cp = sub.add_parser("compare", help="two dumps (or two compiles) side by side; a CI gate",
                        description="Pair the modules of two dumps (by name, then structure) "
                                    "and compare counts, flags, memory and measured step "
                                    "times. Exit 1: a step time regressed by more than "
                                    "--fail-if-slower; 2: cannot compare.")
    cp.add_argument("a", help="the baseline dump (folder, .zip or .tar.gz)")
    cp.add_argument("b", help="the dump to compare with it (may be the same dump)")
    cp.add_argument("--module-a", help="module id or name in A (default: every pair)")
    cp.add_argument("--module-b", help="module id or name in B (default: A's partner)")
    cp.add_argument("--json", action="store_true")
    cp.add_argument("--fail-if-slower", type=float, metavar="PCT",
                    help="exit 1 when a paired module's median step time grew by more "
                         "than PCT percent")
    cp.set_defaults(func=cmd_compare)
    cc = sub.add_parser("compile", help="compile a StableHLO or HLO module for a CPU, GPU or "
                                        "TPU target into a dump, without the hardware")
    cc.add_argument("file", help="a StableHLO (.mlir) or HLO text module")
    cc.add_argument("--target", required=True,
                    help="cpu, h100, or a TPU topology as jax names it (v5e:2x2, v6e:2x2, "
                         "v5p:2x2x1); GPU and TPU need .venv-backends (make samples-backends)")
    cc.add_argument("--out", required=True, help="the dump folder to write (new or empty)")
    cc.add_argument("--compare-cpu", action="store_true",
                    help="also compile for this machine's CPU (into OUT-cpu) and compare")
    cc.add_argument("--json", action="store_true")
    cc.set_defaults(func=cmd_compile)
    sp = sub.add_parser("store", help="the app's dump store: add, list, remove dumps")
    sp.add_argument("--data", default="",
                    help="the store's folder or fsspec URL (default: $HLOLENS_DATA, "
                         "else ./.hlolens-data)")
    st_sub = sp.add_subparsers(dest="store_command", required=True)
    st_add = st_sub.add_parser("add", help="store a dump folder or archive; prints its share id")
    st_add.add_argument("path", help="a dump folder, .zip or .tar.gz")
    st_add.add_argument("--name", default=None, help="the name shown (default: the file name)")
    st_list = st_sub.add_parser("list", help="the stored dumps, newest first")
    st_list.add_argument("--json", action="store_true")
    st_verify = st_sub.add_parser("verify", help="hash every file of a stored dump against "
                                  "its manifest; exit 1 naming those lost or changed")
    st_verify.add_argument("id", help="the dump's share id")
    st_rm = st_sub.add_parser("remove", help="delete a dump with its views and comments")
    st_rm.add_argument("id", help="the dump's share id")
    for each in (st_add, st_list, st_verify, st_rm):   # after the command too: `store add
        each.add_argument("--data", default=argparse.SUPPRESS,   # DUMP --data DIR`
                          help="as before the command")
    sp.set_defaults(func=cmd_store)
    # runtimes, profile, calibrate, train (compiler_bridge/runtime_cli.py)
    from .perf import add_runtime_commands
    add_runtime_commands(sub)
    from .memory import add_memory_command
    add_memory_command(sub)
    from .kernels import add_kernels_command   # kernels (compiler_bridge/kernels/cli.py)
    add_kernels_command(sub)
    from .tf import add_tf_commands           # clusters (compiler_bridge/tf/cli.py)
    add_tf_commands(sub)
    from .spmd import add_spmd_commands       # collectives, shardings (spmd/cli.py)
    add_spmd_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:     # the reader stopped early (`| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # nothing to flush
        return 0
    except HloParseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:        # "path: No such file or directory", not "[Errno 2] ..."
        print(f"error: {e.filename}: {e.strerror}" if e.filename and e.strerror
              else f"error: {e}", file=sys.stderr)
        return 1
    except DumpError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
