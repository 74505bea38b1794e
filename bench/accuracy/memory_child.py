"""What the memory benches (``memory_targets``, ``tpu_memory_variants``) share: the child
script that compiles programs in the backends venv with ``--xla_dump_to`` and records
``memory_analysis()``, and the loop that compiles for each target and sets the dump's
figures beside XLA's.

A bench gives only its programs: Python that defines ``programs`` = {name: (function,
argument specs, jit options)}, run after ``PRELUDE`` (``target``, ``out``, ``h100`` and
the jax imports) and before ``RECORD`` (each program compiled as ``jit_<name>``, its
``*_in_bytes`` figures written to ``memory_analysis.json`` in the dump folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator

from bench.common import ROOT

H100 = os.path.join(ROOT, "compiler_bridge", "targets", "specs", "h100_sxm.txtpb")

PRELUDE = r'''
import json, os, sys
target, out, h100 = sys.argv[1], sys.argv[2], sys.argv[3]
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = f"--xla_dump_to={out}"
import jax, jax.numpy as jnp, numpy as np
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
'''

# a wrapper per program, so that one function compiled with several arguments is a module
# named after each program
RECORD = r'''
res = {}
for name, (f, args, options) in programs.items():
    def g(*a, _f=f):
        return _f(*a)
    g.__name__ = name
    m = jax.jit(g, **options).lower(*args).compile().memory_analysis()
    res["jit_" + name] = {k: getattr(m, k) for k in dir(m)
                          if k.endswith("_in_bytes") and isinstance(getattr(m, k), int)}
with open(os.path.join(out, "memory_analysis.json"), "w") as fh:
    json.dump(res, fh)
'''

FIELDS = (("argument", "argument_size_in_bytes", "argument_bytes"),
          ("output", "output_size_in_bytes", "output_bytes"),
          ("alias", "alias_size_in_bytes", "alias_bytes"),
          ("temp", "temp_size_in_bytes", "temp_bytes"),
          ("peak", "peak_memory_in_bytes", "peak_bytes"))


def bench_args(doc: str, argv: list[str] | None,
               targets: tuple[str, ...] | None = None) -> argparse.Namespace | None:
    """A memory bench's command line (``--venv``, ``--no-write``, ``--targets`` where it
    takes them), with ``python`` the venv's interpreter; None, said on stderr, when the
    venv is missing."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-backends"),
                    help="the backends venv (make samples-backends)")
    if targets is not None:
        ap.add_argument("--targets", default=",".join(targets))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    args.python = os.path.join(args.venv, "bin", "python")
    if not os.path.exists(args.python):
        print(f"error: no {args.python}: make samples-backends makes that venv",
              file=sys.stderr)
        return None
    return args


def child_script(programs: str) -> str:
    """The whole child script around a bench's ``programs``."""
    return PRELUDE + programs + RECORD


def compile_target(python: str, target: str, out: str, child: str) -> dict:
    """Runs the child for one target into ``out``; XLA's figures per module."""
    p = subprocess.run([python, "-c", child, target, out, H100], capture_output=True,
                       text=True, timeout=1200)
    if p.returncode != 0:
        raise SystemExit(f"{target}: the compile failed:\n{p.stderr[-3000:]}")
    with open(os.path.join(out, "memory_analysis.json"), encoding="utf-8") as f:
        return json.load(f)


def compare(out: str, want: dict) -> list[tuple[str, dict[str, tuple[int, int | None]]]]:
    """(module, {figure: (XLA's, the dump's)}) for each module XLA's figures name."""
    from compiler_bridge.dumps import open_dump
    from compiler_bridge.memory import module_memory
    dump = open_dump(out)
    rows = []
    for name, stats in want.items():
        mod = next(m for m in dump.modules if m.name.split(".cl_")[0] == name)
        t = module_memory(dump, mod).totals()
        rows.append((name, {label: (stats[key], getattr(t, attr))
                            for label, key, attr in FIELDS}))
    return rows


def measure(python: str, targets: list[str] | tuple[str, ...], child: str
            ) -> Iterator[tuple[str, str, dict[str, tuple[int, int | None]]]]:
    """(target, module, figures) for every module of every target, each target compiled
    into a temporary folder removed after."""
    with tempfile.TemporaryDirectory() as tmp:
        for target in targets:
            out = os.path.join(tmp, target.replace(":", "_"))
            for name, cells in compare(out, compile_target(python, target, out, child)):
                yield target, name, cells
