"""Parse speed and memory against XLA's own C++ parser (jaxlib), in the same run.

For each input: ours (``parse_hlo``: structure parsed, attributes decoded on access),
ours with every attribute decoded (``materialize()``), and jaxlib's
``hlo_module_from_text``, alternating, median of N runs. Also the parsed model's
memory (tracemalloc) against the file size, and the time to index a 500-file dump.

    .venv/bin/python -m bench.speed.parse_bench [--repeat 5] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import glob
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc


from bench.common import ROOT, command, machine, write_section
from compiler_bridge import open_dump, parse_hlo

PEER = os.path.join(os.path.dirname(ROOT), "shared", "peer_hlo")


def inputs() -> list[str]:
    out = []
    scale = glob.glob(os.path.join(ROOT, "generated", "scale_20k", "*after_optimizations.txt"))
    if not scale:
        print("generated/scale_20k is missing: run `make scale` (bench/corpus/make_scale.py)",
              file=sys.stderr)
    out += scale
    out += sorted(glob.glob(os.path.join(PEER, "038[2-9]_*.hlo")))
    return out


def xla_parser():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from jaxlib import _hlo
    return _hlo.hlo_module_from_text


def model_memory(text: str) -> int:
    """Bytes held by the parsed model (tracemalloc, after the parse returns)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    module = parse_hlo(text)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del module
    return after - before


def peak_memory(fn) -> int:
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def index_500(tmp: str) -> tuple[float, int]:
    """Index a 500-file dump folder (real sample files under 250 module ids)."""
    src = os.path.join(ROOT, "sample_dumps", "cond_switch")
    files = sorted(f for f in os.listdir(src) if os.path.isfile(os.path.join(src, f)))
    folder = os.path.join(tmp, "dump500")
    os.makedirs(folder)
    n = 0
    k = 0
    while n < 500:
        for f in files:
            if n >= 500:
                break
            target = f.replace("module_0000.", f"module_{k:04d}.", 1)
            shutil.copyfile(os.path.join(src, f), os.path.join(folder, target))
            n += 1
        k += 1
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        d = open_dump(folder)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(d.files)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    xla = xla_parser()
    rows = []
    for path in inputs():
        text = open(path, encoding="utf-8").read()
        size = len(text.encode())
        ours, mat, theirs = [], [], []
        module = parse_hlo(text)
        n_inst = module.instruction_count
        for _ in range(args.repeat):
            gc.collect()
            t0 = time.perf_counter()
            xla(text)
            theirs.append(time.perf_counter() - t0)
            gc.collect()
            t0 = time.perf_counter()
            parse_hlo(text)
            ours.append(time.perf_counter() - t0)
            gc.collect()
            t0 = time.perf_counter()
            parse_hlo(text).materialize()
            mat.append(time.perf_counter() - t0)
        o, m, x = (statistics.median(v) for v in (ours, mat, theirs))
        mem = model_memory(text)
        peak = peak_memory(lambda t=text: parse_hlo(t))
        name = os.path.basename(path)
        rows.append((name, n_inst, size, o, m, x, mem, peak))
        print(f"{name[:50]:50} {n_inst:7d} instr {size / 1e6:6.2f} MB  ours {o * 1e3:7.1f} ms  "
              f"+attrs {m * 1e3:7.1f} ms  XLA {x * 1e3:7.1f} ms  ratio {o / x:4.2f} "
              f"({m / x:4.2f})  model {mem / size:4.1f}x file", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        idx_time, idx_files = index_500(tmp)
    print(f"index of a {idx_files}-file dump folder: {idx_time * 1e3:.1f} ms")

    ratios = [r[3] / r[5] for r in rows]
    mratios = [r[4] / r[5] for r in rows]
    mems = [r[6] / r[2] for r in rows]
    lines = [
        "## Parsing: ours vs XLA's C++ parser (jaxlib)",
        "",
        f"Command: {command()} — {machine()}, median of {args.repeat} alternating runs.",
        "`ours` = `parse_hlo` (every instruction, shape, operand and computation reference "
        "read and checked; attribute values kept verbatim and decoded on first access); "
        "`+attrs` = `parse_hlo(...).materialize()` (every known attribute decoded too); "
        "`XLA` = `jaxlib._hlo.hlo_module_from_text`. Ratio = ours / XLA (goal ≤ 1.0, floor ≤ 2.0). "
        "Model = memory the parsed model holds (tracemalloc) / file size (goal ≤ 10x); "
        "peak = tracemalloc peak during `parse_hlo`.",
        "",
        "| input | instructions | MB | ours ms | +attrs ms | XLA ms | ratio | ratio +attrs | model / file | peak / file |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, n, size, o, m, x, mem, peak in rows:
        lines.append(f"| {name[:60]} | {n} | {size / 1e6:.2f} | {o * 1e3:.0f} | {m * 1e3:.0f} | "
                     f"{x * 1e3:.0f} | **{o / x:.2f}** | {m / x:.2f} | {mem / size:.1f}x | "
                     f"{peak / size:.1f}x |")
    if rows:
        lines += ["", f"Median ratio {statistics.median(ratios):.2f} (worst {max(ratios):.2f}); "
                  f"with every attribute decoded {statistics.median(mratios):.2f} "
                  f"(worst {max(mratios):.2f}); model memory median "
                  f"{statistics.median(mems):.1f}x the file (worst {max(mems):.1f}x)."]
    lines += ["", f"Index of a {idx_files}-file dump folder (names and sizes only): "
              f"{idx_time * 1e3:.1f} ms (goal < 500 ms)."]
    if not args.no_write:
        write_section("parse_bench", "\n".join(lines))


if __name__ == "__main__":
    main()
