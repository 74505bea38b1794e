"""A narrowed ``--xla_dump_hlo_pass_re`` (``fusion|layout``): XLA writes a snapshot only
where the regex matches a neighbouring pass, and numbers the files it writes (SSSS has
no gaps), so a step's diff can cover passes that were not dumped. The timeline says
which (``Step.unseen``) and the stepper says so above the diff."""

from __future__ import annotations

import pytest

from compiler_bridge import open_dump
from compiler_bridge.passes import pass_timeline
from tests.support.apptest import app, ok, plain
from tests.support.fresh import compile_program

PROGRAM = "def f(x):\n    return jnp.tanh(x) @ x + 1\nARGS = (jnp.arange(16.0).reshape(4, 4),)\n"


@pytest.fixture(scope="module")
def narrowed(tmp_path_factory):
    dump, _ = compile_program(tmp_path_factory.mktemp("gaps"), PROGRAM,
                              "--xla_dump_hlo_as_text --xla_dump_hlo_pass_re=fusion|layout")
    d = open_dump(dump)
    return dump, d, pass_timeline(d, d.main)


def test_a_step_after_passes_not_dumped_names_them(narrowed):
    _, _, tl = narrowed
    passes = [s for s in tl.steps if s.kind == "pass"]
    # XLA numbers the files it wrote: the gap is only in the pass names
    assert [s.sequence for s in passes] == list(range(len(passes)))
    for prev, s in zip(passes, passes[1:]):
        entered = s.pipeline if s.pass_name == "pipeline-start" else s.pass_name
        neighbours = prev.next_pass in (entered, "pipeline-end")
        assert bool(s.unseen) != neighbours, (prev.file, s.file, s.unseen)
        if s.unseen:
            assert s.unseen.startswith(prev.next_pass + " … "), s.unseen
    assert any(s.unseen for s in passes)
    last = tl.steps[-1]
    assert last.kind == "after_optimizations"
    assert last.unseen == (f"{passes[-1].next_pass} … the last pass"
                           if passes[-1].next_pass != "pipeline-end" else "")


def test_the_stepper_says_the_step_covers_passes_not_dumped(narrowed, monkeypatch):
    dump, d, tl = narrowed
    step = next(s for s in tl.steps if s.unseen and not s.identical)
    at = app(str(dump), monkeypatch, {"module": d.main.id, "stage": step.stage})
    ok(at)
    said = plain(" ".join(c.value for c in at.caption))
    assert "were not dumped" in said and step.unseen.split(" … ")[0] in said, said


def test_every_pass_dumped_marks_no_step():
    """``.*``: passes between two snapshots changed nothing; no step is marked."""
    from conftest import sample
    d = open_dump(sample("mlp_train"))
    assert not any(s.unseen for s in pass_timeline(d, d.main).steps)
