"""Regenerate the sample XLA dump folders in sample_dumps/ from real JAX programs.

Run from anywhere (normally via ``make samples``):

    .venv/bin/python sample_dumps/make_samples.py            # all samples
    .venv/bin/python sample_dumps/make_samples.py mlp_train  # just some

Each sample runs one program of ``sample_dumps/programs/`` in its own child
process (XLA reads XLA_FLAGS once per process) with JAX_PLATFORMS=cpu and
``--xla_dump_to=sample_dumps/<sample> --xla_dump_hlo_as_text`` (plus
``--xla_dump_hlo_pass_re=.*`` for the per-pass samples). Afterwards the folder
is pruned: files of modules other than the program's main jitted function(s)
are deleted, object files (``*.o``) are deleted, and LLVM IR (``*.ll``) is
kept for one sample only (``keep_ll``) to stay under the size budget.

The transformer's 52 per-pass files (about 4 MB of text) alone would break the
5 MB budget, so the whole transformer dump, per-pass files included, is also
written as ``sample_dumps/transformer_per_pass.tar.xz`` (a complete dump that the
app and ``open_dump`` read as is), and the folder keeps everything but the
per-pass files. ``--no-pack`` leaves them in the folder instead.

The ``legacy_jax0430`` sample needs a second virtualenv with JAX 0.4.30:

    python3.11 -m venv .venv-jax0430
    .venv-jax0430/bin/pip install jax==0.4.30 jaxlib==0.4.30 'numpy<2'

Without it that sample is skipped (its committed folder is left as it is).
Each sample folder is deleted and recreated, so the script is idempotent.

``--memory`` records, for each sample, what JAX's ``compiled.memory_analysis()`` says
of the same compile into ``sample_dumps/memory_analysis.json`` (the expected totals of
the memory tests), without touching the sample folders: each program runs again in a
child process with the same flags, dumping into a temporary folder; its jitted
function is lowered and compiled once with the program's own arguments, and the numbers
are kept only if the after-optimizations HLO it dumped equals the committed one (program
paths aside), so they are numbers of the very compile the sample holds.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROGRAMS = HERE / "programs"
LEGACY_PYTHON = REPO / ".venv-jax0430" / "bin" / "python"

SIZE_BUDGET = 9_000_000  # bytes, all of sample_dumps/ (the GPU/TPU ones: 2.9 MB)
MAX_FILE = 1_000_000  # bytes, any single file


@dataclass(frozen=True)
class Sample:
    name: str  # folder under sample_dumps/
    program: str  # file under sample_dumps/programs/
    modules: tuple[str, ...]  # XLA module names to keep (jit_<function name>)
    per_pass: bool = False  # --xla_dump_hlo_pass_re=.*
    trace: bool = False  # program writes a profiler trace to <dump>/trace
    keep_ll: bool = False  # keep the *.ir-no-opt.ll / *.ir-with-opt.ll files
    pack_per_pass: bool = False  # move per-pass files into sample_dumps/<name>_per_pass.tar.xz
    python: Path | None = None  # interpreter; None = the one running this script
    description: str = ""
    xla_flags: tuple[str, ...] = ()  # more XLA flags (a pair of dumps that differ by flags)
    lean: bool = False  # keep only what a comparison reads (see LEAN_DROP)


SAMPLES = [
    Sample("mlp_train", "mlp_train.py", ("jit_train_step",), per_pass=True,
           description="3-layer MLP train step, hand-written Adam, per-pass dumps"),
    Sample("transformer", "transformer.py", ("jit_train_step",), per_pass=True, trace=True,
           pack_per_pass=True,
           description="pre-LN transformer block fwd+bwd+SGD, per-pass dumps (packed), "
                       "profiler trace"),
    Sample("scan_while", "scan_while.py", ("jit_step",), trace=True,
           description="lax.scan RNN + lax.while_loop power iteration, profiler trace"),
    Sample("cond_switch", "cond_switch.py", ("jit_route",), keep_ll=True,
           description="lax.switch (4 branches) + lax.cond, LLVM IR kept"),
    Sample("legacy_jax0430", "mlp_train.py", ("jit_train_step",), python=LEGACY_PYTHON,
           trace=True,
           description="the MLP train step dumped by JAX 0.4.30 (old HLO text format), "
                       "profiler trace without per-op events"),
    # a pair: one program (compiled for two batch sizes), two flag sets that change fusion
    Sample("flags_default", "fusion_flags.py", ("jit_train_step",), trace=True, lean=True,
           description="MLP train step at batch 32 and 8, default flags, profiler trace "
                       "(compare with flags_no_fusion_emitters)"),
    Sample("flags_no_fusion_emitters", "fusion_flags.py", ("jit_train_step",), trace=True,
           lean=True, xla_flags=("--xla_cpu_use_fusion_emitters=false",),
           description="the same program with --xla_cpu_use_fusion_emitters=false "
                       "(other fusions), profiler trace"),
    Sample("spmd_train", "spmd_train.py", ("jit_train_step",), per_pass=True, trace=True,
           pack_per_pass=True, xla_flags=("--xla_force_host_platform_device_count=8",),
           description="data + model parallel MLP train step on 8 host devices (mesh 4x2 "
                       "'data','model'), per-pass dumps (packed), profiler trace, XLA's facts"),
]

# what a lean sample drops (a comparison reads the after-optimizations text, the buffer
# assignment and live ranges, debug_options, compile_options and the perfetto trace)
LEAN_DROP = re.compile(r"(before_optimizations\.txt|-buffer-assignment-values\.txt|"
                       r"module\.mlir|topology\.textproto|\.trace\.json\.gz|\.xplane\.pb)$")

# module_NNNN.<name>.<rest> (files) or module_NNNN.<name> (the per-module subfolder)
MODULE_RE = re.compile(r"^module_(\d+)\.([^.]+)(?:\.(.*))?$")
# <base>SSSS.<pipeline>.after_<pass>[.before_<next>].txt
PER_PASS_RE = re.compile(r"^\d{4}\..+\.after_.+\.txt$")
AFTER_OPT_RE = re.compile(r"^(?:.+_)?after_optimizations\.txt$")
INSTRUCTION_RE = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*\S")


def xla_flags(dump: str, per_pass: bool, extra: tuple[str, ...] = ()) -> str:
    flags = [f"--xla_dump_to={dump}", "--xla_dump_hlo_as_text"]
    if per_pass:
        flags.append("--xla_dump_hlo_pass_re=.*")
    return " ".join(flags + list(extra))


def run_program(sample: Sample, python: str) -> None:
    dump_rel = f"sample_dumps/{sample.name}"  # relative: debug_options shows this path
    env = dict(os.environ)
    env["XLA_FLAGS"] = xla_flags(dump_rel, sample.per_pass, sample.xla_flags)
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    cmd = [python, f"sample_dumps/programs/{sample.program}", dump_rel]
    if sample.trace:
        cmd.append("--trace")         # programs that always trace ignore it
    print(f"[{sample.name}] XLA_FLAGS={env['XLA_FLAGS']!r}")
    print(f"[{sample.name}] $ {' '.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, cwd=REPO, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for line in proc.stdout.splitlines():
        print(f"[{sample.name}]   {line}")
    if proc.returncode != 0:
        raise SystemExit(f"[{sample.name}] program failed with exit code {proc.returncode}")


def prune(sample: Sample, folder: Path) -> dict:
    """Delete other modules' files, object files and (unless kept) LLVM IR."""
    removed = {"other_modules": set(), "files": 0, "o": 0, "ll": 0}
    for entry in sorted(folder.iterdir()):
        if entry.name == "trace":
            continue
        m = MODULE_RE.match(entry.name)
        if not m:
            print(f"[{sample.name}]   note: keeping unrecognized entry {entry.name}")
            continue
        if m.group(2) not in sample.modules:
            removed["other_modules"].add(m.group(2))
            removed["files"] += 1
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        elif entry.is_file() and entry.name.endswith(".o"):
            removed["o"] += 1
            entry.unlink()
        elif entry.is_file() and entry.name.endswith(".ll") and not sample.keep_ll:
            removed["ll"] += 1
            entry.unlink()
    if sample.lean:
        for p in sorted(folder.rglob("*")):
            if p.is_file() and LEAN_DROP.search(p.name):
                removed["files"] += 1
                p.unlink()
    return removed


def pack_per_pass(sample: Sample, folder: Path) -> Path:
    """Write the whole dump, per-pass files included, as a reproducible tar.xz beside the
    folder (a complete dump that open_dump reads as is), then drop the per-pass files
    from the folder (they are near-identical text that compresses ~150x)."""
    archive = HERE / f"{sample.name}_per_pass.tar.xz"
    members = sorted(p for p in folder.rglob("*") if p.is_file())
    top = f"{sample.name}_per_pass"
    with tarfile.open(archive, "w:xz", preset=9) as tar:
        for p in members:
            info = tarfile.TarInfo(f"{top}/{p.relative_to(folder).as_posix()}")
            info.size = p.stat().st_size
            info.mode = 0o644
            info.mtime = 0
            with p.open("rb") as f:
                tar.addfile(info, f)
    per_pass = [p for p in members if p.parent == folder and is_per_pass(p.name)]
    for p in per_pass:
        p.unlink()
    print(f"[{sample.name}] packed the dump ({len(members)} files, {len(per_pass)} per-pass) "
          f"into {archive.relative_to(REPO)} ({archive.stat().st_size:,} bytes)")
    return archive


def is_per_pass(filename: str) -> bool:
    m = MODULE_RE.match(filename)
    return bool(m and PER_PASS_RE.match(m.group(3) or ""))


def tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def count_instructions(path: Path) -> int:
    """Lines that look like `[ROOT ]%name = shape opcode(...)`, fused computations included."""
    n = 0
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if INSTRUCTION_RE.match(line):
                n += 1
    return n


def summarize(sample: Sample, folder: Path) -> dict:
    files = [p for p in folder.iterdir() if p.is_file()]
    module_ids = sorted({MODULE_RE.match(p.name).group(1) for p in folder.iterdir()
                         if MODULE_RE.match(p.name)})
    per_pass = 0
    after_opt = []
    for p in files:
        m = MODULE_RE.match(p.name)
        rest = (m.group(3) or "") if m else ""
        if PER_PASS_RE.match(rest):
            per_pass += 1
        elif AFTER_OPT_RE.match(rest):
            after_opt.append(p)
    trace_files = sorted(str(p.relative_to(folder)) for p in (folder / "trace").rglob("*")
                         if p.is_file()) if (folder / "trace").exists() else []
    return {
        "modules": module_ids,
        "files": len(files),
        "per_pass": per_pass,
        "ll": sum(p.name.endswith(".ll") for p in files),
        "trace_files": trace_files,
        "instructions": {p.name: count_instructions(p) for p in sorted(after_opt)},
        "bytes": tree_bytes(folder),
    }


def make(sample: Sample, pack: bool = True) -> dict | None:
    python = str(sample.python) if sample.python else sys.executable
    if sample.python and not sample.python.exists():
        print(f"[{sample.name}] SKIPPED: {sample.python.relative_to(REPO)} does not exist "
              "(see this script's docstring or sample_dumps/README.md to create it); "
              "the existing folder, if any, is left untouched.")
        return None
    folder = HERE / sample.name
    archive = HERE / f"{sample.name}_per_pass.tar.xz"
    if folder.exists():
        shutil.rmtree(folder)
    if archive.exists():
        archive.unlink()
    run_program(sample, python)
    if not folder.exists():
        raise SystemExit(f"[{sample.name}] no dump folder was written")
    removed = prune(sample, folder)
    if removed["other_modules"]:
        print(f"[{sample.name}] pruned {removed['files']} entries of modules "
              f"{sorted(removed['other_modules'])}")
    print(f"[{sample.name}] removed {removed['o']} .o files and {removed['ll']} .ll files")
    packed = pack_per_pass(sample, folder) if pack and sample.pack_per_pass else None
    info = summarize(sample, folder)
    if packed:
        with tarfile.open(packed) as tar:
            info["per_pass"] += sum(1 for n in tar.getnames() if is_per_pass(n.rsplit("/", 1)[-1]))
        info["packed"] = packed
        info["bytes"] += packed.stat().st_size
    if not info["modules"]:
        raise SystemExit(f"[{sample.name}] no files of {sample.modules} were dumped")
    if len(info["modules"]) > len(sample.modules):
        print(f"[{sample.name}] note: {len(info['modules'])} module ids kept "
              f"({info['modules']}): the function was compiled more than once")
    return info


MEMORY_JSON = HERE / "memory_analysis.json"
PROGRAM_PATH_RE = re.compile(r"[^\s\"']*/sample_dumps/programs/")


# rows of the stack-frame tables (FileNames, FunctionNames, FileLocations, StackFrames)
SOURCE_TABLE_ROW_RE = re.compile(r'^\d+ (?:"|\{file_name_id=|\{file_location_id=).*$', re.M)


def same_hlo(a: str, b: str) -> str:
    """'same' when the HLO texts are equal once the programs' absolute folder is taken out
    (it names the checkout); 'same apart from source locations' when only rows of the
    stack-frame tables differ (a program edited above its call since the sample was made);
    '' otherwise."""
    a, b = (PROGRAM_PATH_RE.sub("<programs>/", t) for t in (a, b))
    if a == b:
        return "same"
    if SOURCE_TABLE_ROW_RE.sub("", a) == SOURCE_TABLE_ROW_RE.sub("", b):
        return "same apart from source locations"
    return ""


def memory_child(program: str, function: str, out: str) -> None:
    """In a child process with XLA_FLAGS set: run ``program`` as ``__main__`` until its
    jitted ``function`` is first called, compile that call with ``lower().compile()`` and
    write ``memory_analysis()`` (and the JAX version) to ``out`` as JSON."""
    import runpy

    import jax

    class Recorded(Exception):
        pass

    real_jit = jax.jit

    def jit(fun=None, **kwargs):
        if fun is None:                       # @jax.jit(...) with options
            return lambda f: jit(f, **kwargs)
        jitted = real_jit(fun, **kwargs)
        if getattr(fun, "__name__", "") != function:
            return jitted

        def record(*args, **kw):
            stats = jitted.lower(*args, **kw).compile().memory_analysis()
            fields = {k: getattr(stats, k) for k in dir(stats)
                      if k.endswith("_in_bytes") and isinstance(getattr(stats, k), int)}
            Path(out).write_text(json.dumps({"jax": jax.__version__, "memory_analysis": fields}))
            raise Recorded
        return record

    jax.jit = jit
    try:   # leave this script's frames out of the stack traces in the HLO metadata, as if
        # the program had called its function itself (the HLO is compared with the sample's)
        from jax._src import source_info_util
        for frames in (str(Path(__file__).resolve()), "<frozen runpy>", runpy.__file__):
            source_info_util.register_exclusion(frames)
    except (ImportError, AttributeError):
        pass
    try:
        runpy.run_path(program, run_name="__main__")
    except Recorded:
        return
    raise SystemExit(f"{program} never called {function}")


def record_memory(sample: Sample) -> dict | None:
    """memory_analysis() of the sample's compile, checked against its committed HLO."""
    import tempfile

    python = str(sample.python) if sample.python else sys.executable
    if sample.python and not sample.python.exists():
        print(f"[{sample.name}] SKIPPED: {sample.python.relative_to(REPO)} does not exist")
        return None
    folder = HERE / sample.name
    committed: dict[str, list[Path]] = {}    # a name compiled twice has two files
    for p in sorted(folder.glob("module_*after_optimizations.txt")):
        committed.setdefault(p.name.split(".", 2)[1], []).append(p)
    with tempfile.TemporaryDirectory(prefix="hlolens-memory-") as tmp:
        env = dict(os.environ, JAX_PLATFORMS="cpu",
                   XLA_FLAGS=xla_flags(os.path.join(tmp, "dump"), False, sample.xla_flags))
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        out = os.path.join(tmp, "memory.json")
        function = sample.modules[0].removeprefix("jit_")
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--memory-child",
             str(PROGRAMS / sample.program), function, out, os.path.join(tmp, "dump")],
            cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            print(proc.stdout)
            raise SystemExit(f"[{sample.name}] memory child failed ({proc.returncode})")
        result = json.loads(Path(out).read_text())
        fresh = sorted(Path(tmp, "dump").glob(f"module_*.{sample.modules[0]}.*after_optimizations.txt"))
        verdicts = [same_hlo(f.read_text(), w.read_text()) for f in fresh
                    for w in committed.get(sample.modules[0], [])]
        result["hlo_vs_committed"] = max(verdicts, key=lambda v: v == "same", default="")
    result["module"] = sample.modules[0]
    print(f"[{sample.name}] jax {result['jax']}: {result['memory_analysis']} "
          f"(HLO vs the committed one: {result['hlo_vs_committed'] or 'DIFFERENT'})")
    if not result["hlo_vs_committed"]:
        print(f"[{sample.name}] WARNING: the recompiled HLO differs from the committed sample; "
              "its numbers are not recorded")
        return None
    return result


def write_memory(samples: list[Sample]) -> int:
    recorded = json.loads(MEMORY_JSON.read_text()) if MEMORY_JSON.exists() else {}
    status = 0
    for sample in samples:
        result = record_memory(sample)
        if result is None:
            status = 1 if not (sample.python and not sample.python.exists()) else status
            continue
        recorded[sample.name] = result
    MEMORY_JSON.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
    print(f"wrote {MEMORY_JSON.relative_to(REPO)}")
    return status


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--memory-child"]:
        sys.argv = [argv[1], argv[4]]      # the program's own argv: <program> <dump_dir>
        memory_child(argv[1], argv[2], argv[3])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", nargs="*", help="sample names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the samples and exit")
    parser.add_argument("--no-pack", action="store_true",
                        help="leave per-pass files in the folder (breaks the 5 MB budget)")
    parser.add_argument("--memory", action="store_true",
                        help=f"record memory_analysis() of each sample's compile into "
                             f"{MEMORY_JSON.name} (the folders are left as they are)")
    args = parser.parse_args(argv)
    by_name = {s.name: s for s in SAMPLES}
    if args.list:
        for s in SAMPLES:
            print(f"{s.name:16} {s.description}")
        return 0
    unknown = [n for n in args.samples if n not in by_name]
    if unknown:
        parser.error(f"unknown samples {unknown}; known: {list(by_name)}")
    chosen = [by_name[n] for n in args.samples] if args.samples else SAMPLES
    if args.memory:
        return write_memory(chosen)

    results = {}
    for sample in chosen:
        results[sample.name] = make(sample, pack=not args.no_pack)

    print()
    header = f"{'sample':16} {'module ids':12} {'files':>5} {'per-pass':>8} {'.ll':>4} " \
             f"{'trace':>5} {'after-opt instr':>15} {'bytes':>10}"
    print(header)
    print("-" * len(header))
    for name, info in results.items():
        if info is None:
            print(f"{name:16} (skipped)")
            continue
        instr = ",".join(str(v) for v in info["instructions"].values())
        print(f"{name:16} {','.join(info['modules']):12} {info['files']:5} {info['per_pass']:8} "
              f"{info['ll']:4} {len(info['trace_files']):5} {instr:>15} {info['bytes']:10}")
    for name, info in results.items():
        if info and info.get("packed"):
            print(f"{name}: per-pass files packed into {info['packed'].relative_to(REPO)} "
                  "(counted in per-pass and bytes, not in files)")
    for name, info in results.items():
        if info and info["trace_files"]:
            print(f"{name}: trace files: {', '.join(info['trace_files'])}")

    made = [s for s in chosen if results.get(s.name) is not None]
    memory_status = write_memory(made) if made else 0
    total = tree_bytes(HERE)
    big = [(p, p.stat().st_size) for p in HERE.rglob("*")
           if p.is_file() and p.stat().st_size > MAX_FILE]
    print(f"\nsample_dumps/ total: {total:,} bytes (budget {SIZE_BUDGET:,})")
    status = 0
    if total > SIZE_BUDGET:
        print("WARNING: sample_dumps/ is over the size budget")
        status = 1
    for p, size in big:
        print(f"WARNING: {p.relative_to(REPO)} is {size:,} bytes (> {MAX_FILE:,})")
        status = 1
    return status or memory_status


if __name__ == "__main__":
    sys.exit(main())
