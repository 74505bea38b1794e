"""Compile a StableHLO (.mlir) or HLO text module for a target (``cpu``, ``h100``,
``v5e:2x2``, ...) into a dump folder, without the hardware: what ``python -m compiler_bridge
compile``, ``hlolens.show(..., target=...)`` and the app's *Compile for* action do.

XLA's GPU and TPU compilers come with jax's plugins (``libtpu``, ``jax-cuda12-plugin``),
which live in a virtualenv of their own, ``.venv-backends`` (``make samples-backends`` makes
it from ``sample_dumps/requirements-backends.txt``), apart from the app's. The compile runs
``targets/compile_child.py`` in a child process with that venv's python (this one's for the
CPU), ``XLA_FLAGS=--xla_dump_to=OUT``: the result is a dump like any other, with the
``xla_facts.json`` XLA's ``cost_analysis()`` and ``memory_analysis()`` fill.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

from .targets import CompileTarget, compile_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKENDS_VENV = os.path.join(ROOT, ".venv-backends")
REQUIREMENTS = "sample_dumps/requirements-backends.txt"
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets", "compile_child.py")
TIMEOUT_S = 600
INSTALL = (f"`make samples-backends` (it creates .venv-backends), or `python3 -m venv "
           f".venv-backends && .venv-backends/bin/pip install -r {REQUIREMENTS}`")


class CompileError(Exception):
    """The compile could not run or XLA refused it; the message says which and why.
    ``out``: the dump folder when XLA wrote one before refusing (an out-of-memory TPU
    compile still dumps its buffer assignment), else ''."""

    def __init__(self, message: str, out: str = "") -> None:
        super().__init__(message)
        self.out = out


@dataclass(frozen=True)
class Compiled:
    out: str                 # the dump folder
    target: CompileTarget


def backends_python(venv: str | None = None) -> str:
    """The python of ``.venv-backends``; ``CompileError`` naming how to make it."""
    venv = venv or BACKENDS_VENV
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        raise CompileError(f"XLA's GPU and TPU compilers are not installed: {venv} is "
                           f"missing. Install them with {INSTALL} (about 1.8 GB).")
    return python


def compile_module(source: str, target: str | CompileTarget, out: str,
                   venv: str | None = None) -> Compiled:
    """Compile the module in ``source`` (StableHLO text or bytecode, or HLO text) for
    ``target`` into the new folder ``out``. ``ValueError``: an unknown target;
    ``CompileError``: no compiler for it, a bad module, or XLA's refusal (its text)."""
    spec = compile_target(target) if isinstance(target, str) else target
    if not os.path.isfile(source):
        raise CompileError(f"{source}: no such file (expected a StableHLO .mlir or an HLO "
                           "text module)")
    if os.path.exists(out) and os.listdir(out):
        raise CompileError(f"{out} is not empty: the compile writes a new dump folder")
    python = sys.executable if spec.platform == "cpu" else backends_python(venv)
    os.makedirs(out, exist_ok=True)
    flags = f"--xla_dump_to={os.path.abspath(out)}"
    if spec.platform == "cuda":
        # one LLVM module at a time: the PTX files' numbers stay the same from run to run
        flags += " --xla_gpu_force_compilation_parallelism=1"
    # ALLOW_MULTIPLE_LIBTPU_LOAD: libtpu locks /tmp/libtpu_lockfile for a process that owns
    # the chips; a compile-only process owns none, and two compiles at once must both run
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=flags, TF_CPP_MIN_LOG_LEVEL="2",
               ALLOW_MULTIPLE_LIBTPU_LOAD="1")
    cmd = [python, CHILD, os.path.abspath(source), os.path.abspath(out), spec.platform,
           spec.topology] + ([spec.config] if spec.config else [])
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise CompileError(f"compiling {source} for {spec.name} took over {TIMEOUT_S} s",
                           out) from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines()
                 if ln.startswith(("XLA could not", "not a ", "the module asks"))]
        why = lines[-1] if lines else (proc.stderr.strip().splitlines() or ["no output"])[-1]
        dumped = out if proc.returncode == 3 and any(
            n.startswith("module_") for n in os.listdir(out)) else ""
        raise CompileError(f"{source} for {spec.name}: {why}", dumped)
    return Compiled(out, spec)
