"""The runtime report on small programs profiled during the test (``python -m
compiler_bridge profile``, JAX on CPU), for what no committed sample holds: a program
sharded over several host devices, ... Each asserts against what the profiler recorded."""

from __future__ import annotations

import glob
import gzip
import json
import shutil

import pytest

from compiler_bridge import open_dump, runtime_report
from compiler_bridge.perf import TraceError, measure

from tests.support.cli import run
from tests.support.fresh import profile_program

SHARDED = """
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:4]), ("x",))

@jax.jit
def f(x):
    def body(b):
        return jax.lax.psum(jnp.tanh(b) @ b.T, "x")
    return jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P())(x)

x = jnp.ones((64, 16))
for _ in range(3):
    jax.block_until_ready(f(x))
"""


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    return open_dump(profile_program(tmp_path_factory.mktemp("sharded"), SHARDED,
                                     "--xla_force_host_platform_device_count=4"))


def test_a_sharded_programs_kernels_run_once_per_step_on_each_device(sharded):
    """On 4 host devices one run of the program holds each kernel's event once per
    device (the devices run in parallel, their events share the run id): its executions
    per step are 1, as its loops' trip counts say, not 4, and the step sums each kernel
    once, not once per device."""
    main = next(m for m in sharded.modules if m.name == "jit_f")
    timings = measure(sharded).module(main.id)
    assert timings is not None and len(timings.runs) == 3
    per_run = {len(xs) for k in timings.kernels.values() for xs in k.per_run.values()}
    assert per_run == {4}                   # the profiler: one event per device per run
    r = runtime_report(sharded, [main.id], auto_model=False, device="cpu")
    rows = [x for x in r.rows if x.measured_us is not None]
    assert rows and all(x.runs_known and x.runs_per_step == 1.0 for x in rows)
    assert [x.executions_per_run for x in rows] == [1.0] * len(rows)
    st = r.step_time(main.id)
    assert st.predicted_us == pytest.approx(sum(x.expected_us for x in r.rows))


BRANCHES = """
import jax, jax.numpy as jnp
from jax import lax

@jax.jit
def h(p, x):
    return lax.cond(p, lambda v: jnp.sin(v) @ v, lambda v: v * 3.0, x)

x = jnp.ones((32, 32))
for p in (True, False, False, False):
    jax.block_until_ready(h(p, x))
"""


def test_a_branch_taken_in_some_runs_counts_its_executions_over_every_run(tmp_path):
    """A conditional's branch taken in 1 of the 4 profiled runs executes 0.25 times per
    step (the profiler's events over the runs), not once: the step does not add both
    branches' kernels in full."""
    dump = open_dump(profile_program(tmp_path, BRANCHES))
    main = next(m for m in dump.modules if m.name == "jit_h")
    timings = measure(dump).module(main.id)
    assert timings is not None and len(timings.runs) == 4
    r = runtime_report(dump, [main.id], auto_model=False, device="cpu")
    branch = [x for x in r.rows if x.timing is not None and x.timing.runs < 4]
    assert {x.timing.runs for x in branch} == {1, 3}     # the two branches' kernels
    for x in r.rows:
        if x.timing is not None:
            assert x.executions_per_run == pytest.approx(x.timing.count / 4)
    st = r.step_time(main.id)
    assert st.predicted_us == pytest.approx(sum(x.expected_us * x.runs for x in r.rows))


TANH = """
import jax, jax.numpy as jnp

@jax.jit
def f(x):
    return jnp.tanh(x) * 2.0

for _ in range(3):
    jax.block_until_ready(f(jnp.ones((64,))))
"""

MATMUL = """
import jax, jax.numpy as jnp

@jax.jit
def f(a, b):
    return a @ b, (a + 1.0) @ b

for _ in range(3):
    jax.block_until_ready(f(jnp.ones((32, 32)), jnp.ones((32, 32))))
"""


def test_a_trace_of_another_program_of_the_same_name_is_refused(tmp_path):
    """Two programs whose modules are both jit_f (JAX names a module after its function),
    and both with JAX's helper modules of jnp.ones: the one's trace added to the other's
    dump matched the helpers and the ops of the same name in jit_f (exit 0). A run that
    names instructions its module lacks is of another program: refused, naming the file."""
    tanh = profile_program(tmp_path / "tanh", TANH)
    matmul = profile_program(tmp_path / "matmul", MATMUL)
    trace = glob.glob(str(matmul / "trace/plugins/profile/*/perfetto_trace.json.gz"))[0]
    with pytest.raises(TraceError, match="the trace is of another program"):
        measure(open_dump(tanh), [trace])
    p = run("runtimes", str(tanh), "--trace", trace, "--roofline", tmp_env=str(tmp_path))
    assert p.returncode == 1
    assert f"error: {trace}: the trace is of another program" in p.stderr
    assert "module jit_f" in p.stderr
    # each program's own trace matches its dump whole
    for d in (tanh, matmul):
        m = measure(open_dump(d))
        assert m.matched_events > 0 and m.unmatched_events == 0


def _renamed(tmp_path, ops: int):
    """The transformer sample with only its perfetto trace, whose events of ``ops`` of
    jit_train_step's instructions are renamed to names the module lacks (as a runtime
    naming some events its own way would)."""
    from tests.support.samples import sample
    folder = tmp_path / f"renamed{ops}"
    shutil.copytree(sample("transformer"), folder)
    (session,) = glob.glob(str(folder / "trace/plugins/profile/*"))
    for name in ("vm.trace.json.gz", "vm.xplane.pb"):
        (folder / "trace/plugins/profile" / session / name).unlink()
    path = f"{session}/perfetto_trace.json.gz"
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = sorted({e["args"]["hlo_op"] for e in events
                    if e.get("args", {}).get("hlo_module") == "jit_train_step"
                    and "hlo_op" in e["args"]})
    renamed = set(names[:ops])
    for e in events:
        if e.get("args", {}).get("hlo_op") in renamed:
            e["args"]["hlo_op"] = e["name"] = "runtime-event-" + e["args"]["hlo_op"]
    with gzip.open(path, "wt") as f:
        json.dump(trace, f)
    return folder, len(names), renamed


def test_a_few_events_a_module_lacks_are_listed_unmatched_not_a_refusal(tmp_path):
    """One op of 86 named otherwise in every run: the trace is the program's, the op's
    events are listed as matching no instruction; a third of them renamed is another
    program's trace, refused."""
    folder, n, renamed = _renamed(tmp_path, 1)
    m = measure(open_dump(folder))
    assert m.unmatched_events > 0 and m.matched_events > 0
    assert {u.op for u in m.unmatched} == {"runtime-event-" + op for op in renamed}
    folder, n, _ = _renamed(tmp_path, n // 3)
    with pytest.raises(TraceError, match="the trace is of another program"):
        measure(open_dump(folder))


SHAPES = """
import jax, jax.numpy as jnp

@jax.jit
def f(x):
    return jnp.tanh(x @ x.T).sum()

for _ in range(4):
    jax.block_until_ready(f(jnp.ones((32, 16))))
    jax.block_until_ready(f(jnp.ones((64, 8))))
"""


def test_modules_of_one_name_matched_by_ops_are_said_once_and_ties_not_called_idle(
        tmp_path):
    """One function run at two shapes, and jnp.ones at two: two modules jit_f and two
    jit_broadcast_in_dim. The perfetto JSON names modules only by name: the runs of each
    name are matched by their ops, said in one note per module matched (it was one per
    run), and a module whose ops tie with the one matched is not said to have not run."""
    dump = open_dump(profile_program(tmp_path, SHAPES))
    names = [m.name for m in dump.modules]
    assert names.count("jit_f") == 2 and names.count("jit_broadcast_in_dim") == 2
    trace = glob.glob(str(tmp_path / "dump/trace/plugins/profile/*/perfetto_trace.json.gz"))
    m = measure(dump, trace)
    said = [n for n in m.notes if "modules are named jit_broadcast_in_dim" in n]
    assert len(said) == 1 and "8 run(s) were matched" in said[0]
    tie = said[0].split("(so do ")[1].split(":")[0]
    assert all(tie not in n for n in m.notes if "have no events in the trace" in n)
    assert len([n for n in m.notes if "modules are named jit_f" in n]) <= 2
