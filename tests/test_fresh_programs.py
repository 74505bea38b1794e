"""Programs unlike the committed samples, compiled by JAX during the test (real XLA output
the samples do not hold): what the readers make of each."""

from __future__ import annotations

from compiler_bridge.dumps import open_dump
from compiler_bridge.dumps.program import names_its_function
from compiler_bridge.memory import memory_totals, module_memory
from tests.support.apptest import app
from tests.support.fresh import compile_program
from viz.render import stage_path
from viz.state import ViewState

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


SCAN = """
def f(x):
    return lax.scan(lambda c, t: (jnp.tanh(c + t), c.sum()), x[0], x)
ARGS = (jnp.ones((6, 4)),)
"""


def test_a_dump_of_html_renderings_only_opens_on_its_stablehlo(tmp_path, monkeypatch):
    # with --xla_dump_hlo_as_html alone XLA writes no HLO text, only .html renderings; the
    # module's StableHLO (module.mlir) is there still, and the dump opens on it
    dump, _ = compile_program(tmp_path, SCAN, "--xla_dump_hlo_as_html")
    d = open_dump(dump)
    m = d.module("jit_f")
    assert m.after_optimizations is None and m.before_optimizations is None
    assert m.stablehlo is not None and any(f.path.endswith(".html") for f in m.files)
    assert d.main is m
    assert stage_path(d, ViewState()) == m.stablehlo.path     # `viz render`'s default stage
    at = app(str(dump), monkeypatch)
    assert {s.label: s.value for s in at.selectbox}["Stage"] == "stablehlo"


# a shard_map program called on an array of one device: JAX reshards the argument onto the
# 2x4 mesh with a helper of its own, jit__multi_slice (one slice per device), which is
# larger than this small program
SHARD_MAP = """
from jax.sharding import Mesh, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
def inner(a):
    return lax.psum(a, "y") + lax.ppermute(a, "y", [(i, (i + 1) % 4) for i in range(4)])
f = jax.jit(jax.shard_map(inner, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y")))
ARGS = (jnp.arange(64.0).reshape(8, 8),)
"""


def test_the_main_program_is_not_a_helper_jax_compiled_beside_it(tmp_path):
    dump, _ = compile_program(tmp_path, SHARD_MAP, "--xla_dump_hlo_as_text "
                              "--xla_force_host_platform_device_count=8")
    d = open_dump(dump)
    helper, program = d.module("jit__multi_slice"), d.module("jit_inner")
    assert helper.after_optimizations.size > program.after_optimizations.size
    assert d.main is program
    text = d.read_text
    assert names_its_function(text(program.after_optimizations.path), "jit_inner") is True
    assert names_its_function(text(helper.after_optimizations.path), "jit__multi_slice") is False


# a jitted lambda beside the random arguments made for it: jax.random.normal compiles
# jit__normal (larger) and its table names only the caller, '<module>'; the program's
# names '<lambda>', which jax.jit turns into the module name 'jit__lambda' (no trailing '_')
LAMBDA = """
ARGS = (jax.random.normal(jax.random.PRNGKey(0), (32, 32)),)
f = jax.jit(lambda x: jnp.tanh(x @ x).sum())
"""


def test_a_jitted_lambda_is_the_main_program(tmp_path):
    dump, _ = compile_program(tmp_path, LAMBDA)
    d = open_dump(dump)
    program = d.module("jit__lambda")
    assert d.module("jit__normal").after_optimizations.size > program.after_optimizations.size
    assert names_its_function(d.read_text(program.after_optimizations.path),
                              "jit__lambda") is True
    assert d.main is program


def test_the_main_program_of_a_proto_dump_is_not_a_helper(tmp_path):
    # --xla_dump_hlo_as_proto alone: no HLO text to read the stack-frame table from, but
    # the proto carries it (HloModuleProto.stack_frame_index); jit__normal, larger, is
    # JAX's helper for the random argument
    dump, _ = compile_program(tmp_path, LAMBDA, "--xla_dump_hlo_as_proto")
    d = open_dump(dump)
    program, helper = d.module("jit__lambda"), d.module("jit__normal")
    assert program.after_optimizations.source and helper.after_optimizations.source
    assert helper.after_optimizations.size > program.after_optimizations.size
    assert d.main is program
