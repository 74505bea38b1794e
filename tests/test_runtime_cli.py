"""`python -m compiler_bridge runtimes|profile|train` as scripts use them."""

from __future__ import annotations

import glob
import json
import os
import textwrap

import pytest

from compiler_bridge import open_dump
from compiler_bridge.perf import measure

from tests.support.cli import run
from conftest import ROOT, sample


def trace_file(name: str) -> str:
    return glob.glob(os.path.join(sample(name), "trace", "plugins", "profile", "*",
                                  "perfetto_trace.json.gz"))[0]


def test_runtimes_json_schema(tmp_path):
    p = run("runtimes", sample("scan_while"), "--json", "--roofline", tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["predictor"] == "roofline" and out["modules"] == [{"id": "0000",
                                                                  "name": "jit_step"}]
    for k in out["kernels"]:
        assert {"module", "instruction", "measured_us", "predicted_us", "flops",
                "bytes"} <= set(k)
        assert k["module"] == "jit_step" and k["predicted_us"] > 0
    measured = [k for k in out["kernels"] if k["measured_us"] is not None]
    assert len(measured) == 27
    m = out["metrics"]
    assert {"kendall_tau", "spearman", "median_ape", "top10_recall", "matched_events",
            "unmatched_events", "time_weighted_ape", "noise_floor"} <= set(m)
    assert m["matched_events"] == 819 and m["unmatched_events"] == 0
    assert -1 <= m["kendall_tau"] <= 1 and set(m["noise_floor"]) >= {"kendall_tau"}


def test_runtimes_text_output(tmp_path):
    p = run("runtimes", sample("transformer"), "--top", "5", tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert "kendall_tau" in p.stdout and "noise floor" in p.stdout
    assert "430 matched, 0 unmatched" in p.stdout


def test_executions_per_step_from_the_hlo_are_what_the_profiler_counted(tmp_path):
    """Each kernel's executions per step, read from its loops' trip counts in the HLO,
    equal the profiler's count of its events per step; a loop the HLO gives no trip
    count for (scan_while's data-dependent while) is flagged, and the step time then
    uses the profiler's count. The CLI prints the step, predicted and measured."""
    from compiler_bridge.perf import runtime_report
    d = open_dump(sample("scan_while"))
    r = runtime_report(d, auto_model=False, device="cpu")
    rows = [x for x in r.rows if x.executions_per_run is not None]
    known = [x for x in rows if x.runs_known]
    assert [(x.instruction, x.runs_per_step) for x in known] == \
        [(x.instruction, x.executions_per_run) for x in known]
    assert {x.runs_per_step for x in known} >= {1.0, 16.0}     # the scan: 16 trips
    guessed = [x for x in rows if not x.runs_known]
    assert guessed and all(x.executions_per_run != x.runs_per_step for x in guessed)
    step = r.step_time(d.main.id)
    # exact: the guessed loop's kernels were measured, the unmeasured ones' counts known
    assert step.exact and all(x.runs_known for x in r.rows if x.executions_per_run is None)
    # fitted to the trace: the step sums expected times (fitted x smearing), and says
    # what the fitted times alone sum to
    assert step.predicted_us == pytest.approx(sum(
        x.expected_us * (x.executions_per_run or x.runs_per_step) for x in r.rows))
    assert step.median_fit_us == pytest.approx(sum(
        x.predicted_us * (x.executions_per_run or x.runs_per_step) for x in r.rows))
    assert step.measured_us == measure(d).module(d.main.id).step_median_us
    untraced = runtime_report(open_dump(sample("cond_switch")), auto_model=False)
    guess = untraced.step_time(untraced.modules[0][0])
    assert not guess.exact and "no trip count" in guess.caveat and guess.measured_us is None
    p = run("runtimes", sample("scan_while"), "--roofline", "--device", "cpu",
            tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("step of module 0000"))
    assert "predicted" in line and "measured" in line and "an estimate" not in line
    out = json.loads(run("runtimes", sample("scan_while"), "--roofline", "--device", "cpu",
                         "--json", tmp_env=str(tmp_path)).stdout)
    assert out["step_time"][0]["predicted_us"] == pytest.approx(step.predicted_us)


def test_runtimes_with_a_corrupt_trace_fails_clearly(tmp_path):
    bad = tmp_path / "perfetto_trace.json.gz"
    bad.write_bytes(open(trace_file("scan_while"), "rb").read()[:5000])
    p = run("runtimes", sample("scan_while"), "--trace", str(bad), "--json",
            tmp_env=str(tmp_path))
    assert p.returncode == 1
    assert f"{bad}: not a readable trace: truncated gzip" in p.stderr
    out = json.loads(p.stdout)          # predictions still come out
    assert out["trace_error"] and all(k["measured_us"] is None for k in out["kernels"])
    assert out["metrics"]["kendall_tau"] is None and out["metrics"]["matched_events"] == 0


def test_runtimes_with_a_trace_of_another_program(tmp_path):
    p = run("runtimes", sample("transformer"), "--trace", trace_file("scan_while"),
            tmp_env=str(tmp_path))
    assert p.returncode == 1 and "another program" in p.stderr


def test_runtimes_without_a_trace_predicts_only(tmp_path):
    p = run("runtimes", sample("mlp_train"), "--json", tmp_env=str(tmp_path))
    assert p.returncode == 0
    out = json.loads(p.stdout)
    assert out["kernels"] and "no profiler trace" in out["trace_error"]


def test_train_then_predict_with_the_model(tmp_path):
    model = tmp_path / "model"
    p = run("train", sample("scan_while"), sample("transformer"), "--out", str(model),
            "--steps", "20", "--seeds", "1", "--device", "cpu", tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "model.npz").exists() and (tmp_path / "model.json").exists()
    p = run("runtimes", sample("scan_while"), "--model", str(tmp_path / "model.npz"), "--json",
            tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["predictor"] == "learned" and "roofline" in out["metrics"]


def test_a_new_user_gets_the_default_model_then_fine_tunes_it(tmp_path):
    """No model of their own and no calibrated profile: `runtimes DUMP --trace T` predicts
    with the default model shipped with HLO Lens, after a quick calibration that is kept;
    `train` then starts from the default model's weights."""
    meta = json.loads(open(os.path.join(ROOT, "compiler_bridge", "perf", "models",
                                        "default-cpu.json"), encoding="utf-8").read())
    n, m = len(meta["programs"]), len(meta["families"])
    p = run("runtimes", sample("transformer"), "--trace", trace_file("transformer"),
            tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert f"predicted by: default model — trained on {n} programs of {m} families" in p.stdout
    assert "measured it on first use" in p.stdout
    assert (tmp_path / "device.json").exists()
    p = run("runtimes", sample("transformer"), "--json", tmp_env=str(tmp_path))
    out = json.loads(p.stdout)
    assert out["predictor"] == "learned" and out["predictor_detail"].startswith("default model")
    assert not any("first use" in n for n in out["notes"])        # the profile was kept
    assert out["metrics"]["roofline"]["kendall_tau"] is not None
    p = run("train", sample("scan_while"), "--out", str(tmp_path / "mine"), "--steps", "20",
            tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert f"fine-tuned the default model — trained on {n} programs" in p.stdout
    mine = json.loads((tmp_path / "mine.json").read_text())
    assert mine["programs"] == ["scan_while"] and "default" not in mine
    assert mine["fine_tuned_from"]["programs"] == meta["programs"]


def test_a_stale_saved_model_falls_back_to_the_roofline_and_says_why(tmp_path):
    """The model the app finds on its own (the default path) made by an older HLO Lens:
    predictions come from the roofline, with a note, not an error."""
    p = run("train", sample("scan_while"), sample("transformer"), "--out",
            str(tmp_path / "cost-model-cpu.npz"), "--steps", "5", "--seeds", "1",
            "--device", "cpu", tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    p = run("runtimes", sample("scan_while"), "--json", tmp_env=str(tmp_path))
    assert json.loads(p.stdout)["predictor"] == "learned"       # found on its own
    meta = json.loads((tmp_path / "cost-model-cpu.json").read_text())
    meta["numeric"] = meta["numeric"][:-1]                      # an older feature set
    (tmp_path / "cost-model-cpu.json").write_text(json.dumps(meta))
    p = run("runtimes", sample("scan_while"), "--json", tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["predictor"] == "roofline"
    assert any("saved cost model not used" in n and "train it again" in n
               for n in out["notes"])


def test_profile_runs_a_script_and_writes_a_dump_with_a_trace(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys
        import numpy as np
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(x, w):
            return jnp.tanh(x @ w).sum(axis=0)

        x = np.ones((16, 32), np.float32)
        w = np.ones((32, 8), np.float32) * float(sys.argv[1])
        for _ in range(3):
            jax.block_until_ready(step(x, w))
    """))
    out = tmp_path / "dump"
    p = run("profile", str(script), "0.5", "--out", str(out), tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    dump = open_dump(out)
    assert dump.main is not None and dump.main.name == "jit_step"
    assert any(f.kind == "trace" for f in dump.traces)
    m = measure(dump)
    assert m.matched_events > 0 and m.unmatched_events == 0
    assert "per-op events matched" in p.stdout


def test_profile_passes_the_scripts_exit_code(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.exit(3)\n")
    p = run("profile", "--out", str(tmp_path / "d"), str(script), tmp_env=str(tmp_path))
    assert p.returncode == 3 and "exited with code 3" in p.stderr


@pytest.mark.parametrize("argv, out, rest", [
    (["a", "--out", "D"], "D", ["a"]),
    (["a", "--out=D"], "D", ["a"]),
    (["--out", "D", "--", "a", "--out", "X"], "D", ["a", "--out", "X"]),
])
def test_profile_out_may_come_last(argv, out, rest):
    import argparse
    from compiler_bridge.perf.cli import _split_out
    assert _split_out(argparse.Namespace(args=argv, out=None)) == (out, rest)


def test_runtimes_with_one_broken_session_of_two_reports_the_rest_and_fails(tmp_path):
    """A dump with two profiling sessions, one of them truncated: the report is of the
    readable one and the command exits 1 naming each file it could not read (README:
    a file that does not parse is an input problem), not 0 with a note on stdout."""
    from tests.support.samples import with_broken_session
    dump, bad = with_broken_session(tmp_path)
    p = run("runtimes", str(dump), "--roofline", "--json", tmp_env=str(tmp_path))
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert out["metrics"]["matched_events"] == 819      # the readable session, whole
    for f in glob.glob(os.path.join(bad, "*")):
        name = os.path.relpath(f, dump)
        assert f"error: {name}: not a readable" in p.stderr


@pytest.mark.parametrize("name", ["vm.xplane.pb", "perfetto_trace.json.gz"])
def test_runtimes_with_an_empty_trace_file_says_it_is_empty(tmp_path, name):
    """An empty trace file (a profile cut short) is named as empty, not as a trace of a
    JAX version that records no per-op events (what an empty xplane.pb read as)."""
    empty = tmp_path / name
    empty.write_bytes(b"")
    p = run("runtimes", sample("scan_while"), "--trace", str(empty), "--roofline",
            tmp_env=str(tmp_path))
    assert p.returncode == 1
    assert f"error: {empty}: not a readable trace: the file is empty" in p.stderr
    assert "per-op events" not in p.stderr


def test_profile_times_a_script_that_never_waits_for_its_results(tmp_path):
    """JAX dispatches asynchronously: a script that never calls block_until_ready ended
    before its program ran, and the trace held none of its ops (the main module had no
    events). The work the script dispatched is waited for inside the trace."""
    script = tmp_path / "nowait.py"
    script.write_text(textwrap.dedent("""
        from functools import partial
        import jax
        import jax.numpy as jnp

        @partial(jax.jit, donate_argnums=0)
        def step(x):
            return jnp.tanh(x) @ jnp.ones((128, 128))

        x = jnp.ones((128, 128))
        for _ in range(6):
            x = step(x)
    """))
    out = tmp_path / "dump"
    p = run("profile", str(script), "--out", str(out), tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    dump = open_dump(out)
    assert dump.main is not None and dump.main.name == "jit_step"
    timings = measure(dump).module(dump.main.id)
    assert timings is not None and len(timings.runs) == 6     # the script's six calls


def test_one_profiles_two_files_given_as_traces_are_read_once(tmp_path):
    """A profile's perfetto JSON and its xplane.pb hold the same runs: given both (or one
    file twice), each run was counted twice, and the two copies made the noise floor
    perfect (Kendall tau 1, APE 0). They are read once, and a note says so."""
    session = os.path.dirname(trace_file("scan_while"))
    one = json.loads(run("runtimes", sample("scan_while"), "--roofline", "--json",
                         "--trace", trace_file("scan_while"), tmp_env=str(tmp_path)).stdout)
    for second in (os.path.join(session, "vm.xplane.pb"), trace_file("scan_while")):
        p = run("runtimes", sample("scan_while"), "--roofline", "--json",
                "--trace", trace_file("scan_while"), "--trace", second, tmp_env=str(tmp_path))
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        assert out["metrics"]["matched_events"] == 819
        assert out["metrics"]["noise_floor"] == one["metrics"]["noise_floor"]
        assert any("the same runs as" in n for n in out["notes"])


def test_runtimes_takes_the_profilers_output_folder_as_a_trace(tmp_path):
    """--trace DIR, the folder jax.profiler.trace(DIR) wrote (plugins/profile/<session>/):
    its session is read as the dump's own trace is, the same 819 events of scan_while
    (it was 'cannot read the file (Is a directory)'); a folder with no trace under it is
    an error naming it, exit 1."""
    import shutil
    trace_dir = tmp_path / "elsewhere"
    shutil.copytree(os.path.join(sample("scan_while"), "trace"), trace_dir)
    own = json.loads(run("runtimes", sample("scan_while"), "--json", "--roofline",
                         tmp_env=str(tmp_path)).stdout)
    p = run("runtimes", sample("scan_while"), "--trace", str(trace_dir), "--json",
            "--roofline", tmp_env=str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["metrics"]["matched_events"] == own["metrics"]["matched_events"] == 819
    assert [k["measured_us"] for k in out["kernels"]] == \
        [k["measured_us"] for k in own["kernels"]]
    empty = tmp_path / "no_trace"
    empty.mkdir()
    p = run("runtimes", sample("scan_while"), "--trace", str(empty), "--roofline",
            tmp_env=str(tmp_path))
    assert p.returncode == 1
    assert f"{empty}: a folder with no profiler trace under it" in p.stderr
