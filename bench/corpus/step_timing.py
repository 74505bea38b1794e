"""Step times of the traced programs measured together: the programs of a group (a base
program and its configurations, or programs of several families) run in turn in one child
process, round after round; each one's median and two halves (the noise floor) go to its
``step_times.json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

from bench.common import ROOT
from bench.corpus import traced_session as S
from bench.corpus.traced_programs import CONFIG_BASES, CONFIGS, compile_program

STEP_ROUNDS = 15         # rounds of the interleaved step-time measurement
STEP_RUNS = 2            # such measurements per group, a pass over all groups apart
ROUND_SECONDS = 0.03     # each configuration runs this long (at least 3 steps) per round
STEP_TIMES = "step_times.json"


def step_record(runs: list[dict]) -> dict:
    """``step_times.json`` from its measurement runs: the median over every round of every
    run, and two halves for the noise floor. With two runs or more the halves are whole
    runs (even and odd runs): two runs minutes or hours apart disagree more than the rounds
    of one run do (a machine's speed drifts), and that is the noise a ranking must beat;
    with one run, its even and odd rounds."""
    every = [t for r in runs for t in r["rounds_us"]]
    if len(runs) >= 2:
        halves = [[t for r in runs[0::2] for t in r["rounds_us"]],
                  [t for r in runs[1::2] for t in r["rounds_us"]]]
    else:
        halves = [every[0::2], every[1::2]]
    return {"median_us": float(np.median(every)),
            "halves_us": [float(np.median(h)) for h in halves],
            "halves_by": "runs" if len(runs) >= 2 else "rounds",
            "runs": runs}


def _earlier_runs(name: str) -> list[dict]:
    """The runs already in ``step_times.json`` (a record of the first format, one run's
    rounds at its top level, counts as one run)."""
    try:
        with open(os.path.join(S.OUT, name, STEP_TIMES), encoding="utf-8") as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return []
    if not isinstance(rec, dict):
        return []
    if "runs" in rec:
        return list(rec["runs"])
    if "rounds_us" in rec:
        return [{k: rec[k] for k in ("rounds_us", "steps_per_round", "measured_with")
                 if k in rec}]
    return []


def step_runs_of(name: str) -> int:
    """Step-time measurement runs in a program's ``step_times.json`` (0: none)."""
    return len(_earlier_runs(name))


def step_times_child(members: list[str], rounds: int) -> None:
    """Runs inside the child process: the wall time per step of every program of one group
    (a base program's configurations, or programs of several families), measured
    together. Profiling sessions taken minutes apart disagree by up to 3x on a step's time
    (on a quiet machine too), far more than most configurations differ, so the members
    here run in turn, round after round (a rotated order each round), and each one's time
    is its median over the rounds. Adds this run to ``step_times.json`` in each member's
    folder."""
    import jax
    S.use_cache(jax)
    state: dict[str, list] = {}
    for name in members:
        try:
            compiled, args, feed = compile_program(name)
            # warm up as a session does: two steps, the second one timed
            args, out, _ = S.run_steps(compiled, args, feed, None, 1)
            args, out, per_step = S.run_steps(compiled, args, feed, out, 1)
        except Exception as e:   # one broken program never stops the rest of its group
            print(json.dumps({"name": name, "error": f"{type(e).__name__}: {e}"[:2000]}),
                  flush=True)
            continue
        reps = int(min(50, max(3, round(ROUND_SECONDS / max(per_step, 1e-6)))))
        state[name] = [compiled, args, feed, out, reps]
    members = [m for m in members if m in state]
    per_round: dict[str, list[float]] = {n: [] for n in members}
    for r in range(rounds):
        shift = r % len(members)
        for name in members[shift:] + members[:shift]:
            compiled, args, feed, out, reps = state[name]
            args, out, per_step = S.run_steps(compiled, args, feed, out, reps)
            per_round[name].append(per_step * 1e6)
            state[name][1], state[name][3] = args, out
    finished = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for name in members:
        run = {"rounds_us": per_round[name], "steps_per_round": state[name][4],
               "measured_with": [m for m in members if m != name],
               "finished": finished, "load": os.getloadavg()[0]}
        record = step_record(_earlier_runs(name) + [run])
        record.update(method="wall time per step (after block_until_ready), no profiler; "
                             "the programs of one group run in turn, in a rotated "
                             f"order, {rounds} rounds per run; median over every round of "
                             "every run; halves = even/odd runs (one run: even/odd rounds)",
                      jax=jax.__version__)
        with open(os.path.join(S.OUT, name, STEP_TIMES), "w") as f:
            json.dump(record, f, indent=1)
        print(json.dumps({"name": name, "step_us": float(np.median(per_round[name])),
                          "runs": len(record["runs"]),
                          "halves_us": record["halves_us"]}), flush=True)


STEP_GROUP = 8           # programs run in turn in one step-time measurement


def step_groups(names: list[str], runs: int = 1) -> dict[str, list[str]]:
    """Groups of programs among ``names`` whose step times are measured together, each
    whose members all have a finished folder and not all ``runs`` step-time runs yet:
    a base program and its configurations (key: the base), then the other programs in
    groups of STEP_GROUP in ``names``' order, which interleaves families (key:
    ``group-<i>``)."""
    groups: dict[str, list[str]] = {}
    chosen = set(names)
    taken: set[str] = set()
    for base in CONFIG_BASES:
        members = [base] + [f"{base}@{c}" for c in CONFIGS]
        taken.update(members)
        if all(m in chosen and S.sessions_of(m) >= 1 for m in members):
            groups[base] = members
    rest = [n for n in names if n not in taken and S.sessions_of(n) >= 1]
    for i in range(0, len(rest), STEP_GROUP):
        groups[f"group-{i // STEP_GROUP + 1}"] = rest[i:i + STEP_GROUP]
    return {k: ms for k, ms in groups.items() if not all(step_runs_of(m) >= runs for m in ms)}


def run_step_times(members: list[str], rounds: int) -> list[dict]:
    env = S.child_env()
    cmd = [sys.executable, "-m", "bench.corpus.make_traced_programs", "--step-child",
           json.dumps({"members": members, "rounds": rounds})]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    for r in results:
        if "error" in r:
            print(f"  [{r['name']}] step times FAILED: {r['error']}", flush=True)
    results = [r for r in results if "error" not in r]
    if proc.returncode != 0:
        print(f"  step times of {members[0]} failed (exit code {proc.returncode}): "
              f"{proc.stdout[-2000:]}", flush=True)
    return results
