"""``bench/corpus/make_traced_programs.py`` (``make traced``): chunks and family selection cover the
corpus, a program's folder appears whole with its family, XLA's cost analysis and one
profiling session per round, and a rerun skips what is complete (the cache)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from bench.corpus import make_traced_programs as T
from bench.corpus import step_timing as ST
from bench.corpus import traced_programs as P
from bench.corpus import traced_session as S


def _args(*argv):
    ns = {"names": [], "family": None, "chunk": None, "configs": True}
    it = iter(argv)
    for a in it:
        if a == "--family":
            ns["family"] = next(it)
        elif a == "--chunk":
            ns["chunk"] = next(it)
        elif a == "--no-configs":
            ns["configs"] = False
        else:
            ns["names"].append(a)
    return type("Args", (), ns)()


def test_chunks_partition_the_corpus_and_each_covers_the_families():
    everything = T.select(_args())
    chunks = [T.select(_args("--chunk", f"{i}/4")) for i in range(1, 5)]
    assert sorted(n for c in chunks for n in c) == sorted(everything)
    sizes: dict[str, int] = {}
    for n in everything:
        sizes[P.PROGRAMS[n].family] = sizes.get(P.PROGRAMS[n].family, 0) + 1
    for c in chunks:        # families interleaved: each with >= 4 programs in every chunk
        assert {P.PROGRAMS[n].family for n in c} >= {f for f, k in sizes.items() if k >= 4}


def test_family_selection_and_bad_input():
    names = T.select(_args("--family", "vit,gnn", "--no-configs"))
    assert names and {P.PROGRAMS[n].family for n in names} == {"vit", "gnn"}
    assert not any("@" in n for n in names)
    with pytest.raises(SystemExit, match="unknown families: nope"):
        T.select(_args("--family", "nope"))
    with pytest.raises(SystemExit, match="expected i/n"):
        T.select(_args("--chunk", "5/4"))


def test_a_program_is_dumped_traced_in_rounds_and_cached(tmp_path, monkeypatch, capsys):
    """One small program end to end in child processes: 2 rounds give one folder with one
    optimized module, program.json, cost_analysis.json and 2 sessions; a rerun adds none."""
    out = str(tmp_path / "traced")
    monkeypatch.setenv("HLOLENS_TRACED_OUT", out)
    monkeypatch.setattr(S, "OUT", out)
    assert T.main(["mlp_xs", "--rounds", "2"]) == 0
    folder = os.path.join(out, "mlp_xs")
    files = os.listdir(folder)
    assert len([f for f in files if f.endswith(".cpu_after_optimizations.txt")]) == 1
    meta = json.load(open(os.path.join(folder, "program.json")))
    assert (meta["family"], meta["mode"], meta["config"]) == ("mlp", "train", "default")
    assert json.load(open(os.path.join(folder, "cost_analysis.json")))["flops"] > 0
    assert S.sessions_of("mlp_xs") == 2
    assert not [f for f in os.listdir(out) if f.startswith(".tmp-")]
    capsys.readouterr()
    assert T.main(["mlp_xs", "--rounds", "2"]) == 0
    assert "0 sessions made" in capsys.readouterr().out and S.sessions_of("mlp_xs") == 2


def test_every_configuration_changes_the_optimized_hlo():
    """Issue 15, point 5: a configuration is only worth ranking if XLA compiles the program
    differently under it (flags that only change code generation are left out)."""
    import re

    from conftest import needs
    needs("flax")

    def optimized(name):
        compiled, _, _ = P.compile_program(name)
        return re.sub(r", metadata=\{[^}]*\}", "", compiled.as_text())

    base = optimized("mlp_m")
    same = [c for c in P.CONFIGS if optimized(f"mlp_m@{c}") == base]
    assert len(P.CONFIGS) >= 4 and not same, same


def test_configurations_step_times_are_measured_together(tmp_path, monkeypatch):
    """Issue 15, point 5: two configurations of one program timed in turn (wall clock, no
    profiler) in a child process, twice; each folder gets its median over every round of
    both runs, and the two runs' medians as the halves (the noise floor), which
    runtime_bench ranks configurations by."""
    from bench.accuracy import runtime_bench as RB
    out = str(tmp_path / "traced")
    monkeypatch.setenv("HLOLENS_TRACED_OUT", out)
    monkeypatch.setattr(S, "OUT", out)
    members = ["attn_m", "attn_m@nofusion"]
    for m in members:
        os.makedirs(os.path.join(out, m))
    got = ST.run_step_times(members, 4)
    assert sorted(r["name"] for r in got) == sorted(members)
    first = {m: json.load(open(os.path.join(out, m, ST.STEP_TIMES))) for m in members}
    assert all(r["halves_by"] == "rounds" and ST.step_runs_of(m) == 1
               for m, r in first.items())
    assert len(ST.run_step_times(members, 3)) == 2       # a second run adds to the first
    steps = RB.step_times([os.path.join(out, m) for m in members])
    assert set(steps) == set(members)
    for m in members:
        rec = json.load(open(os.path.join(out, m, ST.STEP_TIMES)))
        assert ST.step_runs_of(m) == 2 and rec["halves_by"] == "runs"
        one, two = (r["rounds_us"] for r in rec["runs"])
        assert len(one) == 4 and len(two) == 3 and one == first[m]["runs"][0]["rounds_us"]
        assert rec["runs"][1]["measured_with"] == [x for x in members if x != m]
        median, (a, b), by = steps[m]
        assert by == "runs"
        assert median == np.median(one + two)
        assert (a, b) == (np.median(one), np.median(two))
        assert 0.2 < a / b < 5          # a step of milliseconds, not a broken timer
        assert 100 < median < 1e6
    # no folder without a finished dump is timed by the driver
    assert ST.step_groups(members) == {}
