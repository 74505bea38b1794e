"""XLA:TPU writes ``<base>after_optimizations_before_buffer_assignment.txt``: the module
after its last HLO pass, before buffer assignment (which still sets kernels' backend
configs). It is a step of its own, between the last pass file and after_optimizations,
and the app opens it as a stage. Compiled for v5e here (``compile_for``, no TPU)."""

from __future__ import annotations

import pytest

from compiler_bridge import open_dump, pass_timeline
from tests.support.apptest import app, ok
from tests.support.backend_fresh import compile_for

PROGRAM = r"""
def f(x):
    return jnp.tanh(x) @ x
PROGRAMS = {"f": (f, (S((128, 128)),), {})}
"""
SUFFIX = ".after_optimizations_before_buffer_assignment.txt"
BEFORE_BUFFER_ASSIGNMENT = "before_buffer_assignment"   # the stage, as links name it


@pytest.fixture(scope="module")
def per_pass(tmp_path_factory):
    dump, _ = compile_for("v5e", tmp_path_factory.mktemp("v5e"), PROGRAM,
                          "--xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*")
    return dump


def test_it_is_the_step_between_the_last_pass_and_after_optimizations(per_pass):
    d = open_dump(per_pass)
    written = [p.name for p in per_pass.iterdir() if p.name.endswith(SUFFIX)]
    assert len(written) == 1
    tl = pass_timeline(d, "jit_f")
    kinds = [s.kind for s in tl.steps]
    at = kinds.index(BEFORE_BUFFER_ASSIGNMENT)
    assert kinds[at - 1] == "pass" and kinds[at + 1] == "after_optimizations"
    step, after = tl.steps[at], tl.steps[at + 1]
    assert step.file == written[0] and step.ok
    # a byte-identical after_optimizations says so (the stepper: 'Same text as ...')
    data = {s.file: (per_pass / s.file).read_bytes() for s in (step, after)}
    assert after.identical == (data[step.file] == data[after.file])
    assert tl.index_of(BEFORE_BUFFER_ASSIGNMENT) == at


def test_the_app_opens_it_as_a_stage(per_pass, monkeypatch):
    at = app(str(per_pass), monkeypatch, {"stage": BEFORE_BUFFER_ASSIGNMENT})
    ok(at)
    stage = at.selectbox(key="pick-stage")
    assert stage.value == BEFORE_BUFFER_ASSIGNMENT
    assert not at.error
