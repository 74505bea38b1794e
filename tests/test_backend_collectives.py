"""Collectives of programs compiled here for XLA:GPU and XLA:TPU (no sample holds them),
against what XLA wrote: one row per collective op of the after-optimizations text, each with
the groups of its own ``replica_groups``.

XLA:GPU runs an all-to-all or a reduce-scatter asynchronously through an ``async-start``
wrapper whose ``calls=`` computation holds the op itself (with ``replica_groups``); the
wrapper has no groups of its own."""

from __future__ import annotations

import re

import pytest

from compiler_bridge import open_dump
from compiler_bridge.spmd import module_collectives, module_shardings
from tests.support.backend_fresh import SCAN_FSDP, compile_for

SHARD_MAP = r"""
def a2a(x):
    def body(x):
        y = jax.lax.all_to_all(x, "x", 0, 1, tiled=True)
        z = jax.lax.psum_scatter(y * 2, "y", scatter_dimension=0, tiled=True)
        return jax.lax.all_gather(z, "y", axis=0, tiled=True)
    return shard_map(body, mesh=MESH, in_specs=P("x", "y"), out_specs=P("x", "y"))(x)
PROGRAMS = {"a2a": (a2a, (S((512, 512), on("x", "y")),), {})}
"""

_OP = re.compile(r"^\s*(?:ROOT )?%(\S+) = .*? (all-to-all|reduce-scatter|all-gather-start|"
                 r"all-reduce|all-gather|all-reduce-start|collective-permute(?:-start)?)\(.*?"
                 r"replica_groups=\{(\{[\d,{}]*\})\}", re.M)


@pytest.fixture(scope="module")
def gpu_a2a(tmp_path_factory):
    dump, facts = compile_for("h100", tmp_path_factory.mktemp("a2a"), SHARD_MAP)
    assert "memory_analysis" in facts["a2a"], facts
    return dump


def test_an_async_wrapped_collective_is_one_row_with_its_ops_groups(gpu_a2a):
    """Before: the all-to-all and the reduce-scatter were each listed twice — as the op
    inside the async computation (sync) and as the async-start, whose missing groups were
    read as every device (n=4, a reduce-scatter's sent bytes 3x XLA's groups' figure)."""
    d = open_dump(str(gpu_a2a))
    m = d.main
    text = d.read_text(m.after_optimizations.path)
    # XLA's own: each collective op it wrote and its groups
    want = {op.removesuffix("-start"): [[int(x) for x in g.split(",")]
                                         for g in re.findall(r"\{([\d,]+)\}", groups)]
            for _, op, groups in _OP.findall(text)}
    assert set(want) == {"all-to-all", "reduce-scatter", "all-gather"}
    rows = module_collectives(d, m)["collectives"]
    assert sorted(r["kind"] for r in rows) == sorted(want)
    for r in rows:
        assert r["async"], r["name"]               # XLA:GPU runs all three async
        assert r["groups"] == want[r["kind"]], r["name"]
        n, b = len(want[r["kind"]][0]), r["result_bytes"]
        assert r["group_size"] == n == 2
        assert r["sent_bytes"] == {"reduce-scatter": (n - 1) * b}.get(r["kind"],
                                                                        (n - 1) * b // n)
        assert r["source"], r["name"]


SHARD_MAP_OUTPUTS = r"""
def two(x, w):
    def body(x, w):
        y = jax.lax.psum(x @ w, "y")
        return y, jax.lax.ppermute(y, "x", [(0, 1), (1, 0)])
    return shard_map(body, mesh=MESH, in_specs=(P("x", "y"), P("y", None)),
                     out_specs=(P("x", None), P(None, "x")))(x, w)
PROGRAMS = {"two": (two, (S((512, 1024), on("x", "y")), S((1024, 512), on("y", None))), {})}
"""


def test_a_shard_map_s_outputs_have_the_shardings_jax_gives_them(tmp_path):
    """A shard_map's result is a ``xla.sdy.LocalToGlobalShape`` custom call with no
    ``sharding=``: its sharding is the ``xla.sdy.out_shardings`` its out_specs wrote. Before,
    the ``shardings`` command said none for the outputs of every shard_map program."""
    dump, facts = compile_for("v5e", tmp_path, SHARD_MAP_OUTPUTS)
    want = facts["two"]["outputs"]
    d = open_dump(str(dump))
    outputs = module_shardings(d, d.main)["outputs"]
    assert len(outputs) == len(want) == 2
    for got, jax_says in zip(outputs, want):
        assert got["sharding"], got["name"]
        assert got["per_device_shape"] == jax_says["shard_shape"], got["name"]
        axes = [a if isinstance(a, list) else [a] if a else [] for a in jax_says["spec"]]
        axes += [[]] * (len(got["per_device_shape"]) - len(axes))
        assert got["mesh_axes"] == axes, got["name"]


def test_a_combined_collective_without_metadata_has_a_cause(tmp_path):
    """XLA:GPU combines the gradient's two all-reduces (over y, then x) into one over every
    device, with a new channel_id and no metadata. The partitioner inserted both: the
    combined one's cause is theirs, found by kind and shape in the partitioner's output.
    Before, it had no cause and no source line."""
    dump, _ = compile_for("h100", tmp_path, SCAN_FSDP)
    d = open_dump(str(dump))
    text = d.read_text(d.main.after_optimizations.path)
    bare = re.findall(r"%(all-reduce-start\S*) = .* metadata=\{scheduling_name", text)
    assert bare                                     # XLA wrote it without an op_name
    rows = {r["name"]: r for r in module_collectives(d, d.main)["collectives"]}
    for name in bare:
        assert rows[name]["cause"] is not None, name
        assert rows[name]["source"], name
