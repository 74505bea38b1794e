"""XLA:TPU's memory figures on many small variants: the programs that tested the rules of
ARCHITECTURE.md §9.9 (temp rounded per 16 KiB chunk, the ConcatBitcast in VMEM) and that
show what is left (v5p's temp of MLP steps with donation and of sharded steps).

26 programs (MLP steps with and without donation at several batch sizes, one with relu,
grads only, a chain of matmuls, layer norm, a convolution, a sort, a train step sharded
2x2 and 4x1) compiled for TPU v5e, v6e and v5p
without the hardware, in a child process of the backends venv with ``--xla_dump_to``; each
module's totals and peak from the dump against ``memory_analysis()``.

    .venv/bin/python -m bench.accuracy.tpu_memory_variants [--venv .venv-backends] [--no-write]
"""

from __future__ import annotations

import sys

from bench.accuracy.memory_child import FIELDS, bench_args, child_script, measure
from bench.common import command, machine, publish

TARGETS = ("v5e:2x2", "v6e:2x2", "v5p:2x2x1")

CHILD = child_script(r'''
topo = topologies.get_topology_desc(platform="tpu", topology_name=target)
one = NamedSharding(Mesh(np.array(list(topo.devices)[:1]), ("x",)), P())
S = lambda shape: jax.ShapeDtypeStruct(shape, jnp.float32, sharding=one)
devs = list(topo.devices)[:4]
mesh, row = Mesh(np.array(devs).reshape(2, 2), ("d", "m")), Mesh(np.array(devs), ("d",))

def on(mesh, shape, *spec):
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(mesh, P(*spec)))

def mlp_loss(ws, x, act=jax.nn.gelu):
    for w in ws:
        x = act(x @ w)
    return (x ** 2).mean()

def step(ws, x):
    return [w - 1e-3 * g for w, g in zip(ws, jax.grad(mlp_loss)(ws, x))]

def step_relu(ws, x):
    g = jax.grad(lambda ws, x: mlp_loss(ws, x, jax.nn.relu))(ws, x)
    return [w - 1e-3 * gi for w, gi in zip(ws, g)]

def sharded(w1, w2, x):
    def loss(w1, w2, x):
        return jnp.mean(jax.nn.relu(x @ w1) @ w2)
    g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x)
    return w1 - 0.1 * g1, w2 - 0.1 * g2

def grads(ws, x):
    return jax.grad(mlp_loss)(ws, x)

def chain(x, w):
    for _ in range(4):
        x = jnp.tanh(x @ w)
    return x

def fwd(x, ws):
    for w in ws:
        x = jax.nn.gelu(x @ w)
    return x

def norm(x, g):
    m = x.mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * g

def conv(x, k):
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

def sort_sum(x):
    return jnp.sort(x, axis=-1), jnp.cumsum(x, axis=0)

def ws(*dims):
    return [S((a, b)) for a, b in zip(dims, dims[1:])]

programs = {
    "chain": (chain, (S((512, 1024)), S((1024, 1024))), {}),
    "fwd2": (fwd, (S((512, 2048)), ws(2048, 4096, 2048)), {}),
    "norm": (norm, (S((4096, 1024)), S((1024,))), {}),
    "conv": (conv, (S((8, 64, 64, 64)), S((3, 3, 64, 128))), {}),
    "sort": (sort_sum, (S((512, 1024)),), {}),
    "grads1": (grads, (ws(1024, 1024), S((256, 1024))), {}),
    "grads2": (grads, (ws(1024, 2048, 1024), S((256, 1024))), {}),
    "grads3": (grads, (ws(2048, 4096, 4096, 2048), S((512, 2048))), {}),
    "step1": (step, (ws(2048, 2048), S((512, 2048))), {}),
    "step1_donated": (step, (ws(2048, 2048), S((512, 2048))), {"donate_argnums": (0,)}),
    "step2": (step, (ws(2048, 4096, 2048), S((512, 2048))), {}),
    "step2_donated": (step, (ws(2048, 4096, 2048), S((512, 2048))), {"donate_argnums": (0,)}),
    "step3_small": (step, (ws(1024, 2048, 2048, 1024), S((256, 1024))), {"donate_argnums": (0,)}),
    "step3_narrow": (step, (ws(2048, 2048, 2048, 2048), S((512, 2048))), {"donate_argnums": (0,)}),
    "step3_640_donated": (step, (ws(2048, 4096, 4096, 2048), S((640, 2048))),
                          {"donate_argnums": (0,)}),
    "step3_relu_donated": (step_relu, (ws(2048, 4096, 4096, 2048), S((512, 2048))),
                           {"donate_argnums": (0,)}),
    "sharded_2x2": (sharded, (on(mesh, (2048, 4096), "d", "m"), on(mesh, (4096, 2048), "m", "d"),
                              on(mesh, (512, 2048), "d", None)), {}),
    "sharded_rows": (sharded, (on(row, (1024, 4096), "d", None), on(row, (4096, 1024), "d", None),
                               on(row, (256, 1024), "d", None)), {}),
}
for rows in (256, 512, 768, 1024):
    for donated in (False, True):
        programs[f"step3_{rows}" + ("_donated" if donated else "")] = (
            step, (ws(2048, 4096, 4096, 2048), S((rows, 2048))),
            {"donate_argnums": (0,)} if donated else {})
''')


def main(argv: list[str] | None = None) -> int:
    args = bench_args(__doc__, argv)
    if args is None:
        return 2
    off: list[str] = []
    exact = {label: 0 for label, _, _ in FIELDS}
    total = 0
    for target, name, cells in measure(args.python, TARGETS, CHILD):
        total += 1
        for label, _, _ in FIELDS:
            xla, ours = cells[label]
            if ours == xla:
                exact[label] += 1
            else:
                off.append(f"| {target} | {name} | {label} | {xla:,} | {ours:,} | "
                           f"{(ours or 0) - xla:+,} |")
    lines = ["## Memory: XLA:TPU's figures on 26 small variants (ARCHITECTURE.md §9.9)", "",
             f"Command: {command()} — {machine()}. MLP steps with and without donation at "
             "several batch sizes (one with relu), grads only, a chain of matmuls, "
             "layer norm, a convolution, a sort, a train step sharded 2x2 and 4x1; compiled here without the hardware for each TPU; each "
             "figure of the dump against `memory_analysis()` of the same compile.", "",
             f"Equal to the byte, of {total} modules: " + ", ".join(
                 f"{label} {n}" for label, n in exact.items()) + ".", ""]
    if off:
        lines += ["| target | program | figure | XLA | dump | difference |",
                  "|---|---|---|---:|---:|---:|", *off]
    publish("tpu_memory_variants", lines, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
