"""Write real JAX programs' dumps and profiler traces into ``generated/traced/`` (git-ignored):
the corpus the runtime benchmark (``bench/accuracy/runtime_bench.py``) and ``python -m
compiler_bridge train`` learn and test on, beside the two committed sample traces.

The corpus (``bench/corpus/traced_programs.py``): its plain-JAX families (``_PLAIN``) and the
families of ``bench/corpus/families/``, written with Flax (Linen and NNX), Equinox and Optax —
ResNet, ViT, GPT (scan over layers and unrolled), U-Net, MLP-Mixer, GNN, LSTM/GRU under scan,
recommender embeddings, diffusion, VAE, optimizer updates, solvers (CG, Newton, RK4, HMC),
attention variants, conv1d audio, normalization layers, MoE routing, FFT — each in several
sizes, float32 and bfloat16, training step and inference (``--list``). Random weights only:
parameters come from ``jax.eval_shape`` filled by NumPy, so nothing but the step is compiled.
Each program's folder holds an ordinary dump (the app opens it as is), ``trace/`` with one
profiling session per round, ``program.json`` (name, family, library, dtype, mode,
description, base program and configuration) and ``cost_analysis.json`` (XLA's
``compiled.cost_analysis()`` of the dumped compile).

How it runs (2 shared cores): programs run in batches inside child processes
(``JAX_PLATFORMS=cpu``; one interpreter start per batch, not per program). Each program is
compiled with ``jax.jit(...).lower(...).compile(compiler_options=...)``: XLA debug options are
per compilation, so the dump round passes ``xla_dump_to=<folder>`` for that program's compile
alone and a configuration variant passes its own options, all in one process. Per program and
session: compile (a later round loads the same executable from JAX's persistent cache in
``generated/traced/.jax-cache``, whose key leaves out the dump options), two warm-up steps,
then enough steps for ~0.5 s (3-12) under ``jax.profiler.trace``; the session lands in
``<folder>/trace/plugins/profile/``. Wall time on 2 shared cores: BENCHMARKS.md.

Measurements are taken in ``--rounds`` rounds: round 1 dumps and traces every program into a
temporary folder renamed into place when complete (a reader never sees half a program), each
later round adds one more profiling session per program, in a rotated order, minutes after
the first. Why: these 2 cores are shared with other jobs, and re-measuring a program a minute
later moves its kernels' medians by 10-70% (DESIGN.md section 4: contention, page faults), far
more than the spread between runs of one session. The label is the median over every run, and
more sessions buy more than a quiet machine does: 7 per program (the default) put two halves of
a program's runs within 0.8-1.25 of each other for 85% of programs, 3 for 72% (BENCHMARKS.md).

Step times (issue 15, point 5): profiling sessions taken minutes apart disagree by up to 3x
on a program's step time, more than most configurations of one program differ, and the
profiler changes what it measures. So, once every configuration of a base program has its
folder, all of them are compiled in one child process and run in turn, round after round
(``--step-rounds``, a rotated order each round), timed by the wall clock without the
profiler; every other program likewise, in groups of 8 across families. That is one run;
``--step-runs`` (2) runs per group, a pass over all groups apart, because two runs disagree
more than the rounds of one run do. Each folder gets ``step_times.json``: its runs, the
median over all their rounds, and the medians of even and odd runs (the noise floor).
``bench/accuracy/runtime_bench.py`` ranks configurations by these and compares every program's
predicted module time with its own.

Cached and bounded: a program whose folder already holds ``--rounds`` sessions is skipped; a
folder missing is dumped first; ``--budget-min N`` stops cleanly between programs once N
minutes have passed (run again to continue); ``--chunk i/n`` takes one n-th of every
family's programs, ``--family a,b`` whole families; the order interleaves families, so a
partial run covers them all.

Configurations (issue 15, point 5): ``CONFIGS`` compile the same program with XLA options
that change the optimized HLO; ``<base>@<config>`` is a program of its own (same family as its
base) for ``CONFIG_BASES``. Checked on jax 0.10.2 / CPU (the after-optimizations HLO
compared with the default compile's):

- works (the optimized HLO differs; ``CONFIGS``): ``xla_cpu_use_fusion_emitters=false``
  (fusions emitted the legacy way: other fusion kinds and kernel boundaries);
  ``xla_disable_hlo_passes=`` ``fusion`` (no instruction fusion: ~2.4x the kernels),
  ``dot-library-rewriter`` (dots stay HLO dots, fused with their neighbours: fewer kernels),
  ``cse``, ``reshape-mover``, ``cpu-parallel-task-assigner`` (kernels not split into
  parallel tasks: same instructions, other backend configs and one thread per kernel);
- works but only on some programs: ``transpose-folding`` (attention: the transposes feeding
  dots stay; a conv net's HLO is unchanged); ``algsimp`` changes everything (2-4x the
  instructions, an unrealistic compile) and is left out;
- compiles but the optimized HLO is identical (codegen-only or not a CPU pass):
  ``xla_cpu_enable_fast_math``, ``xla_cpu_prefer_vector_width=128``,
  ``xla_llvm_disable_expensive_passes``, ``xla_cpu_parallel_codegen_split_count``,
  ``xla_cpu_enable_concurrency_optimized_scheduler=false``, ``xla_cpu_use_onednn``,
  ``xla_cpu_use_xnnpack``, disabling ``multi_output_fusion``;
- layouts (JAX's layout API, ``jax.experimental.layout.Format``/``Layout`` as the jit's
  in/out shardings) work on CPU: ``colmajor`` gives every argument and result of rank >= 2
  a column-major layout (XLA adds copies/transposes at the edges and picks other layouts
  inside: e.g. 78 -> 160 copies in ``attn_m``).

    .venv/bin/python -m bench.corpus.make_traced_programs                 # all (see BENCHMARKS.md)
    .venv/bin/python -m bench.corpus.make_traced_programs --chunk 1/4 --budget-min 20
    .venv/bin/python -m bench.corpus.make_traced_programs --family vit,gnn --rounds 2
    .venv/bin/python -m bench.corpus.make_traced_programs mlp_s attn_m    # some
    .venv/bin/python -m bench.corpus.make_traced_programs --list

This module is the driver; a program's session runs in ``traced_session``, the step times
in ``step_timing`` (each in child processes of this module).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from bench.common import ROOT
from bench.corpus import traced_session as S
from bench.corpus.step_timing import (STEP_ROUNDS, STEP_RUNS, run_step_times, step_groups,
                                      step_times_child)
from bench.corpus.traced_programs import PROGRAMS


def clean_leftovers(names: list[str]) -> None:
    """Temporary folders of runs that were killed (a finished run leaves none): a dump
    folder ``.tmp-<name>-<pid>`` whose process is gone, a ``.session-*`` in a program."""
    if not os.path.isdir(S.OUT):
        return
    for entry in os.listdir(S.OUT):
        if entry.startswith(".tmp-"):
            pid = entry.rsplit("-", 1)[-1]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                shutil.rmtree(os.path.join(S.OUT, entry), ignore_errors=True)
    for name in names:
        folder = os.path.join(S.OUT, name)
        if os.path.isdir(folder):
            for entry in os.listdir(folder):
                path = os.path.join(folder, entry)
                # a session takes seconds: one this old belongs to no live run
                if entry.startswith(".session-") and time.time() - os.path.getmtime(path) > 600:
                    shutil.rmtree(path, ignore_errors=True)




def _run_batch(names: list[str], dump: bool, deadline: float) -> list[dict]:
    """One child process for a batch of programs; its JSON lines are the results (its other
    output, merged so that neither pipe can fill and block it, is kept for errors)."""
    env = S.child_env()
    cmd = [sys.executable, "-m", "bench.corpus.make_traced_programs", "--child", json.dumps(
        {"names": names, "dump": dump, "deadline": deadline})]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    results: list[dict] = []
    other: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("{"):
            results.append(json.loads(line))
            _report(results[-1], dump)
        else:
            other = (other + [line])[-40:]
    if proc.wait() != 0:
        print(f"child failed with exit code {proc.returncode}: {''.join(other)[-2000:]}",
              flush=True)
    return results


def _report(r: dict, dump: bool) -> None:
    what = "dump+trace" if dump else "trace"
    if "error" in r:
        print(f"  [{r['name']}] FAILED: {r['error']}", flush=True)
    elif "skipped" not in r:
        print(f"  [{r['name']}] {what} {r['secs']:5.1f} s (step {r['step_ms']:.1f} ms x "
              f"{r['steps']}, load {r.get('load', float('nan')):.1f})", flush=True)


def select(args) -> list[str]:
    names = args.names or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        raise SystemExit(f"unknown programs: {', '.join(unknown)} (see --list)")
    if args.family:
        fams = set(args.family.split(","))
        bad = fams - {p.family for p in PROGRAMS.values()}
        if bad:
            raise SystemExit(f"unknown families: {', '.join(sorted(bad))} (see --list)")
        names = [n for n in names if PROGRAMS[n].family in fams]
    if not args.configs:
        names = [n for n in names if not PROGRAMS[n].config]
    # families interleaved (each family's first program, then each one's second, ...): a
    # partial run covers every family; chunk i/n takes the family's programs whose rank,
    # shifted by the family's index, is i - 1 modulo n (a family of >= n programs is in
    # every chunk)
    rank: dict[str, int] = {}
    seen: dict[str, int] = {}
    for n in names:
        fam = PROGRAMS[n].family
        rank[n] = seen.get(fam, 0)
        seen[fam] = rank[n] + 1
    names = sorted(names, key=lambda n: rank[n])
    if args.chunk:
        parts = args.chunk.split("/")
        if len(parts) != 2 or not all(x.isdigit() for x in parts) \
                or not 1 <= int(parts[0]) <= int(parts[1]):
            raise SystemExit(f"--chunk {args.chunk}: expected i/n with 1 <= i <= n")
        i, k = int(parts[0]), int(parts[1])
        index = {f: j for j, f in enumerate(seen)}
        names = [n for n in names if (rank[n] + index[PROGRAMS[n].family]) % k == i - 1]
    return names


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="programs to make (default: all)")
    p.add_argument("--rounds", type=int, default=7,
                   help="profiling sessions per program, taken in rounds over all programs")
    p.add_argument("--family", help="only these families (comma-separated)")
    p.add_argument("--chunk", help="i/n: every n-th program starting at the i-th")
    p.add_argument("--no-configs", dest="configs", action="store_false",
                   help="leave out the configuration variants (<base>@<config>)")
    p.add_argument("--budget-min", type=float, default=None,
                   help="stop cleanly between programs after this many minutes")
    p.add_argument("--batch", type=int, default=16, help="programs per child process")
    p.add_argument("--list", action="store_true")
    p.add_argument("--step-rounds", type=int, default=STEP_ROUNDS,
                   help="rounds of the interleaved step-time measurement of each group "
                        "of programs (0: none)")
    p.add_argument("--step-runs", type=int, default=STEP_RUNS,
                   help="such measurements per group, each a pass over all groups after "
                        "the last")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--step-child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        job = json.loads(args.child)
        S.child(job["names"], job["dump"], job["deadline"])
        return 0
    if args.step_child:
        job = json.loads(args.step_child)
        step_times_child(job["members"], job["rounds"])
        return 0
    if args.list:
        fams: dict[str, int] = {}
        for name, prog in PROGRAMS.items():
            fams[prog.family] = fams.get(prog.family, 0) + 1
            print(f"{name:34s} {prog.family:14s} {prog.library:11s} {prog.description}")
        print(f"{len(PROGRAMS)} programs, {len(fams)} families")
        return 0
    names = select(args)
    clean_leftovers(names)
    start = time.time()
    deadline = start + 60 * args.budget_min if args.budget_min else float("inf")
    made = failed = 0
    for r in range(max(args.rounds, 1)):
        shift = (r * 7) % max(len(names), 1)
        order = names[shift:] + names[:shift]
        todo = [n for n in order if S.sessions_of(n) < r + 1]
        dump = [n for n in todo if S.sessions_of(n) < 0]
        more = [n for n in todo if n not in dump]
        print(f"round {r + 1}/{args.rounds}: {len(dump)} to dump, {len(more)} to trace again",
              flush=True)
        for group, is_dump in ((dump, True), (more, False)):
            for i in range(0, len(group), args.batch):
                if time.time() > deadline:
                    break
                for res in _run_batch(group[i:i + args.batch], is_dump, deadline):
                    made += "secs" in res
                    failed += "error" in res
        if time.time() > deadline:
            print(f"budget of {args.budget_min} min spent: stopping (run again to continue)")
            break
    timed = 0
    # each pass adds one run to every group short of --step-runs: a group's runs are a pass
    # over all groups apart
    for run in range(args.step_runs if args.step_rounds > 0 and time.time() <= deadline
                     else 0):
        for base, members in step_groups(names, run + 1).items():
            if time.time() > deadline:
                break
            t0 = time.time()
            got = run_step_times(members, args.step_rounds)
            timed += len(got) == len(members)
            print(f"  [{base}] step times of {len(got)} programs, interleaved "
                  f"(run {run + 1}, {args.step_rounds} rounds) in {time.time() - t0:.0f} s: "
                  + ", ".join(f"{r['name'].split('@')[-1]} {r['step_us'] / 1e3:.2f} ms"
                              for r in got), flush=True)
        if time.time() > deadline:
            print(f"budget of {args.budget_min} min spent: stopping (run again to continue)")
            break
    done = sum(1 for n in names if S.sessions_of(n) >= args.rounds)
    print(f"{made} sessions made, {failed} failed, {done}/{len(names)} programs complete "
          f"({args.rounds} sessions), {timed} groups' step-time runs "
          f"in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
