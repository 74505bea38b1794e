"""Where the traced corpus is written (``OUT``) and what runs in a child process of the
driver: one profiling session of each program of a batch (with the first, its dump,
``program.json`` and ``cost_analysis.json``)."""

from __future__ import annotations

import json
import os
import shutil
import time

from bench.common import ROOT
from bench.corpus.traced_programs import CONFIGS, PROGRAMS, compile_program, cost_analysis_of

# HLOLENS_TRACED_OUT: another place for the corpus (the tests' temporary folders)
OUT = os.environ.get("HLOLENS_TRACED_OUT") or os.path.join(ROOT, "generated", "traced")
# XLA's compiles are shared between rounds through JAX's persistent cache (its key leaves out
# the dump options): a later round loads the executable instead of compiling again.
CACHE = os.path.join(OUT, ".jax-cache")


def dumped(folder: str) -> list[str]:
    return [f for f in os.listdir(folder) if f.endswith(".cpu_after_optimizations.txt")]


def prune(folder: str) -> None:
    for f in os.listdir(folder):
        if f.endswith((".o", ".ll")):
            os.remove(os.path.join(folder, f))


def sessions_of(name: str) -> int:
    """Profiling sessions held by a program's finished folder (-1: no finished folder)."""
    folder = os.path.join(OUT, name)
    if not os.path.isfile(os.path.join(folder, "program.json")):
        return -1
    prof = os.path.join(folder, "trace", "plugins", "profile")
    return len(os.listdir(prof)) if os.path.isdir(prof) else 0


def run_steps(compiled, args, feed, out, n: int):
    """``n`` steps, each fed the last one's output (a training step's new state) and
    waited for. Returns (args, output, seconds per step)."""
    import jax
    t0 = time.perf_counter()
    for _ in range(n):
        if feed is not None and out is not None:
            args = feed(out, args)
        out = jax.block_until_ready(compiled(*args))
    return args, out, (time.perf_counter() - t0) / n


def _session(name: str, folder: str, dump: bool) -> tuple[float, int]:
    """One profiling session of one program into ``folder`` (with ``dump``, also the dump,
    program.json and cost_analysis.json). Returns (seconds per step, steps traced)."""
    import tempfile

    import jax
    compiled, args, feed = compile_program(name, folder if dump else None)
    if dump:
        p = PROGRAMS[name]
        with open(os.path.join(folder, "cost_analysis.json"), "w") as f:
            json.dump(cost_analysis_of(compiled), f, indent=1, sort_keys=True)
        meta = dict(name=name, family=p.family, library=p.library, dtype=p.dtype,
                    mode=p.mode, description=p.description, builder=p.builder,
                    kwargs={k: v for k, v in p.kwargs.items()}, base=p.base or name,
                    config=p.config or "default",
                    compiler_options=CONFIGS.get(p.config, {}),
                    jax=jax.__version__)
        with open(os.path.join(folder, "program.json"), "w") as f:
            json.dump(meta, f, indent=1)
    # warm up (page in, thread pools): two steps, the second one timed
    args, out, _ = run_steps(compiled, args, feed, None, 1)
    args, out, per_step = run_steps(compiled, args, feed, out, 1)
    steps = int(min(12, max(3, round(0.5 / max(per_step, 1e-4)))))
    with tempfile.TemporaryDirectory(dir=folder, prefix=".session-") as tmp:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            args, out, _ = run_steps(compiled, args, feed, out, steps)
        # <folder>/trace/plugins/profile/<session>: a new session beside earlier rounds'
        dest = os.path.join(folder, "trace", "plugins", "profile")
        os.makedirs(dest, exist_ok=True)
        for session in sorted(os.listdir(os.path.join(tmp, "plugins", "profile"))):
            target = os.path.join(dest, session)
            k = 1
            while os.path.exists(target):
                k += 1
                target = os.path.join(dest, f"{session}_{k}")
            shutil.move(os.path.join(tmp, "plugins", "profile", session), target)
    del compiled, args, out
    return per_step, steps


def use_cache(jax) -> None:
    """Every compile in a child goes through JAX's persistent cache (CACHE)."""
    jax.config.update("jax_compilation_cache_dir", CACHE)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def child_env() -> dict[str, str]:
    """A child's environment: CPU only, no XLA_FLAGS of the caller's (each compile passes
    its own options)."""
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def child(names: list[str], dump: bool, deadline: float) -> None:
    """Runs inside the child process: one session of each program, in order, stopping
    before a program once past ``deadline`` (epoch seconds)."""
    import gc

    import jax
    use_cache(jax)
    for name in names:
        if time.time() > deadline:
            print(json.dumps({"name": name, "skipped": "budget"}), flush=True)
            continue
        t0 = time.perf_counter()
        final = os.path.join(OUT, name)
        folder = os.path.join(OUT, f".tmp-{name}-{os.getpid()}") if dump else final
        try:
            if dump:
                shutil.rmtree(folder, ignore_errors=True)
                os.makedirs(folder)
            per_step, steps = _session(name, folder, dump)
            if dump and not dumped(folder):
                # loaded from the persistent cache (an earlier run): compile for the dump
                shutil.rmtree(folder)
                os.makedirs(folder)
                jax.config.update("jax_enable_compilation_cache", False)
                try:
                    per_step, steps = _session(name, folder, dump)
                finally:
                    jax.config.update("jax_enable_compilation_cache", True)
            if dump:
                prune(folder)
                modules = dumped(folder)
                if len(modules) != 1:
                    raise RuntimeError(f"{len(modules)} optimized modules in the dump")
                os.rename(folder, final)
            # the 1-minute load average: a session under contention times other kernels
            print(json.dumps({"name": name, "secs": time.perf_counter() - t0,
                              "step_ms": per_step * 1e3, "steps": steps,
                              "load": os.getloadavg()[0]}), flush=True)
        except Exception as e:   # one broken program never stops the rest
            if dump:
                shutil.rmtree(folder, ignore_errors=True)
            print(json.dumps({"name": name, "error": f"{type(e).__name__}: {e}"[:2000]}),
                  flush=True)
        jax.clear_caches()
        gc.collect()
