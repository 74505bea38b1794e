"""A name in two snapshots of one module is one instruction only when it is the same kind
of instruction: XLA's conversion of the StableHLO (before optimizations) and jaxlib's
(the StableHLO stage) number nested loops' instructions differently, so one name is a
``while`` in one and a ``parameter`` in the other. Compiled on the spot (tests.support.fresh):
no committed sample nests a cond in a while in a while."""

from __future__ import annotations

import re

from compiler_bridge import open_dump, pass_timeline
from compiler_bridge.passes import step_diff
from tests.support.fresh import compile_program

NESTED = """
def f(x):
    def body(c):
        i, x = c
        def inner(c2):
            j, y = c2
            y = lax.cond(j % 2 == 0, lambda y: jnp.sin(y) * 1.01, lambda y: jnp.cos(y) + y, y)
            return j + 1, y
        _, x = lax.while_loop(lambda c2: c2[0] < 3, inner, (0, x))
        x = lax.switch(i % 3, [lambda x: x + 1, lambda x: x * 2, lambda x: jnp.tanh(x)], x)
        return i + 1, x
    _, x = lax.while_loop(lambda c: c[0] < 5, body, (0, x))
    return x.sum()
ARGS = (np.ones((8, 16), np.float32),)
"""

_OPCODE = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = .*? ([a-z][\w\-]*)\(", re.M)


def test_a_name_of_another_opcode_is_another_instruction(tmp_path):
    dump, _ = compile_program(tmp_path, NESTED)
    d = open_dump(dump)
    tl = pass_timeline(d, "jit_f")
    assert tl.stablehlo is not None
    diff = step_diff(d, tl, 0, against=tl.stablehlo.index)
    old, new = diff.old, diff.new
    # the texts themselves: names the two conversions gave to instructions of other opcodes
    before = dict(_OPCODE.findall(d.read_text(tl.step(0).file)))
    clash = {i.name for i in old.instructions()
             if i.name in before and before[i.name] != i.opcode}
    assert clash                   # what this test is about: it happens in this program
    assert not [c for c in diff.changed if "opcode" in c.kinds]
    for name in clash:
        assert diff.old_to_new.get(name) != name
    assert len(diff.added) - len(diff.removed) == \
        new.instruction_count - old.instruction_count
