"""Programs compiled by JAX during the test, for real XLA output that no committed sample
holds (a zero-size array, ...): each in a child process (XLA reads XLA_FLAGS once), dumped
with ``--xla_dump_to`` into the test's folder, with ``memory_analysis()`` of that compile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# the program defines ``f`` (jitted or not) and ``ARGS``; the child compiles f on them
# and calls it
_CHILD = r"""
import json, sys
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
exec(sys.argv[2])
jitted = f if hasattr(f, "lower") else jax.jit(f)
stats = jitted.lower(*ARGS).compile().memory_analysis()
jax.block_until_ready(jitted(*ARGS))   # and run: what JAX compiles to call it is dumped too
json.dump({k: getattr(stats, k) for k in dir(stats) if k.endswith("_in_bytes")},
          open(sys.argv[1], "w"))
"""


def compile_program(folder: Path, program: str,
                    flags: str = "--xla_dump_hlo_as_text") -> tuple[Path, dict]:
    """Compile ``program`` with ``--xla_dump_to=<folder>/dump`` and ``flags`` (what XLA
    writes): the dump and XLA's ``memory_analysis()`` of the same compile."""
    try:
        import jax  # noqa: F401
    except ImportError:
        from conftest import missing
        missing("jax is not installed")
    dump, facts = folder / "dump", folder / "memory_analysis.json"
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"--xla_dump_to={dump} {flags}")
    subprocess.run([sys.executable, "-c", _CHILD, str(facts), program], env=env, check=True,
                   timeout=300, capture_output=True)
    return dump, json.loads(facts.read_text())


def profile_program(folder: Path, script: str, flags: str = "") -> Path:
    """Run ``script`` (a JAX program's text) under ``python -m compiler_bridge profile``
    (dump and profiler trace, on CPU, ``flags`` added to XLA_FLAGS): the dump folder."""
    try:
        import jax  # noqa: F401
    except ImportError:
        from conftest import missing
        missing("jax is not installed")
    path, dump = folder / "program.py", folder / "dump"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(script)
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=flags,
               HLOLENS_CACHE=str(folder / "cache"))
    subprocess.run([sys.executable, "-m", "compiler_bridge", "profile", "--out", str(dump),
                    str(path)], env=env, check=True, timeout=300, capture_output=True,
                   cwd=Path(__file__).resolve().parents[2])
    return dump
