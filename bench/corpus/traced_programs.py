"""The traced corpus's programs: the plain-JAX builders below and the library families of
``bench.corpus.families``, each in sizes, dtypes and modes (``PROGRAMS``), and the XLA
configurations some are compiled with (``CONFIGS``); ``compile_program`` compiles one. What
the corpus is and why: ``bench/corpus/make_traced_programs.py``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# name -> (description, builder name, keyword arguments)
_PLAIN: dict[str, tuple[str, str, dict]] = {
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




class Program(NamedTuple):
    """One corpus program. Index 1 is the family (``runtime_bench`` reads ``[1]``)."""
    description: str
    family: str
    kwargs: dict
    builder: str
    library: str = "jax"
    dtype: str = "float32"
    mode: str = "train"         # 'train' (a training/update step) or 'infer'
    base: str = ""              # configuration variants: the program compiled otherwise
    config: str = ""


def _plain_mode(name: str, builder: str, kwargs: dict) -> str:
    if builder in ("mlp", "cnn", "rnn", "optimizer"):
        return "train"
    if builder == "transformer":
        return "train" if kwargs.get("train", True) else "infer"
    return "infer"


PROGRAMS: dict[str, Program] = {
    n: Program(d, b, kw, b, "jax", "float32", _plain_mode(n, b, kw)) for n, (d, b, kw) in
    _PLAIN.items()}

# family -> (builder, library, sizes as (tag, kwargs), variants)
TRAIN_INFER = (("float32", True), ("bfloat16", True), ("float32", False), ("bfloat16", False))
ONE_MODE = (("float32", False), ("bfloat16", False))
FAMILIES: dict[str, tuple[str, str, list[tuple[str, dict]], tuple]] = {
    "resnet": ("resnet", "flax.linen", [
        ("xs", dict(depth=2, width=8, hw=16, batch=8)),
        ("s", dict(depth=2, width=16, hw=32, batch=8)),
        ("m", dict(depth=4, width=16, hw=32, batch=8)),
        ("l", dict(depth=4, width=32, hw=32, batch=4)),
        ("xl", dict(depth=6, width=16, hw=64, batch=2))], TRAIN_INFER),
    "unet": ("unet", "flax.linen", [
        ("xs", dict(levels=2, width=8, hw=16, batch=4)),
        ("s", dict(levels=2, width=16, hw=32, batch=4)),
        ("m", dict(levels=3, width=16, hw=32, batch=4)),
        ("l", dict(levels=3, width=32, hw=32, batch=2)),
        ("xl", dict(levels=3, width=16, hw=64, batch=2))], TRAIN_INFER),
    "lstm": ("lstm", "flax.linen", [
        ("xs", dict(hidden=32, inp=16, steps=16, batch=8)),
        ("s", dict(hidden=64, inp=32, steps=32, batch=16)),
        ("m", dict(hidden=128, inp=64, steps=32, batch=16)),
        ("l", dict(hidden=256, inp=64, steps=24, batch=32)),
        ("deep", dict(hidden=96, inp=32, steps=24, batch=16, layers=2))], TRAIN_INFER),
    "mha_linen": ("mha_linen", "flax.linen", [
        ("xs", dict(d=32, heads=2, seq=16, batch=4)),
        ("s", dict(d=64, heads=4, seq=32, batch=4)),
        ("m", dict(d=128, heads=4, seq=64, batch=2, kv_seq=96)),
        ("l", dict(d=256, heads=8, seq=64, batch=2)),
        ("long", dict(d=64, heads=4, seq=256, batch=1, kv_seq=128))], TRAIN_INFER),
    "wavenet": ("wavenet", "flax.linen", [
        ("xs", dict(channels=16, layers=4, length=512, batch=2)),
        ("s", dict(channels=32, layers=6, length=1024, batch=2)),
        ("m", dict(channels=32, layers=10, length=2048, batch=2)),
        ("l", dict(channels=64, layers=8, length=2048, batch=1)),
        ("long", dict(channels=16, layers=12, length=8192, batch=1))], TRAIN_INFER),
    "mobilenet": ("mobilenet", "flax.linen", [
        ("xs", dict(width=8, blocks=3, hw=32, batch=4)),
        ("s", dict(width=16, blocks=3, hw=32, batch=4)),
        ("m", dict(width=16, blocks=6, hw=64, batch=2)),
        ("l", dict(width=32, blocks=6, hw=32, batch=4)),
        ("xl", dict(width=24, blocks=9, hw=64, batch=2))], TRAIN_INFER),
    "dcgan": ("dcgan", "flax.linen", [
        ("xs", dict(z=32, width=8, hw=16, batch=8)),
        ("s", dict(z=64, width=16, hw=16, batch=8)),
        ("m", dict(z=64, width=16, hw=32, batch=8)),
        ("l", dict(z=128, width=32, hw=32, batch=4)),
        ("xl", dict(z=100, width=16, hw=64, batch=2))], TRAIN_INFER),
    "vit": ("vit", "flax.nnx", [
        ("xs", dict(d=32, depth=2, heads=2, patch=4, hw=16, batch=8)),
        ("s", dict(d=64, depth=2, heads=4, patch=4, hw=32, batch=4)),
        ("m", dict(d=96, depth=4, heads=4, patch=4, hw=32, batch=4)),
        ("l", dict(d=192, depth=4, heads=6, patch=8, hw=64, batch=2)),
        ("deep", dict(d=64, depth=8, heads=4, patch=8, hw=32, batch=8))], TRAIN_INFER),
    "mixer": ("mixer", "flax.nnx", [
        ("xs", dict(d=32, depth=2, patch=4, hw=16, batch=8)),
        ("s", dict(d=64, depth=4, patch=4, hw=32, batch=4)),
        ("m", dict(d=128, depth=4, patch=4, hw=32, batch=4)),
        ("l", dict(d=256, depth=6, patch=8, hw=64, batch=2)),
        ("deep", dict(d=64, depth=12, patch=8, hw=32, batch=8))], TRAIN_INFER),
    "recsys": ("recsys", "flax.nnx", [
        ("xs", dict(tables=4, rows=1000, dim=16, batch=64)),
        ("s", dict(tables=8, rows=5000, dim=32, batch=128)),
        ("m", dict(tables=8, rows=20000, dim=64, batch=256, hot=8)),
        ("l", dict(tables=16, rows=10000, dim=32, batch=512)),
        ("wide", dict(tables=26, rows=4000, dim=16, batch=256, hot=2))], TRAIN_INFER),
    "norms": ("norms", "flax.nnx", [
        ("xs", dict(width=64, tokens=16, batch=8)),
        ("s", dict(width=128, tokens=64, batch=8)),
        ("m", dict(width=256, tokens=64, batch=16, groups=16)),
        ("l", dict(width=512, tokens=128, batch=8, groups=32)),
        ("long", dict(width=128, tokens=512, batch=8, groups=4))], TRAIN_INFER),
    "gpt_unrolled": ("gpt", "equinox", [
        ("xs", dict(d=32, layers=2, heads=2, seq=32, batch=4, vocab=256)),
        ("s", dict(d=64, layers=2, heads=4, seq=64, batch=4)),
        ("m", dict(d=128, layers=4, heads=4, seq=64, batch=2, vocab=1024)),
        ("l", dict(d=192, layers=4, heads=6, seq=128, batch=2, vocab=2048)),
        ("deep", dict(d=64, layers=8, heads=4, seq=64, batch=2))], TRAIN_INFER),
    "gpt_scan": ("gpt", "equinox", [
        ("xs", dict(d=32, layers=2, heads=2, seq=32, batch=4, vocab=256, scan=True)),
        ("s", dict(d=64, layers=4, heads=4, seq=64, batch=4, scan=True)),
        ("m", dict(d=128, layers=4, heads=4, seq=64, batch=2, vocab=1024, scan=True)),
        ("l", dict(d=192, layers=6, heads=6, seq=128, batch=2, vocab=2048, scan=True)),
        ("deep", dict(d=64, layers=12, heads=4, seq=64, batch=2, scan=True))], TRAIN_INFER),
    "gru_eqx": ("gru_eqx", "equinox", [
        ("xs", dict(hidden=32, inp=16, steps=16, batch=8)),
        ("s", dict(hidden=64, inp=32, steps=32, batch=16)),
        ("m", dict(hidden=128, inp=64, steps=32, batch=16)),
        ("l", dict(hidden=256, inp=128, steps=24, batch=32)),
        ("long", dict(hidden=64, inp=16, steps=128, batch=8))], TRAIN_INFER),
    "vae": ("vae", "equinox", [
        ("xs", dict(width=64, latent=8, depth=1, batch=32)),
        ("s", dict(width=256, latent=16, depth=2, batch=64)),
        ("m", dict(width=512, latent=32, depth=2, batch=128)),
        ("l", dict(width=1024, latent=64, depth=2, batch=128)),
        ("deep", dict(width=256, latent=32, depth=5, batch=64))], TRAIN_INFER),
    "diffusion": ("diffusion", "equinox", [
        ("xs", dict(width=8, hw=16, batch=4)),
        ("s", dict(width=16, hw=32, batch=4)),
        ("m", dict(width=32, hw=32, batch=4)),
        ("l", dict(width=32, hw=64, batch=2)),
        ("xl", dict(width=64, hw=32, batch=4))], TRAIN_INFER),
    "pointnet": ("pointnet", "equinox", [
        ("xs", dict(points=128, width=32, batch=8)),
        ("s", dict(points=256, width=64, batch=8)),
        ("m", dict(points=512, width=128, batch=8)),
        ("l", dict(points=1024, width=128, batch=16)),
        ("wide", dict(points=256, width=256, batch=8))], TRAIN_INFER),
    "gnn": ("gnn", "jax+optax", [
        ("xs", dict(nodes=256, edges=1024, feat=32, layers=2)),
        ("s", dict(nodes=1024, edges=4096, feat=64, layers=2)),
        ("m", dict(nodes=2048, edges=16384, feat=64, layers=3)),
        ("l", dict(nodes=4096, edges=24576, feat=96, layers=2)),
        ("batched", dict(nodes=128, edges=512, feat=64, layers=4, graphs=16))], TRAIN_INFER),
    "moe": ("moe", "jax+optax", [
        ("xs", dict(d=32, experts=4, tokens=128)),
        ("s", dict(d=64, experts=8, tokens=256)),
        ("m", dict(d=128, experts=8, tokens=512)),
        ("l", dict(d=128, experts=16, tokens=1024, k=1)),
        ("wide", dict(d=256, experts=4, tokens=512))], TRAIN_INFER),
    "gqa": ("gqa", "jax+optax", [
        ("xs", dict(d=64, heads=4, kv_heads=1, seq=32, batch=4)),
        ("s", dict(d=128, heads=8, kv_heads=2, seq=64, batch=2)),
        ("m", dict(d=256, heads=8, kv_heads=2, seq=128, batch=2)),
        ("local", dict(d=128, heads=4, kv_heads=4, seq=256, batch=2, window=32)),
        ("l", dict(d=384, heads=12, kv_heads=4, seq=128, batch=1))], TRAIN_INFER),
    "lm_head": ("lm_head", "jax+optax", [
        ("xs", dict(d=64, vocab=2048, tokens=128)),
        ("s", dict(d=128, vocab=8192, tokens=128)),
        ("m", dict(d=256, vocab=16384, tokens=128)),
        ("l", dict(d=256, vocab=32000, tokens=256)),
        ("wide", dict(d=512, vocab=8192, tokens=512))], TRAIN_INFER),
    "ssm": ("ssm", "jax+optax", [
        ("xs", dict(d=32, state=8, seq=64, batch=4)),
        ("s", dict(d=64, state=16, seq=128, batch=4)),
        ("m", dict(d=128, state=16, seq=256, batch=2)),
        ("l", dict(d=128, state=32, seq=512, batch=2)),
        ("wide", dict(d=256, state=8, seq=128, batch=4))], TRAIN_INFER),
    "fno": ("fno", "jax+optax", [
        ("xs", dict(width=8, modes=4, hw=16, batch=4)),
        ("s", dict(width=16, modes=8, hw=32, batch=4)),
        ("m", dict(width=32, modes=8, hw=32, batch=4)),
        ("l", dict(width=32, modes=12, hw=64, batch=2)),
        ("deep", dict(width=16, modes=8, hw=32, batch=4, layers=4))], TRAIN_INFER),
    "kmeans": ("kmeans", "jax", [
        ("xs", dict(points=1024, dim=8, clusters=8, iters=10)),
        ("s", dict(points=4096, dim=16, clusters=16, iters=10)),
        ("m", dict(points=8192, dim=32, clusters=32, iters=10)),
        ("l", dict(points=8192, dim=32, clusters=64, iters=6)),
        ("wide", dict(points=4096, dim=128, clusters=128, iters=5))], ONE_MODE),
    "cg": ("cg", "jax", [
        ("xs", dict(n=1024, iters=30)),
        ("s", dict(n=4096, iters=50)),
        ("m", dict(n=16384, iters=50)),
        ("l", dict(n=65536, iters=40)),
        ("batched", dict(n=4096, iters=40, batch=8))], ONE_MODE),
    "newton": ("newton", "jax", [
        ("xs", dict(n=16, iters=5, batch=8)),
        ("s", dict(n=32, iters=5, batch=16)),
        ("m", dict(n=64, iters=6, batch=16)),
        ("l", dict(n=128, iters=4, batch=8)),
        ("wide", dict(n=48, iters=8, batch=64))], ONE_MODE),
    "ode_rk4": ("ode_rk4", "jax", [
        ("nbody_s", dict(bodies=32, steps=50)),
        ("nbody_m", dict(bodies=128, steps=40)),
        ("nbody_l", dict(bodies=256, steps=20)),
        ("node_s", dict(bodies=16, steps=50, hidden=64)),
        ("node_m", dict(bodies=64, steps=40, hidden=256))], ONE_MODE),
    "hmc": ("hmc", "jax", [
        ("xs", dict(features=8, samples=256, leapfrog=10)),
        ("s", dict(features=32, samples=1024, leapfrog=20)),
        ("m", dict(features=64, samples=4096, leapfrog=20)),
        ("l", dict(features=128, samples=8192, leapfrog=10)),
        ("long", dict(features=16, samples=512, leapfrog=100))], ONE_MODE),
    "switch_net": ("switch_net", "jax+optax", [
        ("xs", dict(width=64, depth=2, batch=32)),
        ("s", dict(width=128, depth=4, batch=64)),
        ("m", dict(width=256, depth=4, batch=128)),
        ("l", dict(width=512, depth=3, batch=128)),
        ("deep", dict(width=128, depth=10, batch=64))], TRAIN_INFER),
    "vq": ("vq", "jax+optax", [
        ("xs", dict(codes=64, dim=16, tokens=256)),
        ("s", dict(codes=256, dim=32, tokens=1024)),
        ("m", dict(codes=512, dim=64, tokens=2048)),
        ("l", dict(codes=1024, dim=64, tokens=4096)),
        ("wide", dict(codes=4096, dim=32, tokens=1024))], TRAIN_INFER),
    "optax_update": ("optax_step", "optax", [
        ("adam_s", dict(opt="adam", n_params=16, scale=1)),
        ("adamw_m", dict(opt="adamw", n_params=32, scale=2)),
        ("lion_s", dict(opt="lion", n_params=24, scale=1)),
        ("lion_l", dict(opt="lion", n_params=32, scale=4)),
        ("adafactor_s", dict(opt="adafactor", n_params=16, scale=2)),
        ("adafactor_l", dict(opt="adafactor", n_params=32, scale=4)),
        ("sgd_m", dict(opt="sgd", n_params=48, scale=2)),
        ("adam_l", dict(opt="adam", n_params=64, scale=4))], (("float32", True),
                                                             ("bfloat16", True))),
}
_SHORT = {"float32": "f32", "bfloat16": "bf16"}


def _register() -> None:
    from bench.corpus.families import FAMILY_BUILDERS
    for family, (builder, library, sizes, variants) in FAMILIES.items():
        doc = (FAMILY_BUILDERS[builder].__doc__ or "").split("\n\n")[0]
        doc = " ".join(doc.split())
        for i, (tag, kw) in enumerate(sizes):
            chosen = variants if len(variants) <= 2 else \
                (variants[i % len(variants)], variants[(i + 1) % len(variants)])
            for dtype, train in chosen:
                mode = "train" if train else "infer"
                name = f"{family}_{tag}_{_SHORT[dtype]}" + (
                    f"_{mode}" if variants is not ONE_MODE else "")
                size = ", ".join(f"{k}={v}" for k, v in kw.items())
                PROGRAMS[name] = Program(f"{doc} [{size}; {dtype}; {mode}]", family,
                                         dict(kw, dtype=dtype, train=train), builder, library,
                                         dtype, mode)


_register()

# configuration name -> XLA debug options (see the module docstring for what was checked)
CONFIGS: dict[str, dict] = {
    "nofusionemitters": {"xla_cpu_use_fusion_emitters": False},
    "nofusion": {"xla_disable_hlo_passes": "fusion"},
    "nodotlib": {"xla_disable_hlo_passes": "dot-library-rewriter"},
    "nocse": {"xla_disable_hlo_passes": "cse"},
    "noreshapemover": {"xla_disable_hlo_passes": "reshape-mover"},
    "noparalleltasks": {"xla_disable_hlo_passes": "cpu-parallel-task-assigner"},
    "colmajor": {"layout": "column-major"},

}
CONFIG_BASES = ("attn_m", "mlp_m", "cnn_m", "rnn_scan", "layout_m", "resnet_l_f32_train",
                "vit_xs_f32_train", "gpt_scan_xs_f32_train", "gpt_unrolled_m_f32_infer",
                "unet_xs_f32_train", "mixer_m_f32_infer", "gnn_l_f32_train")


def _register_configs() -> None:
    for base in CONFIG_BASES:
        p = PROGRAMS[base]
        for config, options in CONFIGS.items():
            opts = ", ".join(f"{k}={v}" for k, v in options.items())
            PROGRAMS[f"{base}@{config}"] = p._replace(
                description=f"{p.description} — compiled with {opts}", base=base,
                config=config)


_register_configs()


def build(name: str):
    """(step, args, feed) of a program (imports JAX: call in the child process)."""
    p = PROGRAMS[name]
    if p.builder in BUILDERS:
        return BUILDERS[p.builder](**p.kwargs)
    from bench.corpus.families import FAMILY_BUILDERS
    return FAMILY_BUILDERS[p.builder](**p.kwargs)


def compile_program(name: str, dump_to: str | None = None):
    """The program's step compiled with its configuration's XLA options (and a dump into
    ``dump_to``), its arguments and feed; the step gets the program's family as its name so
    the module reads ``jit_<family>_<mode>``."""
    import jax
    p = PROGRAMS[name]
    fn, args, feed = build(name)
    options: dict = dict(CONFIGS.get(p.config, {}))
    if dump_to:
        options.update(xla_dump_to=dump_to, xla_dump_hlo_as_text=True)
    layout = options.pop("layout", None)
    named = _named(fn, f"{p.family}_{p.mode}")
    if layout is None:
        step = jax.jit(named)
    else:   # every array of rank >= 2 in and out in the given order of dimensions
        ins = _formats(args, layout)
        outs = _formats(jax.eval_shape(fn, *args), layout)
        step = jax.jit(named, in_shardings=ins, out_shardings=outs)
        args = tuple(jax.device_put(a, f) for a, f in zip(args, ins))
    compiled = step.lower(*args).compile(compiler_options=options or None)
    return compiled, args, feed


def _formats(tree, layout: str):
    """JAX layout API formats: ``column-major`` (dimensions reversed) for arrays of rank
    >= 2, None (XLA's default) for the rest."""
    import jax
    from jax.experimental.layout import Format, Layout
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert layout == "column-major", layout

    def one(a):
        rank = len(np.shape(a))
        return Format(Layout(major_to_minor=tuple(reversed(range(rank)))), device) \
            if rank >= 2 else None
    return jax.tree.map(one, tree)


def _named(fn, name: str):
    def step(*args):
        return fn(*args)
    step.__name__ = step.__qualname__ = name
    return step


def cost_analysis_of(compiled) -> dict:
    ca = compiled.cost_analysis()
    if isinstance(ca, list):
        ca = ca[0] if ca else {}
    return {k: float(v) for k, v in (ca or {}).items()}
