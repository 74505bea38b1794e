"""XLA:GPU compiles some fusions again as modules named after them, with per-pass files
alone (``module_0002.fused_add.1.0000.cublaslt_rewriter_pipeline.after_...``). Two H100
per-pass compiles of slightly different programs (``compile_for``, no GPU needed): such a
module pairs by name like any, and one found on one side only is listed unpaired by the
pairing and the ``compare`` command (it was in neither list)."""

from __future__ import annotations

import json

import pytest

from compiler_bridge import open_dump
from compiler_bridge.compare import pair_modules
from tests.support.backend_fresh import compile_for
from tests.support.cli import run

# a loop whose branches XLA:GPU fuses; the two programs differ in one op per branch
PROGRAM = r"""
def loop(x):
    def body(i, v):
        return jax.lax.cond(i % 2 == 0, lambda v: jnp.FN(v) @ v, lambda v: v OP, v)
    return jax.lax.fori_loop(0, 3, body, x).sum()
PROGRAMS = {"loop": (loop, (S((128, 128)),), {})}
"""
LOOP, OTHER = (PROGRAM.replace("FN", fn).replace("OP", op)
               for fn, op in (("sin", "+ 1.0"), ("cos", "* 2.0")))


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    out = []
    for program in (LOOP, OTHER):
        dump, _ = compile_for("h100", tmp_path_factory.mktemp("h100"), program,
                              "--xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*")
        out.append(dump)
    return out


def _fusion_modules(d):
    return {m.id: m.name for m in d.modules
            if m.passes and m.first("after_optimizations") is None
            and m.before_optimizations is None}


def test_fusion_modules_pair_by_name_or_are_listed_unpaired(two):
    a, b = (open_dump(p) for p in two)
    fa, fb = _fusion_modules(a), _fusion_modules(b)
    assert fa and fb
    only_a = {i for i, n in fa.items() if n not in fb.values()}
    only_b = {i for i, n in fb.items() if n not in fa.values()}
    assert only_a and only_b          # the programs differ: so do some fusions
    pairing = pair_modules(a, b)
    assert set(pairing.only_a) == only_a and set(pairing.only_b) == only_b
    both = {n for n in fa.values() if n in fb.values()}
    assert {p.name_a for p in pairing.pairs} >= both


def test_the_compare_command_lists_them(two):
    a, b = (open_dump(p) for p in two)
    p = run("compare", str(two[0]), str(two[1]), "--json")
    out = json.loads(p.stdout)
    assert set(out["unpaired"]["a"]) >= {i for i, n in _fusion_modules(a).items()
                                         if n not in _fusion_modules(b).values()}
    assert set(out["unpaired"]["b"]) >= {i for i, n in _fusion_modules(b).items()
                                         if n not in _fusion_modules(a).values()}
