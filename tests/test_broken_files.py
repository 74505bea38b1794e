"""A dump with a half-written after-optimizations file and a 0-byte one (a run killed while
XLA wrote it, a disk that filled): each command still reports every other module, and says
which file could not be read and what was expected there."""

from __future__ import annotations

import json

from compiler_bridge import open_dump
from tests.support.cli import run
from tests.support.fresh import compile_program

# a program on 2 devices whose ENTRY is sharded and has a collective, called on an array
# of one device: JAX compiles helpers beside it (iota, reshape, resharding)
SHARDED = """
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
f = jax.jit(lambda x: (x * 2).sum(axis=0), in_shardings=NamedSharding(mesh, P("x")))
ARGS = (jnp.arange(32.0).reshape(8, 4),)
"""


def _damaged(tmp_path):
    """The dump, with one helper's HLO files emptied (``collectives`` reads the
    after-optimizations one, ``shardings`` the before-optimizations one); the program's
    module and the helper's."""
    dump, _ = compile_program(tmp_path, SHARDED, "--xla_dump_hlo_as_text "
                              "--xla_force_host_platform_device_count=2")
    d = open_dump(dump)
    program = d.main
    helper = next(m for m in d.modules if m is not program and m.after_optimizations)
    for f in (helper.before_optimizations, helper.after_optimizations):
        (dump / f.path).write_bytes(b"")
    return dump, program, helper


def test_one_empty_file_hides_no_other_module_from_collectives_and_shardings(tmp_path):
    dump, program, helper = _damaged(tmp_path)
    for command, key in (("collectives", "collectives"), ("shardings", "parameters")):
        done = run(command, "--json", str(dump))
        # the rest is reported; the broken module is an error naming its file, and the
        # exit code says something was left out
        reports = {r["name"]: r for r in json.loads(done.stdout)["modules"]}
        assert program.name in reports, (command, done.stderr)
        assert done.returncode == 1, command
        assert ".txt: empty file: expected 'HloModule <name>'" in done.stderr, command
        assert f"module {helper.label}" in done.stderr, command
        assert "Traceback" not in done.stderr
    done = run("collectives", str(dump))
    assert done.returncode == 1 and f"module {program.name}:" in done.stdout
    reports = json.loads(run("collectives", "--json", str(dump)).stdout)["modules"]
    program_report = next(r for r in reports if r["name"] == program.name)
    assert any(c["opcode"].startswith("all-") for c in program_report["collectives"])
