"""A dump folder that two runs wrote into (each process numbers its modules from 0):
module ids repeat, with another module's name or, under ``--xla_dump_include_timestamp``,
with another stamp. Every compile stays a module of its own, reachable by its id, in the
CLI and on the page."""

from __future__ import annotations

import json
import re

from compiler_bridge import open_dump
from tests.support.apptest import app, texts
from tests.support.cli import run
from tests.support.fresh import compile_program

# the first run's jit_f is module 0004 (after helpers for arange and reshape); the second's
# is module 0000, the id of the first run's jit_iota
FIRST = "def f(x):\n    return jnp.tanh(x) @ x\nARGS = (jnp.arange(16.0).reshape(4, 4),)\n"
SECOND = "def f(x):\n    return jnp.sin(x).sum()\nARGS = (np.ones((3, 5), np.float32),)\n"

_AFTER = re.compile(r"(?:(\d+)\.)?module_(\d+)\.(.+)\.cpu_after_optimizations\.txt")


def _compiles(dump) -> set[tuple[str, str, str]]:
    """(stamp, id, name) of every after-optimizations file XLA wrote: one per compile."""
    return {m.groups("") for m in map(_AFTER.fullmatch, (f.name for f in dump.files)) if m}


def _each_compile_is_a_module(d) -> None:
    compiles = _compiles(d)
    assert len(compiles) == len(d.modules)
    assert len({m.id for m in d.modules}) == len(d.modules)
    shown = set()
    for m in d.modules:
        assert d.module(m.id) is m
        assert {f.module_name for f in m.files} == {m.name}       # no other module's file
        after = m.after_optimizations
        assert after is not None
        shown.add(_AFTER.fullmatch(after.name).groups(""))
        assert d.stage(m).name == m.name                          # the HLO header's
    assert shown == compiles


def test_two_runs_into_one_folder_keep_every_module(tmp_path):
    compile_program(tmp_path, FIRST)
    dump, _ = compile_program(tmp_path, SECOND)
    d = open_dump(dump)
    assert {("", "0000", "jit_f"), ("", "0000", "jit_iota")} <= _compiles(d)
    _each_compile_is_a_module(d)
    second = d.module("0000.jit_f")
    assert "sine" in {i.opcode for i in d.stage(second, "before_optimizations").instructions()}
    assert second.number == 0
    # the CLI lists both and opens the one named
    done = run("stats", "--json", str(dump))
    assert done.returncode == 0, done.stderr
    assert {(m["id"], m["name"]) for m in json.loads(done.stdout)["modules"]} >= {
        ("0000.jit_f", "jit_f"), ("0000.jit_iota", "jit_iota"), ("0004", "jit_f")}
    # the text table's name column starts at one place, however long the ids (0004, 0000.jit_iota)
    done = run("stats", str(dump))
    assert done.returncode == 0, done.stderr
    rows = [re.match(r"  (\S+)\s+\S", line) for line in done.stdout.splitlines()
            if line.startswith("  ")]
    assert len(rows) == len(d.modules) and all(rows)
    assert len({r.end() for r in rows if r}) == 1


def test_the_page_opens_the_module_of_a_repeated_id(tmp_path, monkeypatch):
    compile_program(tmp_path, FIRST)
    dump, _ = compile_program(tmp_path, SECOND)
    at = app(str(dump), monkeypatch, {"module": "0000.jit_f"})
    picker = at.selectbox(key="pick-module")
    labels = [o.split(" — ")[0].lstrip("★ ") for o in picker.options]
    assert {"jit_f · 0000.jit_f", "jit_iota · 0000.jit_iota", "jit_f · 0004"} <= set(labels)
    assert picker.value == "0000.jit_f"
    assert "module 0000.jit_f" in texts(at)


def test_two_timestamped_runs_of_one_program_are_two_compiles(tmp_path):
    flags = "--xla_dump_hlo_as_text --xla_dump_include_timestamp"
    compile_program(tmp_path, SECOND, flags)
    dump, _ = compile_program(tmp_path, SECOND, flags)
    d = open_dump(dump)
    stamps = {s for s, _, name in _compiles(d) if name == "jit_f"}
    assert len(stamps) == 2
    _each_compile_is_a_module(d)
    assert {m.id for m in d.modules if m.name == "jit_f"} == {f"0000@{s}" for s in stamps}
    # XLA's id (what a trace's program id is, what --module 0000 names) is the number
    assert {m.number for m in d.modules if m.name == "jit_f"} == {0}
    assert d.module("0000").id == f"0000@{min(stamps)}"
    done = run("passes", str(dump), "--module", "0000")
    assert done.returncode == 0 and f"module 0000@{min(stamps)} jit_f" in done.stdout, done.stderr


# a loop with a cond: passes that change its body computations, not only the ENTRY
LOOP = """
def f(x):
    def body(i, v):
        return lax.cond(i % 2 == 0, lambda v: jnp.sin(v) @ v, lambda v: v + 1.0, v)
    return lax.fori_loop(0, 3, body, x)
ARGS = (jnp.ones((4, 4)),)
"""


def test_a_proto_per_pass_dump_steps_through_its_passes(tmp_path):
    """``--xla_dump_hlo_as_proto --xla_dump_hlo_pass_re=.*`` without text: one
    ``.hlo.pb`` per pass, the same names as the text files. The stepper has every step,
    with the counts the text snapshots of the same compile give."""
    from compiler_bridge import pass_timeline
    from compiler_bridge.passes import step_changes
    dump, _ = compile_program(tmp_path, LOOP, "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto "
                              "--xla_dump_hlo_pass_re=.*")
    text_dump = open_dump(dump)
    text_tl = pass_timeline(text_dump, "jit_f")
    assert text_tl.per_pass and len(text_tl) > 20
    text_changes = step_changes(text_dump, text_tl)
    texts = list(dump.glob("module_*.txt"))
    for t in texts:              # what the dump holds with --xla_dump_hlo_as_proto alone
        t.unlink()
    protos = {p.name.removesuffix(".hlo.pb") for p in dump.glob("module_*jit_f.*.hlo.pb")}
    assert {s.file.removesuffix(".txt") for s in text_tl.steps} <= {
        t.name.removesuffix(".txt") for t in texts}
    assert {s.file.removesuffix(".txt") for s in text_tl.steps
            if s.kind == "pass"} <= protos
    tl = pass_timeline(open_dump(dump), "jit_f")
    assert tl.per_pass
    assert [(s.kind, s.pass_name, s.instructions, s.fusions, s.computations)
            for s in tl.steps] == [(s.kind, s.pass_name, s.instructions, s.fusions,
                                    s.computations) for s in text_tl.steps]
    assert not [s.error for s in tl.steps if s.error]
    # jaxlib renumbers the stack-frame tables of each proto it reads (one instruction's
    # stack_frame_id is 10 in one step, 6 in the next): the same source location, so no
    # metadata change; each step's changes are the text snapshots'
    assert step_changes(open_dump(dump), tl) == text_changes
