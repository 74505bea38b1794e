"""Memory on programs no sample holds: the dump's totals and peak (``compiler_bridge.memory``)
against XLA's ``compiled.memory_analysis()`` of the same compile, for H100 and TPU v5e,
v6e and v5p, compiled here without the hardware.

Four programs (an MLP train step with donated weights, attention, a scan, a 2×2-sharded
train step) are compiled for each target in a child process of the backends venv (the one
``make samples-backends`` makes: jax with libtpu and the CUDA plugin) with
``--xla_dump_to``; the child records ``memory_analysis()``; this process reads the dumps.

    .venv/bin/python -m bench.accuracy.memory_targets [--venv .venv-backends] [--no-write]
"""

from __future__ import annotations

import sys

from bench.accuracy.memory_child import FIELDS, bench_args, child_script, measure
from bench.common import command, machine, publish

TARGETS = ("h100", "v5e:2x2", "v6e:2x2", "v5p:2x2x1")

CHILD = child_script(r'''
if target == "h100":
    topo = topologies.get_topology_desc(platform="cuda", topology_name="",
                                        target_config=open(h100).read(), topology="1x1x4")
else:
    topo = topologies.get_topology_desc(platform="tpu", topology_name=target)
devs = list(topo.devices)
one = NamedSharding(Mesh(np.array(devs[:1]), ("x",)), P())
mesh = Mesh(np.array(devs[:4]).reshape(2, 2), ("d", "m"))

def S(shape, dtype=jnp.float32, sh=one):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=sh)

def big_mlp(ws, x):
    def loss(ws, x):
        for w in ws:
            x = jax.nn.gelu(x @ w)
        return (x ** 2).mean()
    return [w - 1e-3 * g for w, g in zip(ws, jax.grad(loss)(ws, x))]

def attention(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 8.0
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

def rnn(h, xs, w):
    return jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x),) * 2, h, xs)

def sharded(w1, w2, x):
    def loss(w1, w2, x):
        return jnp.mean(jax.nn.relu(x @ w1) @ w2)
    g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x)
    return w1 - 0.1 * g1, w2 - 0.1 * g2

programs = {
    "big_mlp": (big_mlp, ([S((2048, 4096)), S((4096, 4096)), S((4096, 2048))],
                          S((512, 2048))), {"donate_argnums": (0,)}),
    "attention": (attention, (S((4, 8, 1024, 64), jnp.bfloat16),) * 3, {}),
    "rnn": (rnn, (S((64, 256)), S((50, 64, 256)), S((256, 256))), {}),
    "sharded": (sharded, (S((1024, 4096), sh=NamedSharding(mesh, P("d", "m"))),
                          S((4096, 1024), sh=NamedSharding(mesh, P("m", "d"))),
                          S((256, 1024), sh=NamedSharding(mesh, P("d", None)))), {}),
}
''')


def _cell(xla: int, ours: int | None) -> str:
    if ours == xla:
        return "="
    if ours is None or xla == 0:
        return f"{ours} vs {xla}"
    return f"{(ours - xla) / xla:+.1%}"


def main(argv: list[str] | None = None) -> int:
    args = bench_args(__doc__, argv, TARGETS)
    if args is None:
        return 2
    lines = ["## Memory: memory_analysis() on programs no sample holds", "",
             f"Command: {command()} — {machine()}. Four programs compiled here without the "
             "hardware for each target; each figure of the dump against XLA's "
             "`memory_analysis()` of the same compile: `=` equal to the byte, else the "
             "difference. ARCHITECTURE.md §9.9 says where each rule comes from.", "",
             "| target | program | " + " | ".join(f[0] for f in FIELDS) + " |",
             "|---|---|" + "---:|" * len(FIELDS)]
    exact = total = 0
    for target, name, cells in measure(args.python, args.targets.split(","), CHILD):
        total += 1
        exact += cells["peak"][0] == cells["peak"][1]
        lines.append(f"| {target} | {name} | " + " | ".join(
            _cell(*cells[label]) for label, _, _ in FIELDS) + " |")
    lines += ["", f"Peak equal to the byte on {exact} of {total} modules."]
    publish("memory_targets", lines, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
