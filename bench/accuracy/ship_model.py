"""Ship the default model: train the kind the runtime benchmark found better (or ``--kind``)
on the whole traced corpus and write it to ``compiler_bridge/perf/models/default-cpu.npz``
(and its JSON). A step of its own (``make ship-model``), never a side effect of the
benchmark: ``bench/accuracy/runtime_bench.py`` notes the better kind and its
leave-one-family-out scores in ``generated/runtime-choice.json``, which go into the
model's metadata when the corpus is the one it measured.

    .venv/bin/python -m bench.accuracy.runtime_bench --seeds 3 --profile shipped
    .venv/bin/python -m bench.accuracy.ship_model --seeds 3 --profile shipped
    .venv/bin/python -m bench.accuracy.ship_model --kind gbm    # without a benchmark run
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import sys
import time

from bench.accuracy.runtime_bench import CHOICE, corpus_args, load_corpus
from bench.corpus.step_timing import STEP_TIMES
from compiler_bridge.perf import boosted as B
from compiler_bridge.perf import graph_model as G
from compiler_bridge.perf import mlp
from compiler_bridge.perf.dataset import Dataset
from compiler_bridge.perf.model_loader import shipped_model_path


def corpus_hash(paths: list[str]) -> str:
    """blake2b of every program's file names and sizes (what was trained on: not the
    wall-clock step times, which only the benchmark reads)."""
    h = hashlib.blake2b(digest_size=12)
    for p in sorted(paths, key=lambda x: os.path.basename(os.path.normpath(x))):
        h.update(os.path.basename(os.path.normpath(p)).encode())
        for f in sorted(glob.glob(os.path.join(p, "**", "*"), recursive=True)):
            if os.path.isfile(f) and os.path.basename(f) != STEP_TIMES:
                h.update(f"{os.path.relpath(f, p)}:{os.path.getsize(f)}".encode())
    return h.hexdigest()


def ship(kind: str, ds: Dataset, device, cfg, fams: list[str], paths: list[str],
         scores: dict[str, float]) -> str:
    """Train ``kind`` on the whole corpus and write it as the default model."""
    meta = {"default": True, "families": fams, "corpus_hash": corpus_hash(paths),
            "calibration": {"name": device.name, "source": device.source},
            "trained_by": f"bench/accuracy/ship_model.py, {time.strftime('%Y-%m-%d')}",
            "leave_one_family_out": scores}
    t = time.perf_counter()
    trainer = {"mlp": mlp.train, "gnn": G.train, "gbm": B.train}[kind]
    model = trainer(ds, device, cfg, meta)
    path = model.save(shipped_model_path(device.kind))
    size = os.path.getsize(path) + os.path.getsize(path[:-4] + ".json")
    print(f"shipped {model.describe()} trained in {time.perf_counter() - t:.0f} s: {path} "
          f"({size / 1024:.0f} KiB)")
    return path


def choice() -> dict:
    """What the last runtime benchmark chose (empty when it has not run)."""
    try:
        with open(CHOICE, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpus_args(ap)
    ap.add_argument("--kind", choices=("mlp", "gnn", "gbm"),
                    help="the kind to ship (default: the one the last runtime benchmark "
                         "found better)")
    args = ap.parse_args(argv)
    chosen = choice()
    kind = args.kind or chosen.get("kind")
    if kind is None:
        raise SystemExit(f"no {os.path.relpath(CHOICE)}: run bench.accuracy.runtime_bench "
                         "first, or name the kind with --kind")
    corpus = load_corpus(args)
    # the benchmark's scores describe this model only if it measured this kind on this corpus
    same = chosen.get("kind") == kind and chosen.get("corpus") == sorted(corpus.paths)
    ship(kind, corpus.ds, corpus.device, corpus.cfgs[kind], corpus.fams, corpus.paths,
         chosen.get("leave_one_family_out", {}) if same else {})
    return 0


if __name__ == "__main__":
    sys.exit(main())
