"""Data + model parallel train step on 8 host devices: a 2-layer MLP over a 4x2 mesh
("data", "model"), batch split over "data", the layers split over "model" (column- then
row-parallel, as Megatron does) and, FSDP-style, the first layer's weight split over
"data" too; a token shift (``jnp.roll`` over the batch) and a resharding of the hidden
activation make XLA's SPMD partitioner insert every kind of collective: all-gather,
reduce-scatter, all-reduce, all-to-all and collective-permute. float32, SGD.

The jitted function is ``train_step(params, x, y)`` (XLA module ``jit_train_step``).
Needs ``--xla_force_host_platform_device_count=8`` in XLA_FLAGS (``make_samples.py`` sets
it). Besides the dump it writes ``<dump_dir>/spmd_facts.json``: what XLA and jaxlib say of
this compile, the expected values of the tests — the ENTRY parameters' and outputs'
shardings as jaxlib's ``HloSharding`` prints them, each device's slice of each parameter
(``NamedSharding.devices_indices_map``), the opcode counts of XLA's own parse of the
after-optimizations text and each collective as XLA prints it.

Usage (normally via ``sample_dumps/make_samples.py spmd_train``):
    python spmd_train.py [dump_dir] [--trace]
"""
import glob
import json
import os
import re
import sys
from collections import Counter

import numpy as np

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

D_IN, HIDDEN, D_OUT, BATCH = 16, 32, 8, 16
LR = 0.1

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
PARAM_SPECS = {"w1": P("data", "model"), "b1": P("model"), "w2": P("model", None), "b2": P()}
PARAM_SHARDINGS = {k: NamedSharding(mesh, s) for k, s in PARAM_SPECS.items()}
BATCH_SHARDING = NamedSharding(mesh, P("data", None))


def loss_fn(params, x, y):
    x = x + 0.5 * jnp.roll(x, 1, axis=0)              # token shift: collective-permute
    h = jax.nn.relu(x @ params["w1"] + params["b1"])  # column-parallel
    # the hidden activation split the other way round: all-to-all
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("model", "data")))
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("data", "model")))
    out = h @ params["w2"] + params["b2"]              # row-parallel: all-reduce
    return jnp.mean((out - y) ** 2)


def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    return params, loss


step = jax.jit(train_step,
               in_shardings=(PARAM_SHARDINGS, BATCH_SHARDING, BATCH_SHARDING),
               out_shardings=(PARAM_SHARDINGS, NamedSharding(mesh, P())))


def xla_facts(dump_dir, compiled, args):
    """What XLA and jaxlib say of this compile (the tests' expected values)."""
    from jaxlib import _hlo as hlo
    [after] = glob.glob(os.path.join(dump_dir, "module_*.jit_train_step.cpu_after_optimizations.txt"))
    module = hlo.hlo_module_from_text(open(after, encoding="utf-8").read())
    opcodes, collectives = Counter(), []
    kinds = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
    for comp in module.computations():
        for inst in comp.instructions():
            text = inst.to_string()
            # the opcode as XLA prints it (an async wrapper is named after its op)
            opcode = re.match(r"(?:ROOT )?%?[\w.\-]+ = .*? ([a-z][\w\-]*)\(", text).group(1)
            opcodes[opcode] += 1
            if opcode.startswith(kinds):
                collectives.append({"name": inst.name, "opcode": opcode, "xla_text": text})
    flat_args, _ = jax.tree_util.tree_flatten(args)
    in_shardings, _ = jax.tree_util.tree_flatten(compiled.input_shardings)
    out_shardings, _ = jax.tree_util.tree_flatten(compiled.output_shardings)
    out_shapes = [a.shape for a in jax.tree_util.tree_leaves(compiled.out_info)]

    def sharding(s, shape):
        hs = s._to_xla_hlo_sharding(len(shape))
        indices = s.devices_indices_map(shape)
        return {"shape": list(shape), "hlo_sharding": str(hs),
                "spec": [None if a is None else a for a in s.spec] if hasattr(s, "spec")
                else None,
                "device_slices": {str(d.id): [[sl.start, sl.stop] for sl in idx]
                                  for d, idx in sorted(indices.items(), key=lambda kv: kv[0].id)}}

    return {
        "made_by": "sample_dumps/programs/spmd_train.py",
        "mesh": {"axes": list(mesh.axis_names), "shape": [4, 2],
                 "devices": [d.id for d in mesh.devices.flat]},
        "num_devices": len(jax.devices()),
        "module": "jit_train_step",
        "after_optimizations": os.path.basename(after),
        "entry_parameters": [sharding(s, a.shape) for s, a in zip(in_shardings, flat_args)],
        "entry_outputs": [sharding(s, shape) for s, shape in zip(out_shardings, out_shapes)],
        "opcodes": dict(sorted(opcodes.items())),
        "collectives": collectives,
        "versions": {"jax": jax.__version__},
    }


def main():
    dump_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    assert len(jax.devices()) == 8, "needs --xla_force_host_platform_device_count=8"
    rng = np.random.RandomState(0)
    params = {"w1": rng.standard_normal((D_IN, HIDDEN)).astype(np.float32) / 4,
              "b1": np.zeros((HIDDEN,), np.float32),
              "w2": rng.standard_normal((HIDDEN, D_OUT)).astype(np.float32) / 6,
              "b2": np.zeros((D_OUT,), np.float32)}
    params = {k: jax.device_put(v, PARAM_SHARDINGS[k]) for k, v in params.items()}
    x = jax.device_put(rng.standard_normal((BATCH, D_IN)).astype(np.float32), BATCH_SHARDING)
    y = jax.device_put(rng.standard_normal((BATCH, D_OUT)).astype(np.float32), BATCH_SHARDING)
    args = (params, x, y)
    params, loss = jax.block_until_ready(step(*args))  # compile + warm up
    print(f"warm-up loss {float(loss):.4f}")
    facts = xla_facts(dump_dir, step.lower(*args).compile(), args)  # the same executable
    with open(os.path.join(dump_dir, "spmd_facts.json"), "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=1)
        f.write("\n")
    with jax.profiler.trace(os.path.join(dump_dir, "trace"), create_perfetto_trace=True):
        for _ in range(3):
            params, loss = jax.block_until_ready(step(params, x, y))
    print(f"after 3 traced steps: loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
