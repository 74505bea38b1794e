"""A dump with a half-written after-optimizations file and a 0-byte one (a run killed while
XLA wrote it, a disk that filled): each command still reports every other module, and says
which file could not be read and what was expected there."""

from __future__ import annotations

import json
import os

import pytest
from conftest import read, sample, sample_file

from compiler_bridge import HloParseError, open_dump, parse_hlo
from tests.support.cli import run
from tests.support.fresh import compile_program

# a program on 2 devices whose ENTRY is sharded and has a collective, called on an array
# of one device: JAX compiles helpers beside it (iota, reshape, resharding)
SHARDED = """
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
f = jax.jit(lambda x: (x * 2).sum(axis=0), in_shardings=NamedSharding(mesh, P("x")))
ARGS = (jnp.arange(32.0).reshape(8, 4),)
"""


def _damaged(tmp_path):
    """The dump, with one helper's HLO files emptied (``collectives`` reads the
    after-optimizations one, ``shardings`` the before-optimizations one); the program's
    module and the helper's."""
    dump, _ = compile_program(tmp_path, SHARDED, "--xla_dump_hlo_as_text "
                              "--xla_force_host_platform_device_count=2")
    d = open_dump(dump)
    program = d.main
    helper = next(m for m in d.modules if m is not program and m.after_optimizations)
    for f in (helper.before_optimizations, helper.after_optimizations):
        (dump / f.path).write_bytes(b"")
    return dump, program, helper


def test_one_empty_file_hides_no_other_module_from_collectives_and_shardings(tmp_path):
    dump, program, helper = _damaged(tmp_path)
    for command, key in (("collectives", "collectives"), ("shardings", "parameters")):
        done = run(command, "--json", str(dump))
        # the rest is reported; the broken module is an error naming its file, and the
        # exit code says something was left out
        reports = {r["name"]: r for r in json.loads(done.stdout)["modules"]}
        assert program.name in reports, (command, done.stderr)
        assert done.returncode == 1, command
        assert ".txt: empty file: expected 'HloModule <name>'" in done.stderr, command
        assert f"module {helper.label}" in done.stderr, command
        assert "Traceback" not in done.stderr
    done = run("collectives", str(dump))
    assert done.returncode == 1 and f"module {program.name}:" in done.stdout
    reports = json.loads(run("collectives", "--json", str(dump)).stdout)["modules"]
    program_report = next(r for r in reports if r["name"] == program.name)
    assert any(c["opcode"].startswith("all-") for c in program_report["collectives"])


def test_runtimes_of_a_module_that_cannot_be_read_is_an_error(tmp_path):
    """``runtimes --module M`` where M's file is broken: an error naming the file and
    exit 1, not an empty report ('dump d: module ' and no rows) that exits 0."""
    dump, program, helper = _damaged(tmp_path)
    for extra in ((), ("--json",)):
        done = run("runtimes", "--module", helper.id, *extra, str(dump))
        assert done.returncode == 1, (extra, done.stdout[:300])
        assert f"module {helper.label}: {helper.after_optimizations.path}: empty file" \
            in done.stderr
        assert "no module could be reported" in done.stderr
        assert "Traceback" not in done.stderr
    done = run("runtimes", "--module", program.id, str(dump))     # the rest still works
    assert done.returncode == 0 and f"module {program.id} {program.name}" in done.stdout


def test_a_file_cut_anywhere_in_a_line_says_where_it_ends():
    """A half-written after-optimizations file ends mid-line wherever the writer stopped;
    the error says the file ends there, not 'unknown opcode 'f'' (a cut 'fusion') or
    'operand 'c' is not defined' (a cut operand name)."""
    path = sample_file("mlp_train", "module_*.cpu_after_optimizations.txt")
    text = read(path)
    start = text.index("\n", len(text) // 2) + 1               # two whole lines, every cut
    end = text.index("\n", text.index("\n", start) + 1)
    name = os.path.basename(path)
    for cut in range(start + 1, end):           # mid-line: the line has no newline yet
        if text[cut - 1] == "\n":
            continue
        with pytest.raises(HloParseError) as info:
            parse_hlo(text[:cut], name)
        err = info.value
        assert err.message.startswith("unexpected end of file"), (cut, err.message)
        assert str(err).startswith(f"{name}:{text[:cut].count(chr(10)) + 1}:"), cut


def test_a_reader_that_stops_early_is_not_an_error():
    """``runtimes --json DUMP | head -1``: the pipe closes while the command writes (its
    95 KB outgrow the pipe's buffer); it stops quietly, exit 0, no 'error: [Errno 32]'."""
    import subprocess
    import sys

    from tests.support.samples import ROOT
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    p = subprocess.Popen([sys.executable, "-m", "compiler_bridge", "runtimes", "--json",
                          sample("transformer")], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"{"
    p.stdout.close()                        # what `head -1` does after its line
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert "Broken pipe" not in err and "Traceback" not in err and "error" not in err, err


def test_an_empty_buffer_assignment_costs_only_the_memory_view(tmp_path, monkeypatch):
    """The program's buffer-assignment file emptied: its Memory tab says which file and
    why; no page, this module's other tabs or another module's, carries a banner for it
    (an auxiliary file never becomes a page-wide error, issue 32 item 6)."""
    from tests.support.apptest import app, details_key, ok
    dump, _ = compile_program(tmp_path, "def f(x):\n    return jnp.tanh(x) @ x\n"
                              "ARGS = (jnp.arange(16.0).reshape(4, 4),)\n")   # + helpers
    d = open_dump(dump)
    program = d.main
    other = next(m for m in d.modules if m is not program and m.after_optimizations)
    ba = next(f for f in program.files if f.kind == "buffer_assignment")
    (dump / ba.path).write_bytes(b"")

    def banners(at):
        return [e.value for e in at.error if "could not be read" in e.value]
    at = app(str(dump), monkeypatch)
    key = details_key(at)
    for tab in ("Memory", "Opcodes"):
        at.session_state[key] = tab
        at.run()
        ok(at)
        assert not banners(at), tab
        if tab == "Memory":
            said = " ".join(i.value for i in at.info)
            assert "No memory view for this module" in said
            assert f"{ba.path}: empty file: expected 'BufferAssignment:'" in said
    other_page = app(str(dump), monkeypatch, {"module": other.id})
    assert not banners(other_page)


def test_compare_names_the_modules_a_broken_file_left_out(tmp_path):
    """``compare`` of a dump whose program's file is cut short with an intact copy: the
    program is in no pair and in neither unpaired list, so the comparison says which
    module was left out and why, in the text and the JSON."""
    import shutil
    dump, _ = compile_program(tmp_path, "def f(x):\n    return jnp.tanh(x) @ x\n"
                              "ARGS = (jnp.arange(16.0).reshape(4, 4),)\n")
    intact = tmp_path / "intact"
    shutil.copytree(dump, intact)
    program = open_dump(dump).main
    after = dump / program.after_optimizations.path
    after.write_bytes(after.read_bytes()[: after.stat().st_size // 2])
    done = run("compare", str(dump), str(intact))
    assert done.returncode == 0, done.stderr
    said = f"A ({dump.name}): module {program.label} left out, its file could not be read: " \
        f"{program.after_optimizations.path}:"
    assert said in done.stderr and "unexpected end of file" in done.stderr
    out = json.loads(run("compare", "--json", str(intact), str(dump)).stdout)
    assert any(n.startswith(f"B ({dump.name}): module {program.label} left out")
               for n in out["notes"])
    assert program.id not in out["unpaired"]["b"]      # (it pairs with nothing: not listed)


def test_another_modules_broken_file_is_said_on_its_page_not_on_every_page(tmp_path,
                                                                          monkeypatch):
    """A helper module's after-optimizations file cut short: its own page says which file
    and why, the module picker says it cannot be read, and the program's page carries no
    banner for it, before or after the helper's page was visited (the banner does not
    grow as modules are visited)."""
    from tests.support.apptest import app, ok
    dump, _ = compile_program(tmp_path, "def f(x):\n    return jnp.tanh(x) @ x\n"
                              "ARGS = (jnp.arange(16.0).reshape(4, 4),)\n")   # + helpers
    d = open_dump(dump)
    program = d.main
    helper = next(m for m in d.modules if m is not program and m.after_optimizations)
    cut = dump / helper.after_optimizations.path
    text = cut.read_text(encoding="utf-8")
    cut.write_text(text[: text.index("ENTRY") + 12], encoding="utf-8")

    def banners(at):
        return " ".join(e.value for e in at.error if "could not be read" in e.value)
    at = app(str(dump), monkeypatch)
    assert helper.after_optimizations.path not in banners(at)
    labels = at.selectbox(key="pick-module").options
    assert any(f"· {helper.id} — cannot be read" in o for o in labels), labels
    at.query_params["module"] = helper.id                     # the helper's page
    at.run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert helper.after_optimizations.path in shown and "cut short" in shown, shown
    at.query_params["module"] = program.id                    # back to the program
    at.run()
    ok(at)
    assert helper.after_optimizations.path not in banners(at)
