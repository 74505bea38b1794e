"""Run a user's JAX script under the profiler (the child process of ``profile``).

    python -m compiler_bridge.perf.profile_runner TRACE_DIR SCRIPT.py [ARGS...]

The script runs as ``__main__`` (``runpy``), with ``sys.argv`` and ``sys.path[0]`` as if
started directly, inside ``jax.profiler.trace(TRACE_DIR, create_perfetto_trace=True)``.
XLA_FLAGS (the dump flags) are set by the parent. The trace is written even when the
script raises or calls ``sys.exit``; the script's exit code is ours. Before the trace
ends, the work the script dispatched is waited for (it may never wait for its results).
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m compiler_bridge.perf.profile_runner TRACE_DIR SCRIPT.py [ARGS...]",
              file=sys.stderr)
        return 2
    trace_dir, script, args = argv[0], os.path.abspath(argv[1]), argv[2:]
    import jax
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(script))
    code = 0
    with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, file=sys.stderr)
        except BaseException:   # report, keep the trace, exit non-zero
            traceback.print_exc()
            code = 1
        finally:
            _wait_for_dispatched(jax)
    return code


def _wait_for_dispatched(jax) -> None:
    """Wait, still inside the trace, for the work the script dispatched (JAX dispatches
    asynchronously: a script that never waits for its results ends before its programs
    run, and the trace would hold none of their ops)."""
    for a in jax.live_arrays():
        try:
            a.block_until_ready()
        except Exception:       # a deleted or failed array: the trace keeps what ran
            continue


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
