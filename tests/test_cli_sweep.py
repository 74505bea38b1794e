"""Every dump-reading command of `python -m compiler_bridge` on the same bad input and
the same archives: one exit code rule (0 ok, 1 the input has problems, 2 a usage error
such as a --module that does not exist), errors on stderr naming the path and what was
expected, and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES, sample

DUMP_COMMANDS = ("stats", "passes", "memory", "kernels", "collectives", "shardings",
                 "runtimes")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "compiler_bridge", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("command", DUMP_COMMANDS)
def test_a_folder_with_no_xla_files_exits_1_naming_it(command, tmp_path):
    """An empty folder, or one of other files: exit 1 and the expected file names, for
    every command (passes and memory exited 2 with '<name> has no modules', collectives
    and shardings exited 0 printing nothing, runtimes did not say what was expected)."""
    (tmp_path / "readme.txt").write_text("notes, not a dump\n")
    for extra in ((), ("--json",)):
        p = run(command, str(tmp_path), *extra)
        assert p.returncode == 1, (command, extra, p.stdout[:200], p.stderr)
        assert f"{tmp_path}: no XLA dump files found (expected files named " \
               "module_NNNN.<name>.*)" in p.stderr, (command, p.stderr)
        assert "Traceback" not in p.stderr


def test_kernels_on_a_missing_path_exits_1_as_every_command():
    p = run("kernels", "no-such-dump")
    assert p.returncode == 1 and "no-such-dump: no such file or folder" in p.stderr


def test_runtimes_with_a_module_that_does_not_exist_is_a_usage_error():
    """As passes, memory, kernels, collectives and shardings: exit 2 naming the modules."""
    p = run("runtimes", sample("mlp_train"), "--module", "nope")
    assert p.returncode == 2 and "no module 'nope'; modules are 0000" in p.stderr


def test_stats_reads_a_tar_xz_archive():
    """The committed per-pass archives are .tar.xz: stats read them as one HLO file
    ('binary data (NUL byte ...); expected HLO text')."""
    p = run("stats", f"{SAMPLES}/spmd_train_per_pass.tar.xz", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["main"] and out["modules"][0]["name"] == "jit_train_step"


def test_stats_on_a_zip_that_is_not_one_says_what_it_expected(tmp_path):
    bad = tmp_path / "dump.zip"
    bad.write_text("not a zip\n")
    p = run("stats", str(bad))
    assert p.returncode == 1
    assert f"{bad}: expected a dump folder, a .zip or a .tar.gz archive" in p.stderr


def test_memory_text_gives_every_byte_count_its_unit():
    """'temp 0', 'space SMEM 24' and the rows live at the peak were bare numbers."""
    p = run("memory", sample("tpu_v5e"))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "  temp             0 B" in lines
    assert "  space SMEM       24 B" in lines
    assert "  arguments        4,205,568 B (4.0 MiB)" in lines
    live = lines[lines.index(next(x for x in lines if x.endswith("live there:"))) + 1]
    assert live.split()[1] == "B", live


def test_extract_on_a_missing_file_or_a_folder_names_it_and_what_it_expected(tmp_path):
    """Not Python's '[Errno 2] No such file or directory: ...' or '[Errno 21] Is a
    directory'."""
    p = run("extract", str(tmp_path / "nope.txt"), "--computation", "x")
    assert p.returncode == 1
    assert p.stderr == f"error: {tmp_path / 'nope.txt'}: No such file or directory\n"
    p = run("extract", sample("mlp_train"), "--computation", "x")
    assert p.returncode == 1
    assert f"{sample('mlp_train')}: a folder; expected one HLO text file" in p.stderr


@pytest.mark.parametrize("folder", ("empty", "other files"))
def test_viz_render_of_a_folder_with_no_xla_files_exits_1_naming_it(folder, tmp_path):
    """It exited 2 (the usage-error code) with '<name> holds no HLO modules'."""
    if folder == "other files":
        (tmp_path / "notes.txt").write_text("not a dump\n")
    p = subprocess.run([sys.executable, "-m", "viz", "render", str(tmp_path), "--out",
                        str(tmp_path / "v.svg")], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 1
    assert f"{tmp_path}: no XLA dump files found (expected files named" in p.stderr


@pytest.mark.parametrize("command", ("passes", "memory"))
def test_json_names_the_module_by_id_too(command):
    """flags_default compiled jit_train_step twice (0000, 0002): passes and memory --json
    said only 'jit_train_step', so a script could not tell which it got; stats, kernels,
    collectives, shardings and runtimes give the id."""
    for key in ("0000", "2"):
        p = run(command, sample("flags_default"), "--module", key, "--json")
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        assert (out["id"], out["module"]) == (key.zfill(4), "jit_train_step")


@pytest.mark.parametrize("command", ("stats", "passes", "memory"))
def test_a_file_cut_short_is_an_error_and_exit_1_the_report_still_printed(command,
                                                                          tmp_path):
    """mlp_train with its after-optimizations file cut mid-line (a run killed while XLA
    wrote it): stats, passes and memory printed 'error: <file>:<line>:<col>: ...' but
    exited 0, where kernels, collectives and runtimes exit 1."""
    import shutil
    dump = tmp_path / "mlp_train"
    shutil.copytree(sample("mlp_train"), dump)
    after = next(dump.glob("module_0000.*cpu_after_optimizations.txt"))
    after.write_bytes(after.read_bytes()[:20000])
    for extra in ((), ("--json",)):
        p = run(command, str(dump), *extra)
        assert p.returncode == 1, (command, extra, p.stderr)
        assert f"error: {after.name}:289:24: unexpected end of file" in p.stderr
        assert "Traceback" not in p.stderr
        if extra:
            json.loads(p.stdout)
        else:
            assert "jit_train_step" in p.stdout


def test_compare_of_a_folder_with_no_xla_files_says_so(tmp_path):
    """It said 'no module of <A> pairs with a module of <B> (different programs?)'."""
    p = run("compare", str(tmp_path), sample("mlp_train"))
    assert p.returncode == 2      # compare's own rule (README): 2, cannot compare
    assert f"error: cannot compare: {tmp_path}: no XLA dump files found (expected files " \
           "named module_NNNN.<name>.*)" in p.stderr


def test_profile_of_a_missing_script_exits_1_as_a_missing_path_everywhere(tmp_path):
    p = run("profile", "--out", str(tmp_path / "out"), str(tmp_path / "nope.py"))
    assert p.returncode == 1 and f"{tmp_path / 'nope.py'}: no such script" in p.stderr


def test_hlolens_serve_of_a_missing_dump_says_so_before_starting(tmp_path):
    """It started the app (exit only when stopped) on a path that is not there."""
    p = subprocess.run([sys.executable, "-m", "hlolens", "serve", "--data", str(tmp_path),
                        "--port", "18759", "--dump", str(tmp_path / "nope")], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert p.stderr == f"error: {tmp_path / 'nope'}: no such file or folder\n"
    assert not (tmp_path / "app.json").exists()


def test_stats_rows_fit_80_columns_and_stay_in_line():
    """The module rows were padded to 40 + 40 columns (100+ characters for a dump of one
    jit_train_step), and a longer name (TPU's with its compile id) pushed its row's
    counts out of line with the others."""
    lines = run("stats", sample("mlp_train")).stdout.splitlines()
    assert all(len(x) <= 80 for x in lines), lines
    rows = run("stats", sample("tpu_v5e")).stdout.splitlines()[1:]
    assert len(rows) == 3
    assert len({r.index(" instructions,") - len(r.split()[3]) for r in rows}) == 1, rows


@pytest.mark.parametrize("command", ("passes", "memory", "kernels", "collectives",
                                     "shardings", "runtimes"))
def test_a_name_two_modules_share_is_a_usage_error_listing_their_ids(command):
    """flags_default compiled jit_train_step twice (0000, 0002): --module jit_train_step
    silently took the first."""
    p = run(command, sample("flags_default"), "--module", "jit_train_step")
    assert p.returncode == 2, (command, p.stderr)
    assert "2 modules are named 'jit_train_step': 0000 jit_train_step, 0002 " \
           "jit_train_step; give one's id" in p.stderr
    assert run(command, sample("flags_default"), "--module", "2").returncode == 0


@pytest.mark.parametrize("out", ("no-such-folder/v.svg", "."))
def test_viz_render_to_an_out_it_cannot_write_exits_2_naming_it(out, tmp_path):
    """It rendered, then ended in Python's traceback of FileNotFoundError (or
    IsADirectoryError) with exit 1, the input-problem code."""
    target = str(tmp_path / out)
    p = subprocess.run([sys.executable, "-m", "viz", "render", sample("mlp_train"), "--out",
                        target], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith(f"error: cannot write --out {target}: "), p.stderr


def test_viz_render_says_which_stage_it_drew_for_one_a_file_lacks(tmp_path):
    """A single file holds one stage: `--stage before_optimizations` of
    `compiled.as_text()` drew the after-optimizations text, and the default stage of a
    StableHLO file drew its conversion, neither saying so."""
    import jax
    import jax.numpy as jnp
    lowered = jax.jit(lambda x: jnp.tanh(x @ x)).lower(jnp.ones((4, 4)))
    after, mlir = tmp_path / "after.txt", tmp_path / "program.mlir"
    after.write_text(lowered.compile().as_text())
    mlir.write_text(lowered.as_text())

    def render(path, *stage: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "viz", "render", str(path), *stage,
                               "--out", str(tmp_path / "v.svg")], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    p = render(after, "--stage", "before_optimizations")
    assert p.returncode == 0, p.stderr
    assert "module 0000 jit__lambda has no before optimizations text: rendered after " \
           "optimizations" in p.stderr
    p = render(mlir)
    assert p.returncode == 0, p.stderr
    assert "has no after optimizations text: rendered its StableHLO (converted by jaxlib)" \
        in p.stderr
    for path, stage in ((after, "after_optimizations"), (mlir, "before_optimizations")):
        p = render(path, "--stage", stage)
        assert p.returncode == 0 and "has no" not in p.stderr, p.stderr


@pytest.mark.parametrize("fmt", ["svg", "dot"])
def test_viz_render_says_what_it_drew_in_the_file(fmt, tmp_path):
    """The SVG's only title was Graphviz's 'G' and the DOT named nothing; each now names
    the dump, module, stage and computation, as the app's exports do, a dump name with
    '<', '&' and quotes kept as text."""
    import xml.etree.ElementTree as ET

    import jax
    import jax.numpy as jnp
    import hlolens

    from compiler_bridge import open_dump
    name = 'run <3> & "fast"'
    dump = hlolens.write_dump(jax.jit(lambda x: jnp.tanh(x) * 2), jnp.ones(8),
                              out=str(tmp_path / name))
    d = open_dump(dump)
    out = tmp_path / f"v.{fmt}"
    p = subprocess.run([sys.executable, "-m", "viz", "render", dump, "--format", fmt,
                        "--stage", "before_optimizations", "--out", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    before = d.stage(d.main, "before_optimizations").entry.name
    want = f"Dump {name}, module 0000 jit__lambda, before optimizations, computation {before}."
    text = out.read_text()
    if fmt == "svg":
        root = ET.fromstring(text)
        assert root[0].tag.endswith("title") and root[0].text == want
    else:
        assert text.splitlines()[0] == "// HLO Lens: " + want
