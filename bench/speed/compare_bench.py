"""Comparing two compiles at scale: pairing the modules of two dumps and diffing the pair,
on the unrolled 9-layer transformer of ``bench/corpus/make_scale.py`` (~24k instructions after
optimization).

Pairs (each a real dump of the same program):

* default flags vs ``--xla_cpu_use_fusion_emitters=false`` (``generated/scale_20k`` and
  ``generated/scale_20k_no_fusion_emitters``, made here when missing): two flag sets;
* the same compile dumped twice (``generated/scale_20k`` and a copy of it): identical;
* two pass steps of one compile (``generated/scale_9layers_passes``: the snapshot before
  and after the late ``algsimp``, each copied into a dump of its own): nearly identical.

Timed, in a warm process, on fresh ``Dump`` objects each run: parsing both modules (the
reference, measured in the same run), then ``pair_modules`` (fingerprints and pairing)
+ ``compare_modules`` (counts and ``diff_modules(by_source=True, across=True)``); and the
``compare`` command end to end (a child process, imports and trace reading included).
Goal: pairing and diffing ≤ 1 s. Reference in the same run: parsing both modules.

    .venv/bin/python -m bench.speed.compare_bench [--repeat 5] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


from bench.common import ROOT, command, machine, publish
from compiler_bridge import open_dump
from compiler_bridge.compare import compare_modules, pair_modules

GEN = os.path.join(ROOT, "generated")
DEFAULT = os.path.join(GEN, "scale_20k")
NO_FE = os.path.join(GEN, "scale_20k_no_fusion_emitters")
PASSES = os.path.join(GEN, "scale_9layers_passes")


def ensure() -> None:
    if not os.path.isdir(DEFAULT):
        subprocess.run([sys.executable, "-m", "bench.corpus.make_scale"],
                       check=True, cwd=ROOT)
    if not os.path.isdir(NO_FE):
        subprocess.run([sys.executable, "-m", "bench.corpus.make_scale",
                        "--out", NO_FE, "--xla-flag=--xla_cpu_use_fusion_emitters=false"],
                       check=True, cwd=ROOT)
    if not os.path.isdir(PASSES):
        subprocess.run([sys.executable, "-m", "bench.corpus.make_scale",
                        "--layers", "9", "--pass-re", ".*"], check=True, cwd=ROOT)


def copy_dump(src: str, dst: str) -> str:
    shutil.copytree(src, dst)
    return dst


def step_dumps(tmp: str) -> tuple[str, str]:
    """Two snapshots of one compile (before / after the late algsimp), each as the
    after-optimizations file of a dump of its own."""
    d = open_dump(PASSES)
    passes = d.main.passes
    k = next(i for i, f in enumerate(passes) if f.pass_info.after == "algsimp"
             and f.pass_info.pipeline == "simplification_after_layout_assignment")
    out = []
    for name, f in (("before", passes[k - 1]), ("after", passes[k])):
        folder = os.path.join(tmp, f"step_{name}")
        os.makedirs(folder)
        shutil.copy(os.path.join(PASSES, f.path),
                    os.path.join(folder, "module_0000.jit_train_step.cpu_after_optimizations.txt"))
        out.append(folder)
    return out[0], out[1]


def measure(a_path: str, b_path: str, repeat: int) -> dict:
    """Per run, on fresh dumps: parse both modules (the reference), then pair and diff
    (the parsed modules cached in the dumps, as in the app once the module is open)."""
    pd, pd_cpu, parse, total = [], [], [], []
    result = pairing = None
    for _ in range(repeat):
        a, b = open_dump(a_path), open_dump(b_path)
        gc.collect()
        t0 = time.perf_counter()
        a.parse(a.main.after_optimizations.path)
        b.parse(b.main.after_optimizations.path)
        t1, c1 = time.perf_counter(), time.process_time()
        pairing = pair_modules(a, b)
        result = compare_modules(a, b, pairing.pairs[0])
        t2, c2 = time.perf_counter(), time.process_time()
        parse.append(t1 - t0)
        pd.append(t2 - t1)
        pd_cpu.append(c2 - c1)
        total.append(t2 - t0)
    assert result is not None and pairing is not None
    s = result.diff.summary()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "compiler_bridge", "compare", a_path, b_path,
                    "--json"], cwd=ROOT, check=True, capture_output=True)
    cli = time.perf_counter() - t0
    return {"instructions": (result.counts_a.instructions, result.counts_b.instructions),
            "fusions": (result.counts_a.fusions, result.counts_b.fusions),
            "added": s["added"], "removed": s["removed"], "changed": s["changed"],
            "pd": statistics.median(pd), "pd_max": max(pd), "pd_cpu": statistics.median(pd_cpu),
            "parse": statistics.median(parse), "total": statistics.median(total),
            "cli": cli, "how": pairing.pairs[0].how}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    ensure()
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="hlolens-compare-bench-") as tmp:
        twice = copy_dump(DEFAULT, os.path.join(tmp, "scale_20k_again"))
        before, after = step_dumps(tmp)
        for label, a, b in (
                ("default flags → --xla_cpu_use_fusion_emitters=false", DEFAULT, NO_FE),
                ("one compile dumped twice", DEFAULT, twice),
                ("two pass steps (late algsimp) as two dumps", before, after)):
            r = measure(a, b, args.repeat)
            rows.append((label, r))
            print(f"{label}: {r}", flush=True)
    lines = [
        "## Comparing two dumps: pairing and diffing ~24k-instruction modules",
        "",
        f"Command: {command()} — {machine()}, median of {args.repeat} runs on fresh dumps; "
        f"load average {load:.1f} when it started (a shared 2-core machine).",
        "",
        "The unrolled 9-layer transformer of `bench/corpus/make_scale.py` (default flags, and "
        "`--xla-flag=--xla_cpu_use_fusion_emitters=false --out "
        "generated/scale_20k_no_fusion_emitters`). Each run opens both dumps fresh, "
        "**parses** the two modules (the reference, measured in the same run), then "
        "**pairs and diffs** them: `pair_modules` (fingerprints, pairing) + "
        "`compare_modules` (counts, `diff_modules(by_source=True, across=True)`), what "
        "the `compare` command and the app's comparison do per pair once the modules are "
        "read. **CLI** = `python -m compiler_bridge compare A B --json` end to end, one run "
        "(interpreter start, imports, parsing, memory totals, trace reading). "
        "Goal: pairing and diffing ≤ 1 s.",
        "",
        "| pair | instructions | fusions | paired by | + added | − removed | ~ changed "
        "| pair + diff ms (median) | max | CPU ms | parse both ms (reference) "
        "| parse + pair + diff ms | CLI s |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows:
        lines.append(
            f"| {label} | {r['instructions'][0]:,} → {r['instructions'][1]:,} | "
            f"{r['fusions'][0]:,} → {r['fusions'][1]:,} | {r['how']} | {r['added']:,} | "
            f"{r['removed']:,} | {r['changed']:,} | **{r['pd'] * 1000:,.0f}** | "
            f"{r['pd_max'] * 1000:,.0f} | {r['pd_cpu'] * 1000:,.0f} | "
            f"{r['parse'] * 1000:,.0f} | {r['total'] * 1000:,.0f} | {r['cli']:.2f} |")
    worst = max(r["pd"] for _, r in rows)
    worst_cpu = max(r["pd_cpu"] for _, r in rows)
    lines += ["", f"Slowest pair + diff: {worst * 1000:,.0f} ms wall, {worst_cpu * 1000:,.0f} "
              "ms CPU (this process's own work; wall includes waiting for a core on a busy "
              "machine); goal ≤ 1,000 ms. Pair + diff is "
              f"{max(r['pd'] / r['parse'] for _, r in rows):.1f}× the parse of the two "
              "modules at most."]
    publish("compare_bench", lines, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
