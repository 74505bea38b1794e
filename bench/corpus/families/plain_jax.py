"""The traced corpus's families written with plain JAX (and Optax)."""

from __future__ import annotations

import math

import numpy as np

from bench.corpus.families.helpers import (
    Built,
    data,
    fill,
    labels,
    np_dtype,
    same_dtypes,
    trainer,
    xent,
    zeros_like_abstract,
)


def gnn(nodes: int, edges: int, feat: int, layers: int, graphs: int = 1, dtype="float32",
        train=True) -> Built:
    """Graph network (plain JAX + Optax): per layer, edge messages from gathered sender and
    receiver features, ``segment_sum`` aggregation at receivers, node update MLP."""
    import jax
    import jax.numpy as jnp
    rng = np.random.RandomState(11)
    n, e = nodes * graphs, edges * graphs
    send = rng.randint(0, n, size=e).astype(np.int32)
    recv = np.sort(rng.randint(0, n, size=e)).astype(np.int32)
    x = data((n, feat), dtype)
    target = data((n, feat), dtype, seed=12)
    params = fill([{"m": jax.ShapeDtypeStruct((2 * feat, feat), np.float32),
                    "u": jax.ShapeDtypeStruct((2 * feat, feat), np.float32),
                    "b": jax.ShapeDtypeStruct((feat,), np.float32)} for _ in range(layers)],
                  dtype)

    def forward(ps, x, send, recv):
        for p in ps:
            msg = jax.nn.relu(jnp.concatenate([x[send], x[recv]], -1) @ p["m"])
            agg = jax.ops.segment_sum(msg, recv, num_segments=n, indices_are_sorted=True)
            x = x + jnp.tanh(jnp.concatenate([x, agg], -1) @ p["u"] + p["b"])
        return x

    def loss(ps, x, send, recv, target):
        return jnp.mean((forward(ps, x, send, recv) - target).astype(jnp.float32) ** 2)
    return trainer(loss, params, (x, send, recv, target), train,
                   infer=lambda ps, x, send, recv, target: forward(ps, x, send, recv))


def moe(d: int, experts: int, tokens: int, k: int = 2, capacity: float = 1.25,
        dtype="float32", train=True) -> Built:
    """Mixture-of-experts layer (plain JAX + Optax): router softmax, top-k experts per token,
    capacity-limited dispatch by position-in-expert (cumsum), gather into per-expert
    buffers, batched expert MLPs, scatter-add back weighted by the gates."""
    import jax
    import jax.numpy as jnp
    cap = int(capacity * tokens * k / experts)
    params = fill({"router": jax.ShapeDtypeStruct((d, experts), np.float32),
                   "w1": jax.ShapeDtypeStruct((experts, d, 4 * d), np.float32),
                   "w2": jax.ShapeDtypeStruct((experts, 4 * d, d), np.float32)}, dtype)
    x = data((tokens, d), dtype)

    def layer(p, x):
        gates = jax.nn.softmax((x @ p["router"]).astype(jnp.float32), -1)
        g, idx = jax.lax.top_k(gates, k)                          # [T, k]
        flat = idx.reshape(-1)                                     # token-major choices
        onehot = jax.nn.one_hot(flat, experts, dtype=jnp.int32)
        pos = jnp.sum((jnp.cumsum(onehot, 0) - 1) * onehot, -1)  # slot within its expert
        keep = pos < cap
        slot = jnp.where(keep, flat * cap + pos, experts * cap)   # overflow -> dropped
        tok = jnp.repeat(jnp.arange(tokens), k)
        src = jnp.full((experts * cap + 1,), tokens, jnp.int32).at[slot].set(tok)
        xp = jnp.concatenate([x, jnp.zeros((1, d), x.dtype)])[src[:-1]]
        h = jax.nn.gelu(jnp.einsum("ecd,edf->ecf", xp.reshape(experts, cap, d), p["w1"]))
        y = jnp.einsum("ecf,efd->ecd", h, p["w2"]).reshape(experts * cap, d)
        w = jnp.where(keep, g.reshape(-1), 0.0).astype(x.dtype)
        yt = jnp.concatenate([y, jnp.zeros((1, d), y.dtype)])[slot] * w[:, None]
        return x + jnp.zeros_like(x).at[tok].add(yt)

    return trainer(lambda p, x: jnp.mean(layer(p, x).astype(jnp.float32) ** 2), params, (x,),
                   train, infer=layer)


def gqa(d: int, heads: int, kv_heads: int, seq: int, batch: int, window: int = 0,
        dtype="float32", train=True) -> Built:
    """Attention variants (plain JAX + Optax): grouped-query attention (``kv_heads`` shared
    key/value heads) with rotary position embeddings, RMSNorm, SwiGLU MLP; ``window`` > 0
    adds a sliding-window (local) mask."""
    import jax
    import jax.numpy as jnp
    dh = d // heads
    s = jax.ShapeDtypeStruct
    params = fill({"wq": s((d, d), np.float32), "wkv": s((d, 2 * kv_heads * dh), np.float32),
                   "wo": s((d, d), np.float32), "g1": s((d,), np.float32),
                   "g2": s((d,), np.float32), "wg": s((d, 3 * d), np.float32),
                   "wu": s((d, 3 * d), np.float32), "wd": s((3 * d, d), np.float32)}, dtype)
    x = data((batch, seq, d), dtype)
    inv = 1.0 / 10000 ** (np.arange(0, dh, 2) / dh)
    ang = np.arange(seq)[:, None] * inv[None]
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    qi, ki = np.arange(seq)[:, None], np.arange(seq)[None]
    mask = ki <= qi
    if window:
        mask &= ki > qi - window

    def rms(x, g):
        xf = x.astype(jnp.float32)
        return (xf * jax.lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + 1e-6)).astype(
            x.dtype) * g

    def rope(t):
        a, b = t[..., ::2], t[..., 1::2]
        c, s_ = cos[:, None].astype(t.dtype), sin[:, None].astype(t.dtype)
        return jnp.stack([a * c - b * s_, a * s_ + b * c], -1).reshape(t.shape)

    def block(p, x):
        b = x.shape[0]
        h = rms(x, p["g1"])
        q = rope((h @ p["wq"]).reshape(b, seq, heads, dh))
        kv = (h @ p["wkv"]).reshape(b, seq, 2, kv_heads, dh)
        k, v = rope(kv[:, :, 0]), kv[:, :, 1]
        q = q.reshape(b, seq, kv_heads, heads // kv_heads, dh)
        att = jnp.einsum("bqgrd,bkgd->bgrqk", q, k) / math.sqrt(dh)
        att = jnp.where(mask, att, -1e4)
        o = jnp.einsum("bgrqk,bkgd->bqgrd", jax.nn.softmax(att.astype(jnp.float32), -1)
                       .astype(v.dtype), v).reshape(b, seq, d)
        x = x + o @ p["wo"]
        h = rms(x, p["g2"])
        return x + (jax.nn.silu(h @ p["wg"]) * (h @ p["wu"])) @ p["wd"]

    return trainer(lambda p, x: jnp.mean(block(p, x).astype(jnp.float32) ** 2), params, (x,),
                   train, infer=block)


def lm_head(d: int, vocab: int, tokens: int, dtype="float32", train=True) -> Built:
    """Large-vocabulary LM head and loss (plain JAX + Optax): final RMS scale, projection to
    ``vocab`` logits, log-softmax cross-entropy with integer labels, z-loss."""
    import jax
    import jax.numpy as jnp
    params = fill({"w": jax.ShapeDtypeStruct((d, vocab), np.float32),
                   "g": jax.ShapeDtypeStruct((d,), np.float32)}, dtype)
    h = data((tokens, d), dtype)
    y = labels(tokens, vocab)

    def logits(p, h):
        return ((h * p["g"]) @ p["w"]).astype(jnp.float32)

    def loss(p, h, y):
        z = logits(p, h)
        lse = jax.nn.logsumexp(z, -1)
        return xent(z, y) + 1e-4 * jnp.mean(lse ** 2)
    return trainer(loss, params, (h, y), train,
                   infer=lambda p, h, y: jnp.argmax(logits(p, h), -1))


def ssm(d: int, state: int, seq: int, batch: int, dtype="float32", train=True) -> Built:
    """Diagonal linear state-space layer (S4D/LRU-like, plain JAX + Optax): discretized
    complex-free diagonal recurrence computed with ``lax.associative_scan`` over the
    sequence, gated output, residual."""
    import jax
    import jax.numpy as jnp
    s = jax.ShapeDtypeStruct
    params = fill({"loga": s((d, state), np.float32), "b": s((d, state), np.float32),
                   "c": s((d, state), np.float32), "wg": s((d, d), np.float32),
                   "wo": s((d, d), np.float32)}, dtype)
    x = data((batch, seq, d), dtype)

    def layer(p, x):
        a = jnp.exp(-jnp.exp(p["loga"].astype(jnp.float32)))           # (d, n) in (0, 1)
        u = x.astype(jnp.float32)[..., None] * p["b"].astype(jnp.float32)  # b, l, d, n
        aa = jnp.broadcast_to(a, u.shape)

        def comb(lo, hi):
            return lo[0] * hi[0], hi[0] * lo[1] + hi[1]
        _, h = jax.lax.associative_scan(comb, (aa, u), axis=1)
        y = jnp.sum(h * p["c"].astype(jnp.float32), -1).astype(x.dtype)
        return x + (y * jax.nn.sigmoid(x @ p["wg"])) @ p["wo"]

    return trainer(lambda p, x: jnp.mean(layer(p, x).astype(jnp.float32) ** 2), params, (x,),
                   train, infer=layer)


def fno(width: int, modes: int, hw: int, batch: int, layers: int = 2, dtype="float32",
        train=True) -> Built:
    """Fourier neural operator (plain JAX + Optax): per layer ``rfft2``, multiply the lowest
    ``modes`` frequencies by learned complex weights, ``irfft2``, plus a pointwise linear
    path, gelu. FFTs always in float32 (XLA's CPU FFT has no bf16)."""
    import jax
    import jax.numpy as jnp
    s = jax.ShapeDtypeStruct
    params = fill({"lift": s((3, width), np.float32), "proj": s((width, 1), np.float32),
                   "layers": [{"wr": s((modes, modes, width, width), np.float32),
                               "wi": s((modes, modes, width, width), np.float32),
                               "w": s((width, width), np.float32)} for _ in range(layers)]},
                  dtype)
    x = data((batch, hw, hw, 3), dtype)
    y = data((batch, hw, hw, 1), dtype, seed=13)

    def forward(p, x):
        h = x @ p["lift"]
        for lp in p["layers"]:
            f = jnp.fft.rfft2(h.astype(jnp.float32), axes=(1, 2))
            w = lp["wr"].astype(jnp.float32) + 1j * lp["wi"].astype(jnp.float32)
            low = jnp.einsum("bxyi,xyio->bxyo", f[:, :modes, :modes], w)
            f = jnp.zeros_like(f).at[:, :modes, :modes].set(low)
            spec = jnp.fft.irfft2(f, s=(hw, hw), axes=(1, 2)).astype(h.dtype)
            h = jax.nn.gelu(spec + h @ lp["w"])
        return h @ p["proj"]

    return trainer(lambda p, x, y: jnp.mean((forward(p, x) - y).astype(jnp.float32) ** 2),
                   params, (x, y), train, infer=lambda p, x, y: forward(p, x))


def kmeans(points: int, dim: int, clusters: int, iters: int, dtype="float32",
           train=False) -> Built:
    """k-means (plain JAX): ``iters`` Lloyd iterations under ``fori_loop`` — distance
    matrix by matmul, argmin assignment, ``segment_sum`` centroid update."""
    import jax
    import jax.numpy as jnp
    x = data((points, dim), dtype)
    c0 = x[:clusters].copy()

    def run(x, c):
        def body(_, c):
            d = (jnp.sum(x * x, -1, keepdims=True) - 2 * x @ c.T
                 + jnp.sum(c * c, -1)[None])
            a = jnp.argmin(d, -1)
            s = jax.ops.segment_sum(x.astype(jnp.float32), a, num_segments=clusters)
            n = jax.ops.segment_sum(jnp.ones((x.shape[0],), jnp.float32), a,
                                    num_segments=clusters)
            return (s / jnp.maximum(n, 1.0)[:, None]).astype(c.dtype)
        return jax.lax.fori_loop(0, iters, body, c)

    return run, (x, c0), None


def cg(n: int, iters: int, batch: int = 1, dtype="float32", train=False) -> Built:
    """Conjugate gradient (plain JAX): an SPD system (a 2-D Laplacian stencil as a matvec
    plus a dense low-rank term) solved with ``jax.scipy.sparse.linalg.cg`` (a while loop
    with a tolerance) for ``batch`` right-hand sides."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.sparse.linalg import cg as _cg
    side = int(math.isqrt(n))
    u = data((side * side, 8), dtype) / np.float32(side)
    b = data((batch, side * side), dtype, seed=14)

    def matvec(v, u):      # in the inputs' dtype; the CG vectors stay float32
        g = v.astype(u.dtype).reshape(side, side)
        lap = 4 * g - jnp.roll(g, 1, 0) - jnp.roll(g, -1, 0) - jnp.roll(g, 1, 1) \
            - jnp.roll(g, -1, 1)
        return (lap.reshape(-1) + 0.1 * g.reshape(-1) + u @ (u.T @ g.reshape(-1))).astype(
            jnp.float32)

    def solve(u, b):
        return jax.vmap(lambda rhs: _cg(lambda v: matvec(v, u), rhs.astype(jnp.float32),
                                        tol=1e-8, maxiter=iters)[0])(b)

    return solve, (u, b), None


def newton(n: int, iters: int, batch: int, dtype="float32", train=False) -> Built:
    """Newton's method (plain JAX): solve F(x) = A x + tanh(x) - b = 0 for ``batch``
    systems, Jacobian by ``jax.jacfwd``, linear solve by ``jnp.linalg.solve`` (LU), under
    ``fori_loop``."""
    import jax
    import jax.numpy as jnp
    a = (data((n, n), "float32") / np.float32(n) + 3 * np.eye(n, dtype=np.float32)).astype(
        np_dtype(dtype))
    b = data((batch, n), dtype, seed=15)

    def solve(a, b):
        def F(x, rhs):
            return a.astype(jnp.float32) @ x + jnp.tanh(x) - rhs

        def one(rhs):
            rhs = rhs.astype(jnp.float32)

            def body(_, x):
                return x - jnp.linalg.solve(jax.jacfwd(F)(x, rhs), F(x, rhs))
            return jax.lax.fori_loop(0, iters, body, jnp.zeros_like(rhs))
        return jax.vmap(one)(b)

    return solve, (a, b), None


def ode_rk4(bodies: int, steps: int, hidden: int = 0, dtype="float32",
            train=False) -> Built:
    """Classical RK4 integration (plain JAX) under ``fori_loop``: an N-body gravitational
    system (pairwise forces), or with ``hidden`` > 0 a neural ODE whose vector field is an
    MLP (train: gradient of the final-state loss through the loop)."""
    import jax
    import jax.numpy as jnp
    dt = 1e-3
    if hidden:
        params = fill({"w1": jax.ShapeDtypeStruct((bodies, hidden), np.float32),
                       "w2": jax.ShapeDtypeStruct((hidden, bodies), np.float32)}, dtype)
        y0 = data((64, bodies), dtype)

        def field(p, y):
            return jnp.tanh(y @ p["w1"]) @ p["w2"]

        def integrate(p, y):
            def body(_, y):
                k1 = field(p, y)
                k2 = field(p, y + dt / 2 * k1)
                k3 = field(p, y + dt / 2 * k2)
                k4 = field(p, y + dt * k3)
                return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return jax.lax.fori_loop(0, steps, body, y)
        return trainer(lambda p, y: jnp.mean(integrate(p, y).astype(jnp.float32) ** 2),
                       params, (y0,), train, infer=integrate)

    state = data((2, bodies, 3), dtype)
    mass = (np.random.RandomState(16).rand(bodies) + 0.5).astype(np.float32).astype(
        np_dtype(dtype))

    def accel(x, m):
        diff = x[None] - x[:, None]
        r2 = jnp.sum(diff * diff, -1) + 1e-2
        return jnp.sum(diff * (m[None, :, None] * r2[..., None] ** -1.5), 1)

    def deriv(s, m):
        return jnp.stack([s[1], accel(s[0], m)])

    def integrate_nbody(s, m):
        def body(_, s):
            k1 = deriv(s, m)
            k2 = deriv(s + dt / 2 * k1, m)
            k3 = deriv(s + dt / 2 * k2, m)
            k4 = deriv(s + dt * k3, m)
            return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return jax.lax.fori_loop(0, steps, body, s)

    return integrate_nbody, (state, mass), lambda out, args: (out,) + args[1:]


def hmc(features: int, samples: int, leapfrog: int, dtype="float32", train=False) -> Built:
    """Hamiltonian Monte Carlo (plain JAX) on a Bayesian logistic regression posterior:
    ``leapfrog`` steps under ``fori_loop`` with the gradient of the log density inside the
    loop, then a Metropolis accept/reject (``lax.cond``)."""
    import jax
    import jax.numpy as jnp
    x = data((samples, features), dtype)
    y = (np.random.RandomState(17).rand(samples) > 0.5).astype(np.float32).astype(
        np_dtype(dtype))
    q0 = data((features,), dtype, seed=18) * np.float32(0.1)
    p0 = data((features,), dtype, seed=19)
    u = np.float32(0.3)

    def logp(q, x, y):
        z = (x @ q).astype(jnp.float32)
        return jnp.sum(y * z - jax.nn.softplus(z)) - 0.5 * jnp.sum(q.astype(jnp.float32) ** 2)

    def step(q, p, x, y, u):
        eps = 1e-3
        g = jax.grad(logp)

        def body(_, s):
            q_, p_ = s
            p_ = p_ + eps / 2 * g(q_, x, y).astype(p_.dtype)
            q_ = q_ + eps * p_
            p_ = p_ + eps / 2 * g(q_, x, y).astype(p_.dtype)
            return q_, p_
        q1, p1 = jax.lax.fori_loop(0, leapfrog, body, (q, p))
        h0 = -logp(q, x, y) + 0.5 * jnp.sum(p.astype(jnp.float32) ** 2)
        h1 = -logp(q1, x, y) + 0.5 * jnp.sum(p1.astype(jnp.float32) ** 2)
        accept = jnp.log(u) < h0 - h1
        q_new = jax.lax.cond(accept, lambda: q1, lambda: q)
        return q_new, -p, x, y, u

    return step, (q0, p0, x, y, u), lambda out, args: out


def switch_net(width: int, depth: int, batch: int, dtype="float32", train=True) -> Built:
    """Data-dependent control flow (plain JAX + Optax): each layer picks one of three
    activations/transforms with ``lax.switch`` on a statistic of its input, and a
    ``lax.cond`` skips an expensive branch when the norm is small."""
    import jax
    import jax.numpy as jnp
    params = fill([{"w": jax.ShapeDtypeStruct((width, width), np.float32),
                    "v": jax.ShapeDtypeStruct((width, width), np.float32)}
                   for _ in range(depth)], dtype)
    x = data((batch, width), dtype)

    def forward(ps, x):
        for p in ps:
            h = x @ p["w"]
            i = jnp.clip((jnp.mean(h.astype(jnp.float32)) * 10).astype(jnp.int32) + 1, 0, 2)
            h = jax.lax.switch(i, [jax.nn.relu, jnp.tanh,
                                   lambda t: jax.nn.gelu(t) * jax.nn.sigmoid(t)], h)
            big = jnp.sum(jnp.abs(h.astype(jnp.float32))) > 1.0
            x = jax.lax.cond(big, lambda h: x + jnp.tanh(h @ p["v"]), lambda h: x + h, h)
        return x

    return trainer(lambda ps, x: jnp.mean(forward(ps, x).astype(jnp.float32) ** 2), params,
                   (x,), train, infer=forward)


def vq(codes: int, dim: int, tokens: int, dtype="float32", train=True) -> Built:
    """Vector quantization (plain JAX + Optax): encoder linear, nearest codebook entry by
    distance matrix + argmin, codebook gather, straight-through estimator, commitment loss,
    decoder."""
    import jax
    import jax.numpy as jnp
    s = jax.ShapeDtypeStruct
    params = fill({"enc": s((64, dim), np.float32), "book": s((codes, dim), np.float32),
                   "dec": s((dim, 64), np.float32)}, dtype)
    x = data((tokens, 64), dtype)

    def forward(p, x):
        z = x @ p["enc"]
        d = (jnp.sum(z * z, -1, keepdims=True) - 2 * z @ p["book"].T
             + jnp.sum(p["book"] * p["book"], -1)[None])
        q = p["book"][jnp.argmin(d, -1)]
        st = z + jax.lax.stop_gradient(q - z)
        return st @ p["dec"], z, q

    def loss(p, x):
        out, z, q = forward(p, x)
        f = jnp.float32
        return (jnp.mean((out - x).astype(f) ** 2)
                + jnp.mean((jax.lax.stop_gradient(z) - q).astype(f) ** 2)
                + 0.25 * jnp.mean((z - jax.lax.stop_gradient(q)).astype(f) ** 2))
    return trainer(loss, params, (x,), train, infer=lambda p, x: forward(p, x)[0])


def optax_step(opt: str, n_params: int, scale: int, dtype="float32", train=True) -> Built:
    """One Optax optimizer update over a parameter tree of ``n_params`` arrays (matrices and
    vectors, sizes × ``scale``): the gradient is given, so the module is the optimizer
    alone — ``adam``, ``adamw``, ``lion``, ``adafactor`` (factored second moments),
    ``sgd`` (Nesterov momentum), each chained after global-norm clipping."""
    import jax
    import optax
    shapes = [((i % 5 + 1) * 16 * scale, (i % 3 + 1) * 32) if i % 4 else ((i % 7 + 1) * 64,)
              for i in range(n_params)]
    make = {"adam": lambda: optax.adam(1e-3), "adamw": lambda: optax.adamw(1e-3, 0.01),
            "lion": lambda: optax.lion(1e-4), "adafactor": lambda: optax.adafactor(1e-3),
            "sgd": lambda: optax.sgd(1e-2, momentum=0.9, nesterov=True)}[opt]
    tx = optax.chain(optax.clip_by_global_norm(1.0), make())
    abstract = {f"p{i}": jax.ShapeDtypeStruct(s, np.float32) for i, s in enumerate(shapes)}
    params = fill(abstract, dtype)
    grads = fill(abstract, dtype, seed=3)
    state = zeros_like_abstract(jax.eval_shape(tx.init, jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), params)))

    def update(params, state, grads):
        upd, new_state = tx.update(grads, state, params)
        return (same_dtypes(optax.apply_updates(params, upd), params),
                same_dtypes(new_state, state))

    return update, (params, state, grads), lambda out, args: (out[0], out[1], args[2])
