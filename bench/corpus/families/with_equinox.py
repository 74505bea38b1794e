"""The traced corpus's families written with Equinox."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.corpus.families.helpers import Built, data, eqx_split, labels, np_dtype, trainer, xent


def gpt(d: int, layers: int, heads: int, seq: int, batch: int, vocab: int = 512,
        scan: bool = False, dtype="float32", train=True) -> Built:
    """GPT-style decoder LM (Equinox modules): token + position embeddings, pre-LN causal
    attention blocks, tied-free LM head, next-token cross-entropy. ``scan``: the blocks'
    parameters stacked and applied with ``lax.scan`` (one while loop), else unrolled."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    dh = d // heads

    class Block(eqx.Module):
        ln1: eqx.nn.LayerNorm
        qkv: eqx.nn.Linear
        out: eqx.nn.Linear
        ln2: eqx.nn.LayerNorm
        f1: eqx.nn.Linear
        f2: eqx.nn.Linear

        def __init__(self, key):
            k = jax.random.split(key, 4)
            self.ln1, self.ln2 = eqx.nn.LayerNorm(d), eqx.nn.LayerNorm(d)
            self.qkv = eqx.nn.Linear(d, 3 * d, key=k[0])
            self.out = eqx.nn.Linear(d, d, key=k[1])
            self.f1 = eqx.nn.Linear(d, 4 * d, key=k[2])
            self.f2 = eqx.nn.Linear(4 * d, d, key=k[3])

        def __call__(self, x):
            s = x.shape[0]
            h = jax.vmap(self.ln1)(x)
            q, k, v = jnp.split(jax.vmap(self.qkv)(h), 3, axis=-1)
            q, k, v = (a.reshape(s, heads, dh) for a in (q, k, v))
            att = jnp.einsum("qhd,khd->hqk", q, k) / math.sqrt(dh)
            att = jnp.where(jnp.tril(jnp.ones((s, s), bool)), att, -1e4)
            o = jnp.einsum("hqk,khd->qhd", jax.nn.softmax(att, -1), v).reshape(s, d)
            x = x + jax.vmap(self.out)(o)
            return x + jax.vmap(self.f2)(jax.nn.gelu(jax.vmap(self.f1)(jax.vmap(self.ln2)(x))))

    class GPT(eqx.Module):
        tok: eqx.nn.Embedding
        pos: eqx.nn.Embedding
        blocks: Any
        ln: eqx.nn.LayerNorm
        head: eqx.nn.Linear

        def __init__(self, key):
            k = jax.random.split(key, layers + 3)
            self.tok = eqx.nn.Embedding(vocab, d, key=k[0])
            self.pos = eqx.nn.Embedding(seq, d, key=k[1])
            if scan:
                self.blocks = eqx.filter_vmap(Block)(k[3:])
            else:
                self.blocks = [Block(kk) for kk in k[3:]]
            self.ln = eqx.nn.LayerNorm(d)
            self.head = eqx.nn.Linear(d, vocab, use_bias=False, key=k[2])

        def __call__(self, ids):
            x = jax.vmap(self.tok)(ids) + jax.vmap(self.pos)(jnp.arange(ids.shape[0]))
            if scan:
                dyn, st = eqx.partition(self.blocks, eqx.is_array)

                def body(x, p):
                    return eqx.combine(p, st)(x), None
                x, _ = jax.lax.scan(body, x, dyn)
            else:
                for b in self.blocks:
                    x = b(x)
            return jax.vmap(self.head)(jax.vmap(self.ln)(x))

    params, static = eqx_split(lambda: GPT(jax.random.PRNGKey(0)), dtype)
    ids = np.random.RandomState(6).randint(0, vocab, size=(batch, seq + 1)).astype(np.int32)

    def logits(p, ids):
        return jax.vmap(eqx.combine(p, static))(ids[:, :-1])
    return trainer(lambda p, ids: xent(logits(p, ids), ids[:, 1:]), params, (ids,), train,
                   infer=logits)


def gru_eqx(hidden: int, inp: int, steps: int, batch: int, dtype="float32",
            train=True) -> Built:
    """GRU sequence classifier (Equinox ``GRUCell`` under ``lax.scan``, vmapped over the
    batch), Optax RMSProp."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optax

    class Net(eqx.Module):
        cell: eqx.nn.GRUCell
        head: eqx.nn.Linear

        def __init__(self, key):
            k1, k2 = jax.random.split(key)
            self.cell = eqx.nn.GRUCell(inp, hidden, key=k1)
            self.head = eqx.nn.Linear(hidden, 10, key=k2)

        def __call__(self, xs):
            def step(h, x):
                return self.cell(x, h), None
            h, _ = jax.lax.scan(step, jnp.zeros((hidden,), xs.dtype), xs)
            return self.head(h)

    params, static = eqx_split(lambda: Net(jax.random.PRNGKey(0)), dtype)
    xs = data((batch, steps, inp), dtype)
    y = labels(batch, 10)

    def logits(p, xs):
        return jax.vmap(eqx.combine(p, static))(xs)
    return trainer(lambda p, xs, y: xent(logits(p, xs), y), params, (xs, y), train,
                   opt=optax.rmsprop(1e-3), infer=lambda p, xs, y: logits(p, xs))


def vae(width: int, latent: int, depth: int, batch: int, img: int = 784, dtype="float32",
        train=True) -> Built:
    """Variational autoencoder (Equinox MLPs): encoder to mean/log-variance,
    reparameterized sample, decoder, Bernoulli likelihood + KL."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optax

    class VAE(eqx.Module):
        enc: eqx.nn.MLP
        dec: eqx.nn.MLP

        def __init__(self, key):
            k1, k2 = jax.random.split(key)
            self.enc = eqx.nn.MLP(img, 2 * latent, width, depth, jax.nn.softplus, key=k1)
            self.dec = eqx.nn.MLP(latent, img, width, depth, jax.nn.softplus, key=k2)

    params, static = eqx_split(lambda: VAE(jax.random.PRNGKey(0)), dtype)
    x = (np.random.RandomState(7).rand(batch, img) > 0.5).astype(np.float32).astype(
        np_dtype(dtype))
    eps = data((batch, latent), dtype, seed=8)

    def loss(p, x, eps):
        m = eqx.combine(p, static)
        mu, logvar = jnp.split(jax.vmap(m.enc)(x), 2, axis=-1)
        z = mu + jnp.exp(0.5 * logvar) * eps
        logits = jax.vmap(m.dec)(z).astype(jnp.float32)
        rec = jnp.sum(optax.sigmoid_binary_cross_entropy(logits, x.astype(jnp.float32)), -1)
        kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), -1)
        return jnp.mean(rec + kl.astype(jnp.float32))
    return trainer(loss, params, (x, eps), train)


def diffusion(width: int, hw: int, batch: int, T: int = 1000, dtype="float32",
              train=True) -> Built:
    """DDPM (Equinox conv denoiser with sinusoidal time embedding): train = noise a batch at
    random timesteps (schedule gather) and regress the noise; inference = one reverse
    (ancestral sampling) step."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    class Denoiser(eqx.Module):
        c1: eqx.nn.Conv2d
        c2: eqx.nn.Conv2d
        c3: eqx.nn.Conv2d
        c4: eqx.nn.Conv2d
        t1: eqx.nn.Linear
        t2: eqx.nn.Linear

        def __init__(self, key):
            k = jax.random.split(key, 6)
            self.c1 = eqx.nn.Conv2d(3, width, 3, padding=1, key=k[0])
            self.c2 = eqx.nn.Conv2d(width, width, 3, padding=1, key=k[1])
            self.c3 = eqx.nn.Conv2d(width, width, 3, padding=1, key=k[2])
            self.c4 = eqx.nn.Conv2d(width, 3, 3, padding=1, key=k[3])
            self.t1 = eqx.nn.Linear(64, width, key=k[4])
            self.t2 = eqx.nn.Linear(width, width, key=k[5])

        def __call__(self, x, t):
            f = jnp.exp(-math.log(10000.0) * jnp.arange(32) / 32)
            emb = jnp.concatenate([jnp.sin(t * f), jnp.cos(t * f)]).astype(x.dtype)
            temb = self.t2(jax.nn.silu(self.t1(emb)))[:, None, None]
            h = jax.nn.silu(self.c1(x)) + temb
            h = h + jax.nn.silu(self.c2(h))
            h = h + jax.nn.silu(self.c3(h))
            return self.c4(h)

    params, static = eqx_split(lambda: Denoiser(jax.random.PRNGKey(0)), dtype)
    betas = np.linspace(1e-4, 0.02, T).astype(np.float32)
    abar = np.cumprod(1 - betas).astype(np.float32)
    x0 = data((batch, 3, hw, hw), dtype)
    noise = data((batch, 3, hw, hw), dtype, seed=9)
    t = np.random.RandomState(10).randint(0, T, size=batch).astype(np.int32)

    def eps_of(p, x, t):
        return jax.vmap(eqx.combine(p, static))(x, t.astype(jnp.float32))

    def loss(p, x0, noise, t, abar):
        a = abar[t][:, None, None, None].astype(x0.dtype)
        xt = jnp.sqrt(a) * x0 + jnp.sqrt(1 - a) * noise
        return jnp.mean((eps_of(p, xt, t) - noise).astype(jnp.float32) ** 2)

    def reverse_step(p, xt, noise, t, abar):
        a = abar[t][:, None, None, None]
        beta = 1 - a / abar[jnp.maximum(t - 1, 0)][:, None, None, None]
        eps = eps_of(p, xt, t).astype(jnp.float32)
        mean = (xt - beta / jnp.sqrt(1 - a) * eps) / jnp.sqrt(1 - beta)
        return (mean + jnp.sqrt(beta) * noise).astype(xt.dtype)
    return trainer(loss, params, (x0, noise, t, abar), train, infer=reverse_step)


def pointnet(points: int, width: int, batch: int, dtype="float32", train=True) -> Built:
    """PointNet/DeepSets (Equinox): a shared per-point MLP, max-pool over points,
    classifier MLP."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    class Net(eqx.Module):
        phi: eqx.nn.MLP
        rho: eqx.nn.MLP

        def __init__(self, key):
            k1, k2 = jax.random.split(key)
            self.phi = eqx.nn.MLP(3, width, width, 3, key=k1)
            self.rho = eqx.nn.MLP(width, 10, width, 2, key=k2)

        def __call__(self, pts):
            return self.rho(jnp.max(jax.vmap(self.phi)(pts), axis=0))

    params, static = eqx_split(lambda: Net(jax.random.PRNGKey(0)), dtype)
    pts = data((batch, points, 3), dtype)
    y = labels(batch, 10)

    def logits(p, pts):
        return jax.vmap(eqx.combine(p, static))(pts)
    return trainer(lambda p, pts, y: xent(logits(p, pts), y), params, (pts, y), train,
                   infer=lambda p, pts, y: logits(p, pts))
