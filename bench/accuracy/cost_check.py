"""Module totals of every traced program against XLA's own cost analysis (issue 15, point 6).

For each folder of ``generated/traced/`` (``bench/corpus/make_traced_programs.py``) holding a
``cost_analysis.json`` (``compiled.cost_analysis()`` of the compile that wrote the dump):
flops, transcendentals and bytes accessed from ``compiler_bridge.perf.xla_cost_totals`` of the
dumped after-optimizations module, the relative difference of each, and the programs outside
1% (XLA is the reference: a difference is a rule of ours to fix in ``perf/costs.py``).

    .venv/bin/python -m bench.accuracy.cost_check [--no-write] [--family gnn,vit] [--show 20]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time


from bench.common import ROOT, command, machine, write_section
from compiler_bridge import parse_hlo
from compiler_bridge.perf import xla_cost_totals

KEYS = (("flops", "flops"), ("transcendentals", "transcendentals"),
        ("bytes accessed", "bytes"))
TOLERANCE = 0.01


def check(folder: str) -> dict[str, tuple[float, float]]:
    """quantity -> (ours, XLA's) for one traced program."""
    with open(os.path.join(folder, "cost_analysis.json")) as f:
        xla = json.load(f)
    texts = glob.glob(os.path.join(folder, "*.cpu_after_optimizations.txt"))
    if len(texts) != 1:
        raise ValueError(f"{folder}: {len(texts)} optimized modules (expected 1)")
    with open(texts[0]) as f:
        ours = xla_cost_totals(parse_hlo(f.read(), texts[0]))
    return {key: (float(getattr(ours, attr)), float(xla.get(key, 0.0))) for key, attr in KEYS}


def rel(ours: float, want: float) -> float:
    return abs(ours - want) / max(abs(want), 1.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", help="only these families (program.json), comma-separated")
    ap.add_argument("--show", type=int, default=15, help="worst programs listed")
    ap.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = ap.parse_args(argv)
    fams = set(args.family.split(",")) if args.family else None
    folders = sorted(d for d in glob.glob(os.path.join(ROOT, "generated", "traced", "*"))
                     if os.path.isfile(os.path.join(d, "cost_analysis.json")))
    rows: list[tuple[str, str, dict[str, tuple[float, float]]]] = []
    errors: list[str] = []
    t0 = time.perf_counter()
    for d in folders:
        meta = {}
        if os.path.isfile(os.path.join(d, "program.json")):
            with open(os.path.join(d, "program.json")) as f:
                meta = json.load(f)
        family = meta.get("family", "?")
        if fams and family not in fams:
            continue
        try:
            rows.append((os.path.basename(d), family, check(d)))
        except Exception as e:     # one unreadable folder never hides the others
            errors.append(f"{os.path.basename(d)}: {type(e).__name__}: {e}")
    if not rows:
        print("no traced program with cost_analysis.json: run `make traced`",
              file=sys.stderr)
        return 1
    lines = [f"{len(rows)} traced programs of {len({r[1] for r in rows})} families, "
             f"{time.perf_counter() - t0:.0f} s; XLA's `compiled.cost_analysis()` is the "
             f"reference, tolerance {TOLERANCE:.0%}.", "",
             "| quantity | programs within 1% | max relative difference | median |",
             "|---|---|---|---|"]
    bad: dict[str, float] = {}
    for key, _ in KEYS:
        diffs = sorted(rel(*r[2][key]) for r in rows)
        within = sum(x <= TOLERANCE for x in diffs)
        lines.append(f"| {key} | {within}/{len(diffs)} | {diffs[-1]:.2%} | "
                     f"{diffs[len(diffs) // 2]:.2%} |")
        for name, _, got in rows:
            if rel(*got[key]) > TOLERANCE:
                bad[name] = max(bad.get(name, 0.0), rel(*got[key]))
    if bad:
        lines += ["", f"Outside {TOLERANCE:.0%} ({len(bad)}):", "",
                  "| program | family | flops ours / XLA | transc. ours / XLA | "
                  "bytes ours / XLA |", "|---|---|---|---|---|"]
        fam = {r[0]: r[1] for r in rows}
        got = {r[0]: r[2] for r in rows}
        for name in sorted(bad, key=lambda n: -bad[n])[:args.show]:
            cells = " | ".join(f"{got[name][k][0]:.4g} / {got[name][k][1]:.4g}"
                               for k, _ in KEYS)
            lines.append(f"| {name} | {fam[name]} | {cells} |")
    if errors:
        lines += ["", "Unreadable: " + "; ".join(errors)]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("cost-check", f"## Module cost totals vs XLA's cost analysis\n\n"
                      f"{command()} on {machine()}\n\n{body}\n")
    return 0 if not bad and not errors else 2


if __name__ == "__main__":
    sys.exit(main())
