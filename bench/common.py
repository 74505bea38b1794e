"""Shared helpers for the benchmarks: timing, the machine, BENCHMARKS.md sections (the browser
harness they share with the tests is ``tests.support.browser``)."""

from __future__ import annotations

import os
import platform
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "BENCHMARKS.md")


def median_time(fn, repeat: int = 5) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d')}")


def publish(name: str, lines: list[str], write: bool = True) -> None:
    """A benchmark's result: printed, and (unless ``write`` is off, ``--no-write``) its
    section ``name`` of BENCHMARKS.md replaced."""
    body = "\n".join(lines)
    print("\n" + body)
    if write:
        write_section(name, body)


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section ``name`` of BENCHMARKS.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = open(BENCHMARKS, encoding="utf-8").read() if os.path.exists(BENCHMARKS) else \
        "# Benchmarks\n\nEach section is written by the command named in it; numbers from " \
        "the machine and day it names. Ratios compare with a reference measured in the same " \
        "run, since these machines are noisy.\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text:
        text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(BENCHMARKS, "w", encoding="utf-8") as f:
        f.write(text)


def command() -> str:
    """The command line that is running, as BENCHMARKS.md names it: ``python -m`` and the
    module when run so (every benchmark is), else the script's path."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    run = ["-m", spec.name] if spec is not None else [os.path.relpath(sys.argv[0], ROOT)]
    return "`" + " ".join([".venv/bin/python", *run, *sys.argv[1:]]) + "`"
