"""Reading a huge trace: peak memory and time of ``runtimes`` on a dump whose trace holds
5.3M events (issue 33: a 533 MB trace took the command to 5.7 GB, ``json.loads`` of it all).

The transformer sample with its perfetto trace replaced by the same events repeated to
``--events`` (``tests.support.big_trace``), then ``python -m compiler_bridge runtimes DIR
--json`` in a child process: its peak RSS and wall time. ``--before PATH``: the same with
the code of another checkout first (e.g. ``git archive <commit> | tar -x -C PATH``).
The trace size and event caps are raised for the run (to 4 GiB, 2M events): the repeated
real events are 150 bytes each, so 5.3M of them unpack past 512 MiB, and hold 1.56M op
events and completion markers, past the default event cap of 1M (which refuses the trace
at once); the point is what reading all of it costs.

    .venv/bin/python -m bench.speed.trace_bench [--events 5300000] [--before PATH] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from bench.common import ROOT, command, machine, publish
from tests.support.big_trace import SESSION, write_big_trace
from tests.support.samples import sample


# ru_maxrss of children is the largest of all so far: each run is measured by a parent
# of its own
MEASURE = """
import resource, subprocess, sys, time
t0 = time.perf_counter()
out = subprocess.run(sys.argv[1:], capture_output=True, text=True)
seconds = time.perf_counter() - t0
last = (out.stderr.strip().splitlines() or [""])[-1].replace("|", "/")
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, seconds,
      "ok" if out.returncode == 0 else f"exit {out.returncode}: {last}")
"""


def run(code: str, dump: str) -> tuple[float, float, str]:
    """Peak RSS (MB) and seconds of ``runtimes`` run from the checkout ``code``."""
    env = {**os.environ, "PYTHONPATH": code, "HLOLENS_MAX_TRACE_BYTES": str(4 << 30),
           "HLOLENS_MAX_TRACE_EVENTS": str(2_000_000)}
    out = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m",
                          "compiler_bridge", "runtimes", dump, "--json"],
                         cwd=code, env=env, capture_output=True, text=True, check=True)
    peak, seconds, how = out.stdout.split(" ", 2)
    return float(peak), float(seconds), how.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=5_300_000)
    ap.add_argument("--before", default="", help="a checkout of the code before")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="trace_bench")
    try:
        dump = os.path.join(work, "transformer")
        shutil.copytree(sample("transformer"), dump, ignore=shutil.ignore_patterns("trace"))
        session = os.path.dirname(SESSION.replace("*", "big"))
        os.makedirs(os.path.join(dump, session))
        path = os.path.join(dump, session, "perfetto_trace.json.gz")
        ops = write_big_trace(path, a.events)
        packed = os.path.getsize(path)
        rows = []
        for label, code in (("before", a.before), ("after", ROOT)):
            if code:
                peak, seconds, how = run(os.path.abspath(code), dump)
                rows.append(f"| {label} | {peak:,.0f} | {seconds:.0f} | {how} |")
                print(rows[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    publish("trace_bench", [
        "## Reading a huge trace: `runtimes` on 5.3M events",
        "",
        f"Command: {command()} — {machine()}. The transformer sample with its trace "
        f"replaced by its real events repeated to {a.events:,} ({ops:,} per-op events; "
        f"{packed / 1e6:.1f} MB gzipped), the trace size and event caps raised for the run "
        "(4 GiB, 2M: by default the trace is refused, over the 1M event cap). Peak RSS "
        "of `python -m compiler_bridge runtimes DIR --json` (a child process) and its "
        "wall time. Before: `json.loads` of the whole text (issue 33, item 3); after: "
        "the text read as a stream, only op events and completion markers kept.",
        "",
        "| code | peak RSS MB | s | result |",
        "|---|---:|---:|---|",
        *rows,
    ], write=not a.no_write)


if __name__ == "__main__":
    main()
