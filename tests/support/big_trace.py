"""A real trace made large, for the streaming reader's memory test and
``bench/speed/trace_bench``: the transformer sample's perfetto trace with its events
repeated, each copy a later profiling run (timestamps shifted past the previous copy, run
ids counted on), written gzipped."""

from __future__ import annotations

import glob
import gzip
import json
import os

from .samples import sample

SESSION = "trace/plugins/profile/*/perfetto_trace.json.gz"


def sample_trace(name: str = "transformer") -> str:
    return glob.glob(os.path.join(sample(name), SESSION))[0]


def write_big_trace(path: str, events: int, name: str = "transformer") -> int:
    """Write ``events`` events (the sample's, repeated) to ``path`` as .json.gz; returns
    how many of them are per-op events."""
    with gzip.open(sample_trace(name), "rb") as f:
        doc = json.load(f)
    real = doc.pop("traceEvents")
    span = max(float(e.get("ts", 0)) + float(e.get("dur", 0)) for e in real) + 1.0
    runs = max((int(e["args"]["run_id"]) for e in real
                if isinstance(e.get("args"), dict) and "run_id" in e["args"]), default=0) + 1
    head = json.dumps(doc, separators=(",", ":"))[:-1] + ',"traceEvents":['
    ops = 0
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(head.encode())
        for k in range(events):
            e = dict(real[k % len(real)])
            rep = k // len(real)
            if "ts" in e:
                e["ts"] = float(e["ts"]) + rep * span
            args = e.get("args")
            if isinstance(args, dict) and "run_id" in args:
                args = e["args"] = dict(args, run_id=int(args["run_id"]) + rep * runs)
            if isinstance(args, dict) and args.get("hlo_op") and e.get("ph") == "X":
                ops += 1
            out.write(((b"," if k else b"") + json.dumps(e, separators=(",", ":")).encode()))
        out.write(b"]}")
    return ops
