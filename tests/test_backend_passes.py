"""Per-pass dumps (``--xla_dump_hlo_pass_re=.*``) of XLA:TPU and XLA:GPU, compiled here
without the hardware (``tests.support.backend_fresh``): every snapshot XLA wrote is a
step, in XLA's order. Besides ``SSSS.<pipeline>.after_<pass>.before_<next>.txt`` (between
two passes) XLA writes ``SSSS.<pass>.<step>.txt`` from inside a pass (XLA's
``DumpHloModuleDuringPassIfEnabled``): copy-insertion's ``after_adding_copies...`` and
libtpu's ``tpu-tiling-rewriter.before_tiling_rewriter``, whose step names need not start
with ``after_``."""

from __future__ import annotations

import re

import pytest

from compiler_bridge import open_dump, pass_timeline
from tests.support.backend_fresh import compile_for

LOOP = r"""
def loop(x):
    def body(i, v):
        return jax.lax.cond(i % 2 == 0, lambda v: jnp.sin(v) @ v, lambda v: v + 1.0, v)
    return jax.lax.fori_loop(0, 3, body, x).sum()
PROGRAMS = {"loop": (loop, (S((128, 128)),), {})}
"""

_SNAPSHOT = re.compile(r"module_\d+\.jit_loop(?:\.cl_\d+)?\.(\d{4})\.(.+)\.txt")


def _every_snapshot_is_a_step(target: str, tmp_path) -> list[str]:
    dump, facts = compile_for(target, tmp_path, LOOP, "--xla_dump_hlo_as_text "
                              "--xla_dump_hlo_pass_re=.*")
    assert "error" not in facts["loop"]
    written = sorted((int(m.group(1)), p.name) for p in dump.iterdir()
                     if (m := _SNAPSHOT.fullmatch(p.name)))
    assert len(written) > 30
    d = open_dump(dump)
    tl = pass_timeline(d, "jit_loop")
    steps = [s for s in tl.steps if s.kind == "pass"]
    assert [s.file for s in steps] == [name for _, name in written]
    assert [s.sequence for s in steps] == [seq for seq, _ in written]
    assert not [s.error for s in tl.steps if s.error]
    return [s.label for s in steps]


def test_every_tpu_snapshot_is_a_step(tmp_path):
    labels = _every_snapshot_is_a_step("v5e", tmp_path)
    assert any(label.endswith("tpu-tiling-rewriter / before_tiling_rewriter")
               for label in labels)


def test_every_gpu_snapshot_is_a_step(tmp_path):
    _every_snapshot_is_a_step("h100", tmp_path)
    # XLA:GPU compiles some fusions again as modules of their own, named after the fused
    # computation (module_0002.fused_add.1.0000.cublaslt_rewriter_pipeline...), with one
    # snapshot and no other file: each is its module, with its name and its step's number
    d = open_dump(tmp_path / "dump")
    header = re.compile(r"HloModule ([^\s,]+)")
    named = 0
    for m in d.modules:
        for f in m.passes:
            name = header.match(d.read_text(f.path)).group(1)
            assert m.name == name
            written = re.fullmatch(rf"module_{m.id}\.{re.escape(name)}\.(\d{{4}})\..+", f.name)
            assert written and f.pass_info.sequence == int(written.group(1))
            named += "." in name
    assert named >= 2


@pytest.mark.parametrize("target", ["v5e", "h100"])
def test_shardys_per_pass_folder_belongs_to_its_compile(target, tmp_path):
    """A sharded program's per-pass dump holds Shardy's MLIR per propagation step
    (shardy/module_0000.jit_f/NN.<step>.mlir). It was read as a module of its own with
    no HLO text beside the compile of its number (XLA:TPU's name adds '.cl_<N>'), whose
    id then became '0000.jit_f.cl_<N>': the files are that compile's, one module per
    number XLA wrote."""
    dump, facts = compile_for(target, tmp_path, 'PROGRAMS = {"f": (lambda x: jnp.tanh(x)'
                              '.sum(axis=0), (S((8, 128), on("x", "y")),), {})}',
                              "--xla_dump_hlo_pass_re=.*")
    assert "error" not in facts["f"]
    shardy = sorted(str(p.relative_to(dump)) for p in dump.glob("shardy/module_*/*.mlir"))
    assert shardy
    numbers = {m.group(1) for p in dump.iterdir()
               if (m := re.match(r"module_(\d+)\.", p.name))}
    d = open_dump(dump)
    assert sorted(m.id for m in d.modules) == sorted(numbers)
    (f,) = [m for m in d.modules if m.name.startswith("jit__lambda")]
    assert f.first("after_optimizations") is not None and d.main is f
    assert set(shardy) <= {x.path for x in f.files}
