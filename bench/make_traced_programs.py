"""Write real JAX programs' dumps and profiler traces into ``generated/traced/`` (git-ignored):
the data the runtime benchmark (``bench/runtime_bench.py``) and ``python -m compiler_bridge
train`` learn and test on, beside the two committed sample traces.

Each program runs in its own child process (XLA reads ``XLA_FLAGS`` once per process) with
``JAX_PLATFORMS=cpu``: one warm-up step (compiles), then ``--steps`` steps under
``jax.profiler.trace(<folder>/trace, create_perfetto_trace=True)``. Inputs are NumPy arrays
with fixed seeds, so the only compiled module is the program's own. Object files and LLVM
IR are deleted afterwards (the folders stay small); each folder is an ordinary dump that the
app opens as is.

Measurements are taken in ``--rounds`` rounds: round 1 runs every program once with
``XLA_FLAGS=--xla_dump_to=<folder> --xla_dump_hlo_as_text`` (the dump), each later round
runs every program again in a fresh process (same compilation, no dump) and adds another
profiling session to its ``trace/`` folder; the order of programs rotates between rounds.
Why: these 2 cores are shared with other jobs, and re-measuring a program a minute later
moves its kernels' medians by 10-70% (DESIGN.md section 4: contention, page faults), far
more than the spread between runs of one session. Spreading a program's runs over several
sessions minutes apart gives a label (the median over every run) that reflects the machine
rather than the moment, and lets the benchmark report the noise between sessions.

    .venv/bin/python bench/make_traced_programs.py               # all programs (~6 min, 2 cores)
    .venv/bin/python bench/make_traced_programs.py mlp_s attn_m  # some
    .venv/bin/python bench/make_traced_programs.py --rounds 1    # one session each (faster)
    .venv/bin/python bench/make_traced_programs.py --list
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "generated", "traced")

# name -> (description, builder name, keyword arguments)
PROGRAMS: dict[str, tuple[str, str, dict]] = {
    "mlp_s": ("MLP 256-512-256-10 train step (SGD), batch 64", "mlp",
              dict(sizes=(256, 512, 256, 10), batch=64)),
    "mlp_m": ("MLP 784-1024-1024-10 train step, batch 128", "mlp",
              dict(sizes=(784, 1024, 1024, 10), batch=128)),
    "mlp_l": ("MLP 1024-2048-1024-10 train step, batch 256", "mlp",
              dict(sizes=(1024, 2048, 1024, 10), batch=256)),
    "mlp_deep_infer": ("8-layer 256-wide gelu MLP, inference, batch 512", "mlp_infer",
                       dict(width=256, depth=8, batch=512)),
    "cnn_s": ("CNN 32x32x3 -> conv16 -> conv32 -> pool -> dense, train, batch 16", "cnn",
              dict(hw=32, cin=3, ch=(16, 32), batch=16)),
    "cnn_m": ("CNN 64x64x8 -> conv32 s2 -> conv64 s2 -> pool -> dense, train, batch 8", "cnn",
              dict(hw=64, cin=8, ch=(32, 64), batch=8, stride=2)),
    "attn_s": ("transformer block d64 seq64 4 heads, train, batch 4", "transformer",
               dict(d=64, seq=64, heads=4, batch=4)),
    "attn_m": ("transformer block d128 seq128 4 heads, train, batch 2", "transformer",
               dict(d=128, seq=128, heads=4, batch=2)),
    "attn_deep": ("4 transformer blocks d64 seq32 (unrolled), train, batch 2: wide backward "
                  "fusions", "transformer", dict(d=64, seq=32, heads=4, batch=2, layers=4)),
    "attn_l_infer": ("2 transformer blocks d256 seq256 8 heads, inference, batch 1",
                     "transformer", dict(d=256, seq=256, heads=8, batch=1, layers=2,
                                         train=False)),
    "rnn_scan": ("GRU over 32 steps (lax.scan), hidden 128, batch 16, train", "rnn",
                 dict(hidden=128, inp=64, steps=32, batch=16)),
    "while_solver": ("Jacobi iteration + power iteration (lax.while_loop), 256x256",
                     "solver", dict(n=256)),
    "elementwise": ("elementwise-heavy: gelu/softplus/sin/exp/log/where chains, 3 shapes",
                    "elementwise", dict()),
    "reductions": ("reduction-heavy: softmax, layernorm, axis sums, logsumexp, argmax, "
                   "cumsum, sort/top-k", "reductions", dict()),
    "layout_gather": ("transposes, concat, pad, slices, embedding gather, segment_sum",
                      "layout", dict()),
    "mlp_xs": ("MLP 128-256-10 train step, batch 32", "mlp",
               dict(sizes=(128, 256, 10), batch=32)),
    "mlp_w": ("MLP 2048-1024-10 train step, batch 128", "mlp",
              dict(sizes=(2048, 1024, 10), batch=128)),
    "mlp_infer_512": ("4-layer 512-wide gelu MLP, inference, batch 128", "mlp_infer",
                      dict(width=512, depth=4, batch=128)),
    "mlp_infer_1024": ("3-layer 1024-wide gelu MLP, inference, batch 64", "mlp_infer",
                       dict(width=1024, depth=3, batch=64)),
    "cnn_xs": ("CNN 16x16x3 -> conv8 -> conv16, train, batch 32", "cnn",
               dict(hw=16, cin=3, ch=(8, 16), batch=32)),
    "cnn_wide": ("CNN 32x32x16 -> conv32 -> conv32, train, batch 8", "cnn",
                 dict(hw=32, cin=16, ch=(32, 32), batch=8)),
    "attn_xs": ("transformer block d32 seq16 2 heads, train, batch 8", "transformer",
                dict(d=32, seq=16, heads=2, batch=8)),
    "attn_96": ("transformer block d96 seq48 3 heads, train, batch 4", "transformer",
                dict(d=96, seq=48, heads=3, batch=4)),
    "attn_2l": ("2 transformer blocks d128 seq64 4 heads, train, batch 2", "transformer",
                dict(d=128, seq=64, heads=4, batch=2, layers=2)),
    "attn_512_infer": ("transformer block d512 seq64 8 heads, inference, batch 1",
                       "transformer", dict(d=512, seq=64, heads=8, batch=1, train=False)),
    "rnn_s": ("GRU over 16 steps (lax.scan), hidden 64, batch 8, train", "rnn",
              dict(hidden=64, inp=32, steps=16, batch=8)),
    "rnn_l": ("GRU over 16 steps (lax.scan), hidden 256, batch 32, train", "rnn",
              dict(hidden=256, inp=128, steps=16, batch=32)),
    "while_solver_s": ("Jacobi + power iteration (lax.while_loop), 128x128", "solver",
                       dict(n=128)),
    "while_solver_l": ("Jacobi + power iteration (lax.while_loop), 512x512", "solver",
                       dict(n=512)),
    "elementwise_s": ("elementwise-heavy, shapes 1/8 of `elementwise`", "elementwise",
                      dict(scale=8)),
    "reductions_s": ("reduction-heavy, shapes 1/8 of `reductions`", "reductions",
                     dict(scale=8)),
    "layout_s": ("layout/gather, shapes 1/8 of `layout_gather`", "layout", dict(scale=8)),
    "optimizer_s": ("Adam update over 24 parameter arrays, grad accumulation", "optimizer",
                    dict(n_params=24)),
    "optimizer_wide": ("Adam update over 64 parameter arrays, grad accumulation, global-norm "
                       "clip (a 64-operand fusion)", "optimizer", dict(n_params=64)),
    # one more size of each family, so a held-out program has a sibling on both sides
    "mlp_infer_narrow": ("6-layer 128-wide gelu MLP, inference, batch 256", "mlp_infer",
                         dict(width=128, depth=6, batch=256)),
    "cnn_deep": ("CNN 32x32x8 -> conv16 -> conv16 -> conv32, train, batch 8", "cnn",
                 dict(hw=32, cin=8, ch=(16, 16, 32), batch=8)),
    "attn_m_infer": ("transformer block d128 seq128 4 heads, inference, batch 4",
                     "transformer", dict(d=128, seq=128, heads=4, batch=4, train=False)),
    "attn_l": ("transformer block d256 seq128 8 heads, train, batch 1", "transformer",
               dict(d=256, seq=128, heads=8, batch=1)),
    "rnn_m": ("GRU over 24 steps (lax.scan), hidden 128, batch 8, train", "rnn",
              dict(hidden=128, inp=64, steps=24, batch=8)),
    "while_solver_m": ("Jacobi + power iteration (lax.while_loop), 384x384", "solver",
                       dict(n=384)),
    "elementwise_m": ("elementwise-heavy, shapes 1/2 of `elementwise`", "elementwise",
                      dict(scale=2)),
    "reductions_m": ("reduction-heavy, shapes 1/2 of `reductions`", "reductions",
                     dict(scale=2)),
    "layout_m": ("layout/gather, shapes 1/2 of `layout_gather`", "layout", dict(scale=2)),
    "layout_xs": ("layout/gather, shapes 1/16 of `layout_gather`", "layout", dict(scale=16)),
    "mlp_infer_384": ("4-layer 384-wide gelu MLP, inference, batch 64", "mlp_infer",
                      dict(width=384, depth=4, batch=64)),
    "mlp_infer_thin": ("8-layer 64-wide gelu MLP, inference, batch 1024", "mlp_infer",
                       dict(width=64, depth=8, batch=1024)),
    "mlp_b": ("MLP 512-768-512-10 train step, batch 96", "mlp",
              dict(sizes=(512, 768, 512, 10), batch=96)),
    "cnn_s2": ("CNN 48x48x4 -> conv24 s2 -> conv48 s2, train, batch 4", "cnn",
               dict(hw=48, cin=4, ch=(24, 48), batch=4, stride=2)),
    "attn_long_infer": ("transformer block d64 seq256 2 heads, inference, batch 2",
                        "transformer", dict(d=64, seq=256, heads=2, batch=2, train=False)),
    "attn_192": ("transformer block d192 seq96 6 heads, train, batch 2", "transformer",
                 dict(d=192, seq=96, heads=6, batch=2)),
    "rnn_w": ("GRU over 12 steps (lax.scan), hidden 192, batch 16, train", "rnn",
              dict(hidden=192, inp=96, steps=12, batch=16)),
    "while_solver_xs": ("Jacobi + power iteration (lax.while_loop), 192x192", "solver",
                        dict(n=192)),
    "optimizer_m": ("Adam update over 40 parameter arrays, grad accumulation", "optimizer",
                    dict(n_params=40)),
    "elementwise_xs": ("elementwise-heavy, shapes 1/4 of `elementwise`", "elementwise",
                       dict(scale=4)),
    "reductions_xs": ("reduction-heavy, shapes 1/4 of `reductions`", "reductions",
                      dict(scale=4)),
    "layout_4": ("layout/gather, shapes 1/4 of `layout_gather`", "layout", dict(scale=4)),
}


# --------------------------------------------------------------------------- programs
# Each builder returns (jitted step, args, how to feed the outputs back as next args).

def _mlp(sizes, batch):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    params = [(rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a),
               np.zeros((b,), np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.randint(0, sizes[-1], size=(batch,))
    y = np.eye(sizes[-1], dtype=np.float32)[y]

    def loss(ps, x, y):
        h = x
        for i, (w, b) in enumerate(ps):
            h = h @ w + b
            if i < len(ps) - 1:
                h = jax.nn.relu(h)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h) * y, axis=-1))

    @jax.jit
    def train_step(ps, x, y):
        value, g = jax.value_and_grad(loss)(ps, x, y)
        return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, ps, g), value

    return train_step, (params, x, y), lambda out, args: (out[0],) + args[1:]


def _mlp_infer(width, depth, batch):
    import jax
    import numpy as np
    rng = np.random.RandomState(0)
    ws = [rng.standard_normal((width, width)).astype(np.float32) / np.sqrt(width)
          for _ in range(depth)]
    x = rng.standard_normal((batch, width)).astype(np.float32)

    @jax.jit
    def forward(ws, x):
        for w in ws:
            x = jax.nn.gelu(x @ w)
        return x

    return forward, (ws, x), None


def _cnn(hw, cin, ch, batch, stride=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    rng = np.random.RandomState(0)
    chans = (cin,) + tuple(ch)
    convs = [rng.standard_normal((3, 3, a, b)).astype(np.float32) / np.sqrt(9 * a)
             for a, b in zip(chans[:-1], chans[1:])]
    dense = rng.standard_normal((ch[-1], 10)).astype(np.float32) / np.sqrt(ch[-1])
    x = rng.standard_normal((batch, hw, hw, cin)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=(batch,))]

    def loss(p, x, y):
        cs, d = p
        h = x
        for k in cs:
            h = lax.conv_general_dilated(h, k, (stride, stride), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.relu(h)
        h = jnp.mean(h, axis=(1, 2))
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ d) * y, axis=-1))

    @jax.jit
    def train_step(p, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), value

    return train_step, ((convs, dense), x, y), lambda out, args: (out[0],) + args[1:]


def _transformer(d, seq, heads, batch, layers=1, train=True):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)

    def dense(a, b):
        return rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a)

    params = [{"g1": np.ones(d, np.float32), "wqkv": dense(d, 3 * d), "wo": dense(d, d),
               "g2": np.ones(d, np.float32), "w1": dense(d, 4 * d), "w2": dense(4 * d, d)}
              for _ in range(layers)]
    x = rng.standard_normal((batch, seq, d)).astype(np.float32)

    def ln(x, g):
        m = jnp.mean(x, -1, keepdims=True)
        v = jnp.mean((x - m) ** 2, -1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g

    def block(p, x):
        b, s, _ = x.shape
        dh = d // heads
        qkv = (ln(x, p["g1"]) @ p["wqkv"]).reshape(b, s, 3, heads, dh)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        att = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.float32(np.sqrt(dh))
        att = jnp.where(jnp.tril(jnp.ones((s, s), bool)), att, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(att, -1), v).reshape(b, s, d)
        x = x + o @ p["wo"]
        return x + jax.nn.gelu(ln(x, p["g2"]) @ p["w1"]) @ p["w2"]

    def forward(ps, x):
        for p in ps:
            x = block(p, x)
        return x

    if not train:
        return jax.jit(forward), (params, x), None

    @jax.jit
    def train_step(ps, x):
        value, g = jax.value_and_grad(lambda ps: jnp.mean(forward(ps, x) ** 2))(ps)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, ps, g), value

    return train_step, (params, x), lambda out, args: (out[0],) + args[1:]


def _rnn(hidden, inp, steps, batch):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    rng = np.random.RandomState(0)

    def dense(a, b):
        return rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a)

    p = {"wz": dense(inp + hidden, hidden), "wr": dense(inp + hidden, hidden),
         "wh": dense(inp + hidden, hidden)}
    xs = rng.standard_normal((steps, batch, inp)).astype(np.float32)

    def loss(p, xs):
        def cell(h, x):
            hx = jnp.concatenate([x, h], -1)
            z = jax.nn.sigmoid(hx @ p["wz"])
            r = jax.nn.sigmoid(hx @ p["wr"])
            c = jnp.tanh(jnp.concatenate([x, r * h], -1) @ p["wh"])
            h = (1 - z) * h + z * c
            return h, h
        _, hs = lax.scan(cell, jnp.zeros((xs.shape[1], hidden)), xs)
        return jnp.mean(hs ** 2)

    @jax.jit
    def train_step(p, xs):
        value, g = jax.value_and_grad(loss)(p, xs)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), value

    return train_step, (p, xs), lambda out, args: (out[0],) + args[1:]


def _solver(n):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    rng = np.random.RandomState(0)
    a = rng.standard_normal((n, n)).astype(np.float32) / n
    a = a + np.diag(np.full(n, 2.0, np.float32))   # diagonally dominant
    b = rng.standard_normal((n,)).astype(np.float32)

    @jax.jit
    def solve(a, b):
        d = jnp.diag(a)
        r = a - jnp.diag(d)

        def cond(s):
            x, x_old, i = s
            return jnp.logical_and(jnp.max(jnp.abs(x - x_old)) > 1e-6, i < 100)

        def body(s):
            x, _, i = s
            return (b - r @ x) / d, x, i + 1

        x, _, iters = lax.while_loop(cond, body, (b / d, jnp.zeros_like(b), 0))

        def pbody(i, v):
            w = a @ v
            return w / jnp.linalg.norm(w)
        v = lax.fori_loop(0, 40, pbody, jnp.ones((n,)) / np.sqrt(n))
        return x, iters, v @ (a @ v)

    return solve, (a, b), None


def _elementwise(scale=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    xs = [rng.standard_normal(s).astype(np.float32)
          for s in ((1024 // scale, 1024), (256 // scale, 4096), (64 // scale, 128, 128))]

    @jax.jit
    def f(a, b, c):
        outs = []
        for x in (a, b, c):
            outs.append(jax.nn.gelu(x) * 1.5 + 0.1)
            outs.append(jnp.sin(x) * jnp.cos(2 * x))
            outs.append(jax.nn.softplus(x) - jnp.log1p(jnp.exp(-jnp.abs(x))))
            outs.append(jnp.where(x > 0, x * x, jnp.exp(x) - 1))
            outs.append(jnp.clip(x, -1, 1).astype(jnp.bfloat16).astype(jnp.float32) + x)
        y = a * 2.0
        for _ in range(6):   # a dependent chain cut by transposes: several kernels
            y = jnp.tanh(y).T * 0.9
        outs.append(y)
        return outs

    return f, tuple(xs), None


def _reductions(scale=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    a = rng.standard_normal((512 // scale, 2048)).astype(np.float32)
    b = rng.standard_normal((2048 // scale, 1024)).astype(np.float32)
    c = rng.standard_normal((64 // scale, 64, 64)).astype(np.float32)
    v = rng.standard_normal(((1 << 18) // scale,)).astype(np.float32)

    @jax.jit
    def f(a, b, c, v):
        sm = jax.nn.softmax(a, axis=-1)
        m = jnp.mean(b, -1, keepdims=True)
        lnb = (b - m) * jax.lax.rsqrt(jnp.var(b, -1, keepdims=True) + 1e-5)
        return (sm, lnb, jnp.sum(b, axis=0), jnp.sum(b, axis=1), jnp.max(c, axis=(0, 2)),
                jax.nn.logsumexp(a, axis=0), jnp.argmax(a, axis=-1), jnp.cumsum(c, axis=1),
                jnp.sort(v), jax.lax.top_k(a, 8)[0], jnp.var(c, axis=(1, 2)))

    return f, (a, b, c, v), None


def _layout(scale=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    a = rng.standard_normal((2048 // scale, 1024)).astype(np.float32)
    t = rng.standard_normal((16 // scale, 64, 32, 48)).astype(np.float32)
    table = rng.standard_normal((32000 // scale, 256)).astype(np.float32)
    ids = rng.randint(0, 32000 // scale, size=(4096 // scale,)).astype(np.int32)
    seg = np.sort(rng.randint(0, 512, size=(4096 // scale,))).astype(np.int32)

    @jax.jit
    def f(a, t, table, ids, seg):
        emb = table[ids]
        pooled = jax.ops.segment_sum(emb, seg, num_segments=512)
        return (a.T + 1.0, jnp.transpose(t, (0, 2, 1, 3)) * 2.0,
                jnp.transpose(t, (3, 1, 2, 0)) + 1.0,
                jnp.concatenate([a, a[::-1]], axis=1), jnp.pad(a, ((8, 8), (0, 16))),
                a[:, 128:640] * 3.0, a.reshape(-1, 2048)[:, ::2] + 0.5,
                emb * 2.0, pooled, table.at[ids[:256]].add(1.0))

    return f, (a, t, table, ids, seg), None


def _optimizer(n_params):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    shapes = [((i % 7 + 1) * 32, (i % 5 + 1) * 16) if i % 3 else ((i % 11 + 1) * 64,)
              for i in range(n_params)]
    params = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    m = [np.zeros(s, np.float32) for s in shapes]
    v = [np.zeros(s, np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(2)]

    @jax.jit
    def step(params, m, v, g0, g1):
        g = [(a + b) * 0.5 for a, b in zip(g0, g1)]          # gradient accumulation
        norm = jnp.sqrt(sum(jnp.sum(x * x) for x in g))      # global norm clip
        g = [x * jnp.minimum(1.0, 1.0 / (norm + 1e-6)) for x in g]
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
        params = [p - 1e-3 * a / (jnp.sqrt(b) + 1e-8) for p, a, b in zip(params, m, v)]
        return params, m, v

    return step, (params, m, v, grads[0], grads[1]), \
        lambda out, args: (out[0], out[1], out[2]) + args[3:]


BUILDERS = {"mlp": _mlp, "mlp_infer": _mlp_infer, "cnn": _cnn, "transformer": _transformer,
            "rnn": _rnn, "solver": _solver, "elementwise": _elementwise,
            "reductions": _reductions, "layout": _layout, "optimizer": _optimizer}


def child(name: str, folder: str, steps: int) -> None:
    """Runs inside the child process (XLA_FLAGS already set)."""
    import jax
    _, builder, kwargs = PROGRAMS[name]
    fn, args, feed = BUILDERS[builder](**kwargs)
    import tempfile
    out = jax.block_until_ready(fn(*args))   # compile + warm up
    with tempfile.TemporaryDirectory(dir=folder, prefix=".session-") as tmp:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            for _ in range(steps):
                if feed is not None:
                    args = feed(out, args)
                out = jax.block_until_ready(fn(*args))
        # <folder>/trace/plugins/profile/<session>: a new session beside earlier rounds'
        dest = os.path.join(folder, "trace", "plugins", "profile")
        os.makedirs(dest, exist_ok=True)
        for session in sorted(os.listdir(os.path.join(tmp, "plugins", "profile"))):
            target = os.path.join(dest, session)
            k = 1
            while os.path.exists(target):
                k += 1
                target = os.path.join(dest, f"{session}_{k}")
            shutil.move(os.path.join(tmp, "plugins", "profile", session), target)


# --------------------------------------------------------------------------- driver

def prune(folder: str) -> None:
    for pattern in ("*.o", "*.ll"):
        for p in glob.glob(os.path.join(folder, pattern)):
            os.remove(p)


def make(name: str, steps: int, dump: bool = True) -> float:
    """One session of one program: with ``dump``, a fresh folder with the dump and the
    first trace; else one more profiling session in the existing folder's ``trace/``."""
    folder = os.path.join(OUT, name)
    if dump:
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
    elif not os.path.isdir(folder):
        raise SystemExit(f"[{name}] {folder} does not exist: make it with a dump first")
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    if dump:
        env["XLA_FLAGS"] = f"--xla_dump_to={folder} --xla_dump_hlo_as_text"
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, folder,
                           "--steps", str(steps)], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        print(proc.stdout[-3000:])
        raise SystemExit(f"[{name}] failed with exit code {proc.returncode}")
    if dump:
        prune(folder)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="programs to make (default: all)")
    p.add_argument("--steps", type=int, default=8, help="traced steps per program and round")
    p.add_argument("--rounds", type=int, default=4,
                   help="profiling sessions per program, taken in rounds over all programs")
    p.add_argument("--list", action="store_true")
    p.add_argument("--child", nargs=2, metavar=("NAME", "FOLDER"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.steps)
        return 0
    if args.list:
        for name, (desc, _, _) in PROGRAMS.items():
            print(f"{name:16s} {desc}")
        return 0
    names = args.names or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        raise SystemExit(f"unknown programs: {', '.join(unknown)} (see --list)")
    total = time.perf_counter()
    for r in range(max(args.rounds, 1)):
        shift = (r * 7) % len(names)
        order = names if r == 0 else names[shift:] + names[:shift]
        for name in order:
            secs = make(name, args.steps, dump=(r == 0))
            print(f"[round {r + 1}/{args.rounds}] [{name}] {secs:5.1f} s -> "
                  f"{os.path.relpath(os.path.join(OUT, name), ROOT)}", flush=True)
    print(f"{len(names)} programs x {args.rounds} sessions in "
          f"{time.perf_counter() - total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
