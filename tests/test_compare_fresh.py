"""Comparing two compiles that no committed sample holds, made on the spot by JAX
(``tests.support.fresh``): the flags each dump's ``debug_options`` says, as XLA wrote them."""

from __future__ import annotations

import re

from compiler_bridge import compare_dumps, open_dump
from compiler_bridge.compare import flags_diff
from tests.support.fresh import compile_program

PROGRAM = "def f(x):\n    return (jnp.tanh(x) @ x).sum() * 1.0\nARGS = (np.ones((4, 4), np.float32),)\n"


def test_a_repeated_flag_reads_as_xla_flags_writes_it(tmp_path):
    """``--xla_disable_hlo_passes=algsimp,cse``: XLA writes one ``debug_options`` line per
    pass; the diff and ``as_xla_flags`` give the flag back as XLA_FLAGS sets it."""
    plain, _ = compile_program(tmp_path / "a", PROGRAM)
    off, _ = compile_program(tmp_path / "b", PROGRAM, "--xla_dump_hlo_as_text "
                             "--xla_disable_hlo_passes=algsimp,cse")
    written = re.findall(r'^xla_disable_hlo_passes: "([^"]*)"$',
                         next(off.glob("*.debug_options")).read_text(), re.M)
    assert written == ["algsimp", "cse"]
    d = flags_diff(open_dump(plain), open_dump(off))
    assert d.only_b == ("--xla_disable_hlo_passes=algsimp,cse",)
    assert not d.only_a and not d.changed
    side = compare_dumps(open_dump(plain), open_dump(off)).side_json("b")
    assert "--xla_disable_hlo_passes=algsimp,cse" in side["xla_flags"]
