"""Memory figures of programs compiled here for XLA:TPU (no sample holds them) against XLA's
own ``memory_analysis()`` of the same compile."""

from __future__ import annotations

import pytest

from compiler_bridge import open_dump
from compiler_bridge.memory import module_memory
from tests.support.backend_fresh import compile_for

HOST_OFFLOAD = r"""
one = Mesh(np.array(DEVICES[:1]), ("z",))
host = NamedSharding(one, P(), memory_kind="pinned_host")
dev = NamedSharding(one, P(), memory_kind="device")
def offload(x, w, h):
    y = jnp.tanh(x @ w) + jax.device_put(h, dev).sum(0)
    return y * 2, jax.device_put(y, host)
PROGRAMS = {"offload": (offload, (S((1024, 1024), dev), S((1024, 1024), dev),
                                  S((512, 1024), host)), {"out_shardings": (dev, host)})}
"""


@pytest.fixture(scope="module")
def v5e_offload(tmp_path_factory):
    dump, facts = compile_for("v5e", tmp_path_factory.mktemp("offload"), HOST_OFFLOAD)
    assert "memory_analysis" in facts["offload"], facts
    return dump, facts["offload"]["memory_analysis"]


def test_host_memory_kinds_enter_the_peak_and_the_host_totals(v5e_offload):
    """An argument and an output in jax's ``pinned_host`` memory (the host space, color 5)
    live for the whole run: XLA's peak counts them. Before, the peak left them out (6 MiB,
    27%, under XLA's) and no figure said the host bytes."""
    dump, want = v5e_offload
    assert want["host_argument_size_in_bytes"] and want["host_output_size_in_bytes"]
    d = open_dump(str(dump))
    got = module_memory(d, d.main).to_json()
    for ours, xla in (("argument_bytes", "argument_size_in_bytes"),
                      ("output_bytes", "output_size_in_bytes"),
                      ("alias_bytes", "alias_size_in_bytes"),
                      ("temp_bytes", "temp_size_in_bytes"),
                      ("peak_bytes", "peak_memory_in_bytes"),
                      ("host_argument_bytes", "host_argument_size_in_bytes"),
                      ("host_output_bytes", "host_output_size_in_bytes"),
                      ("host_alias_bytes", "host_alias_size_in_bytes"),
                      ("host_temp_bytes", "host_temp_size_in_bytes")):
        assert got.get(ours) == want[xla], ours
