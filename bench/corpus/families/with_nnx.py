"""The traced corpus's families written with Flax NNX."""

from __future__ import annotations

import numpy as np

from bench.corpus.families.helpers import Built, data, labels, nnx_split, trainer, xent


def vit(d: int, depth: int, heads: int, patch: int, hw: int, batch: int, dtype="float32",
        train=True) -> Built:
    """Vision Transformer (NNX): patch embedding (strided conv), class token, learned
    position embedding, pre-LN encoder blocks (``nnx.MultiHeadAttention``), head."""
    import jax.numpy as jnp
    from flax import nnx
    n = (hw // patch) ** 2 + 1

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.n1 = nnx.LayerNorm(d, rngs=rngs)
            self.att = nnx.MultiHeadAttention(heads, d, decode=False, rngs=rngs)
            self.n2 = nnx.LayerNorm(d, rngs=rngs)
            self.f1 = nnx.Linear(d, 4 * d, rngs=rngs)
            self.f2 = nnx.Linear(4 * d, d, rngs=rngs)

        def __call__(self, x):
            x = x + self.att(self.n1(x))
            return x + self.f2(nnx.gelu(self.f1(self.n2(x))))

    class ViT(nnx.Module):
        def __init__(self, rngs):
            self.embed = nnx.Conv(3, d, (patch, patch), (patch, patch), rngs=rngs)
            self.cls = nnx.Param(jnp.zeros((1, 1, d)))
            self.pos = nnx.Param(jnp.zeros((1, n, d)))
            self.blocks = nnx.List([Block(rngs) for _ in range(depth)])
            self.norm = nnx.LayerNorm(d, rngs=rngs)
            self.head = nnx.Linear(d, 10, rngs=rngs)

        def __call__(self, x):
            x = self.embed(x)
            x = x.reshape(x.shape[0], -1, d)
            cls = jnp.broadcast_to(self.cls[...].astype(x.dtype), (x.shape[0], 1, d))
            x = jnp.concatenate([cls, x], axis=1) + self.pos[...].astype(x.dtype)
            for b in self.blocks:
                x = b(x)
            return self.head(self.norm(x[:, 0]))

    state, apply = nnx_split(lambda: ViT(nnx.Rngs(0)), dtype)
    x = data((batch, hw, hw, 3), dtype)
    y = labels(batch, 10)
    return trainer(lambda s, x, y: xent(apply(s, x), y), state, (x, y), train,
                   infer=lambda s, x, y: apply(s, x))


def mixer(d: int, depth: int, patch: int, hw: int, batch: int, dtype="float32",
          train=True) -> Built:
    """MLP-Mixer (NNX): token-mixing and channel-mixing MLPs over patches, LayerNorm."""
    import jax.numpy as jnp
    from flax import nnx
    n = (hw // patch) ** 2

    class Layer(nnx.Module):
        def __init__(self, rngs):
            self.n1 = nnx.LayerNorm(d, rngs=rngs)
            self.t1 = nnx.Linear(n, 2 * n, rngs=rngs)
            self.t2 = nnx.Linear(2 * n, n, rngs=rngs)
            self.n2 = nnx.LayerNorm(d, rngs=rngs)
            self.c1 = nnx.Linear(d, 4 * d, rngs=rngs)
            self.c2 = nnx.Linear(4 * d, d, rngs=rngs)

        def __call__(self, x):
            h = jnp.swapaxes(self.n1(x), 1, 2)
            x = x + jnp.swapaxes(self.t2(nnx.gelu(self.t1(h))), 1, 2)
            return x + self.c2(nnx.gelu(self.c1(self.n2(x))))

    class Mixer(nnx.Module):
        def __init__(self, rngs):
            self.embed = nnx.Linear(patch * patch * 3, d, rngs=rngs)
            self.layers = nnx.List([Layer(rngs) for _ in range(depth)])
            self.head = nnx.Linear(d, 10, rngs=rngs)

        def __call__(self, x):
            b = x.shape[0]
            g = hw // patch
            x = x.reshape(b, g, patch, g, patch, 3).transpose(0, 1, 3, 2, 4, 5)
            x = self.embed(x.reshape(b, g * g, -1))
            for layer in self.layers:
                x = layer(x)
            return self.head(jnp.mean(x, axis=1))

    state, apply = nnx_split(lambda: Mixer(nnx.Rngs(0)), dtype)
    x = data((batch, hw, hw, 3), dtype)
    y = labels(batch, 10)
    return trainer(lambda s, x, y: xent(apply(s, x), y), state, (x, y), train,
                   infer=lambda s, x, y: apply(s, x))


def recsys(tables: int, rows: int, dim: int, batch: int, hot: int = 4, dtype="float32",
           train=True) -> Built:
    """DLRM-style recommender (NNX): ``tables`` embedding tables (``nnx.Embed``) looked up
    with ``hot`` ids each and sum-pooled, a bottom MLP on dense features, pairwise dot
    interactions, a top MLP, binary cross-entropy."""
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class DLRM(nnx.Module):
        def __init__(self, rngs):
            self.embs = nnx.List([nnx.Embed(rows, dim, rngs=rngs) for _ in range(tables)])
            self.b1 = nnx.Linear(16, 64, rngs=rngs)
            self.b2 = nnx.Linear(64, dim, rngs=rngs)
            f = tables + 1
            self.t1 = nnx.Linear(f * (f - 1) // 2 + dim, 256, rngs=rngs)
            self.t2 = nnx.Linear(256, 1, rngs=rngs)

        def __call__(self, dense, ids):
            z = self.b2(nnx.relu(self.b1(dense)))
            feats = [z] + [jnp.sum(e(ids[:, t]), axis=1) for t, e in enumerate(self.embs)]
            f = jnp.stack(feats, axis=1)
            inter = jnp.einsum("bfd,bgd->bfg", f, f)
            i, j = np.triu_indices(len(feats), 1)
            h = jnp.concatenate([z, inter[:, i, j]], axis=-1)
            return self.t2(nnx.relu(self.t1(h)))[:, 0]

    state, apply = nnx_split(lambda: DLRM(nnx.Rngs(0)), dtype)
    dense = data((batch, 16), dtype)
    ids = np.random.RandomState(4).randint(0, rows, size=(batch, tables, hot)).astype(np.int32)
    y = (np.random.RandomState(5).rand(batch) > 0.5).astype(np.float32)

    def loss(s, dense, ids, y):
        return jnp.mean(optax.sigmoid_binary_cross_entropy(
            apply(s, dense, ids).astype(jnp.float32), y))
    return trainer(loss, state, (dense, ids, y), train, opt=optax.adagrad(0.01),
                   infer=lambda s, dense, ids, y: apply(s, dense, ids))


def norms(width: int, tokens: int, batch: int, groups: int = 8, dtype="float32",
          train=True) -> Built:
    """Normalization layers (NNX): LayerNorm, RMSNorm, GroupNorm and BatchNorm (inference
    statistics) interleaved with linear layers — reduction-heavy kernels."""
    import jax.numpy as jnp
    from flax import nnx

    class Net(nnx.Module):
        def __init__(self, rngs):
            self.l = nnx.List([nnx.Linear(width, width, rngs=rngs) for _ in range(4)])
            self.ln = nnx.LayerNorm(width, rngs=rngs)
            self.rms = nnx.RMSNorm(width, rngs=rngs)
            self.gn = nnx.GroupNorm(width, num_groups=groups, rngs=rngs)
            self.bn = nnx.BatchNorm(width, use_running_average=True, rngs=rngs)

        def __call__(self, x):
            x = self.ln(nnx.gelu(self.l[0](x)))
            x = self.rms(nnx.gelu(self.l[1](x)))
            x = self.gn(nnx.gelu(self.l[2](x)))
            return self.bn(nnx.gelu(self.l[3](x)))

    state, apply = nnx_split(lambda: Net(nnx.Rngs(0)), dtype)
    x = data((batch, tokens, width), dtype)
    return trainer(lambda s, x: jnp.mean(apply(s, x).astype(jnp.float32) ** 2), state, (x,),
                   train, infer=apply)
