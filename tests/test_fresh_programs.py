"""Programs unlike the committed samples, compiled by JAX during the test (real XLA output
the samples do not hold): what the readers make of each."""

from __future__ import annotations

from compiler_bridge.dumps import open_dump
from compiler_bridge.memory import memory_totals, module_memory
from tests.support.fresh import compile_program

# zero-size arrays: XLA gives them 0-byte allocations, and its memory-usage report prints
# their share of the allocation as 0/0: '0B(-nan%)'
ZERO_SIZE = """
def f(a, b):
    return jnp.concatenate([a, b], axis=0).sum(axis=0), a * 2, jnp.zeros((0,), jnp.int32)
ARGS = (jnp.ones((0, 4)), jnp.ones((3, 4)))
"""


def test_zero_size_arrays_in_the_memory_usage_report(tmp_path):
    dump, xla = compile_program(tmp_path, ZERO_SIZE)
    d = open_dump(dump)
    m = d.module("jit_f")
    report = next(f for f in m.files if f.path.endswith("-memory-usage-report.txt"))
    assert "nan%);" in d.read_text(report.path)
    mem = module_memory(d, m)
    assert not d.errors and not mem.missing
    assert mem.report is not None
    assert mem.report.total_bytes == mem.totals().total_bytes
    t = memory_totals(d, "jit_f")
    assert (t.argument_bytes, t.output_bytes, t.temp_bytes, t.peak_bytes) == (
        xla["argument_size_in_bytes"], xla["output_size_in_bytes"],
        xla["temp_size_in_bytes"], xla["peak_memory_in_bytes"])
