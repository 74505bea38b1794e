"""The model families of the traced corpus written with the libraries people train with
(Flax Linen and NNX, Equinox, Optax) or plain JAX: each builder returns ``(step, args, feed)``
like the plain-JAX builders of ``bench/make_traced_programs.py`` — a function to jit, its
arguments (NumPy arrays, so building a program compiles nothing), and how to feed a step's
outputs back as the next step's arguments (None: the same arguments again).

Parameters come from ``jax.eval_shape`` (the libraries' own initializers, traced, never run)
filled with seeded NumPy random values: random weights only, nothing downloaded.
Every builder takes ``dtype`` ('float32' or 'bfloat16': parameters and inputs) and ``train``
(a training step with an Optax optimizer, or inference)."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

Built = tuple[Callable, tuple, Any]


# --------------------------------------------------------------------------- helpers

def _np_dtype(dtype: str):
    import jax.numpy as jnp
    return jnp.bfloat16 if dtype == "bfloat16" else np.float32


def fill(tree, dtype: str = "float32", seed: int = 0):
    """Abstract leaves (ShapeDtypeStruct) -> seeded NumPy arrays; floating leaves in ``dtype``
    scaled by 1/sqrt(fan), integer leaves zero (optimizer counts, indices)."""
    import jax
    import jax.numpy as jnp
    rng = np.random.RandomState(seed)
    want = _np_dtype(dtype)

    def leaf(s):
        if not isinstance(s, jax.ShapeDtypeStruct):
            return s
        if jnp.issubdtype(s.dtype, jnp.floating):
            shape = tuple(s.shape)
            fan = max(int(np.prod(shape[:-1])), shape[-1]) if len(shape) >= 2 else 1
            a = rng.standard_normal(shape).astype(np.float32) / math.sqrt(fan)
            if len(shape) < 2:
                a = 1.0 + 0.1 * a
            return a.astype(want)
        return np.zeros(s.shape, s.dtype)
    return jax.tree.map(leaf, tree)


def zeros_like_abstract(tree):
    import jax
    return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype)
                        if isinstance(s, jax.ShapeDtypeStruct) else s, tree)


def data(shape, dtype: str = "float32", seed: int = 1):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32).astype(
        _np_dtype(dtype))


def labels(n, classes, seed: int = 2):
    return np.random.RandomState(seed).randint(0, classes, size=n).astype(np.int32)


def xent(logits, y):
    import jax.numpy as jnp
    import optax
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(
        logits.astype(jnp.float32), y))


def trainer(loss: Callable, params, batch: tuple, train: bool, opt=None,
            infer: Callable | None = None) -> Built:
    """A training step (``loss(params, *batch)`` minimized by ``opt``, AdamW by default) or,
    without ``train``, inference (``infer(params, *batch)``, default the loss itself)."""
    import jax
    import optax
    if not train:
        return (infer or loss), (params,) + tuple(batch), None
    opt = opt or optax.adamw(1e-3)
    abstract = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), a.dtype), params)
    state = zeros_like_abstract(jax.eval_shape(opt.init, abstract))

    def train_step(params, state, *batch):
        value, g = jax.value_and_grad(loss)(params, *batch)
        updates, new_state = opt.update(g, state, params)
        return (same_dtypes(optax.apply_updates(params, updates), params),
                same_dtypes(new_state, state), value)

    return train_step, (params, state) + tuple(batch), \
        lambda out, args: (out[0], out[1]) + args[2:]


def same_dtypes(new, old):
    """``new`` cast leaf by leaf to ``old``'s dtypes: a step's outputs must be fed back as
    the next step's inputs unchanged (bf16 state updated in float32 stays bf16)."""
    import jax
    return jax.tree.map(lambda n, o: n.astype(o.dtype), new, old)


def linen_params(model, *inputs, dtype="float32", **kw):
    import jax
    return fill(jax.eval_shape(lambda *xs: model.init(jax.random.PRNGKey(0), *xs, **kw),
                               *inputs), dtype)


def nnx_split(make, dtype="float32"):
    """The module's state (NumPy-filled) and ``apply(state, *inputs)``, its call."""
    from flax import nnx
    graphdef, state = nnx.split(nnx.eval_shape(make))

    def apply(s, *inputs):
        return nnx.merge(graphdef, s)(*inputs)
    return fill(state, dtype), apply


def eqx_split(make, dtype="float32"):
    import equinox as eqx
    import jax
    abstract = eqx.filter_eval_shape(make)
    params, static = eqx.partition(abstract, lambda x: isinstance(x, jax.ShapeDtypeStruct))
    return fill(params, dtype), static


# --------------------------------------------------------------------------- Flax Linen

def resnet(depth: int, width: int, hw: int, batch: int, dtype="float32", train=True) -> Built:
    """ResNet (Linen): conv stem, ``depth`` basic blocks (BatchNorm, stride 2 every other
    block), global pool, dense head."""
    import flax.linen as nn
    import jax.numpy as jnp

    class Block(nn.Module):
        ch: int
        stride: int

        @nn.compact
        def __call__(self, x, train):
            r = x
            y = nn.Conv(self.ch, (3, 3), self.stride, use_bias=False)(x)
            y = nn.relu(nn.BatchNorm(use_running_average=not train)(y))
            y = nn.Conv(self.ch, (3, 3), use_bias=False)(y)
            y = nn.BatchNorm(use_running_average=not train)(y)
            if r.shape != y.shape:
                r = nn.Conv(self.ch, (1, 1), self.stride, use_bias=False)(r)
            return nn.relu(y + r)

    class ResNet(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = nn.relu(nn.Conv(width, (3, 3))(x))
            ch = width
            for i in range(depth):
                stride = 2 if i % 2 == 1 else 1
                ch = ch * 2 if stride == 2 else ch
                x = Block(ch, stride)(x, train)
            return nn.Dense(10)(jnp.mean(x, axis=(1, 2)))

    m = ResNet()
    x = data((batch, hw, hw, 3), dtype)
    y = labels(batch, 10)
    v = linen_params(m, x, dtype=dtype, train=False)
    if not train:
        return (lambda v, x: m.apply(v, x, False)), (v, x), None
    params, stats = v["params"], v["batch_stats"]

    def loss(p, stats, x, y):
        out, new = m.apply({"params": p, "batch_stats": stats}, x, True,
                           mutable=["batch_stats"])
        return xent(out, y), new["batch_stats"]

    import jax
    import optax
    opt = optax.sgd(0.1, momentum=0.9)
    state = zeros_like_abstract(jax.eval_shape(opt.init, jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), params)))

    def train_step(p, state, stats, x, y):
        (value, new_stats), g = jax.value_and_grad(loss, has_aux=True)(p, stats, x, y)
        upd, new_state = opt.update(g, state, p)
        return (same_dtypes(optax.apply_updates(p, upd), p), same_dtypes(new_state, state),
                same_dtypes(new_stats, stats), value)

    return train_step, (params, state, stats, x, y), \
        lambda out, args: (out[0], out[1], out[2]) + args[3:]


def unet(levels: int, width: int, hw: int, batch: int, dtype="float32", train=True) -> Built:
    """U-Net (Linen): conv+GroupNorm down path with max-pool, transposed-conv up path with
    skip concatenations, per-pixel regression loss."""
    import flax.linen as nn
    import jax.numpy as jnp

    class UNet(nn.Module):
        @nn.compact
        def __call__(self, x):
            skips = []
            ch = width
            for _ in range(levels):
                x = nn.swish(nn.GroupNorm(8)(nn.Conv(ch, (3, 3))(x)))
                skips.append(x)
                x = nn.max_pool(x, (2, 2), (2, 2))
                ch *= 2
            x = nn.swish(nn.Conv(ch, (3, 3))(x))
            for s in reversed(skips):
                ch //= 2
                x = nn.ConvTranspose(ch, (2, 2), (2, 2))(x)
                x = jnp.concatenate([x, s], axis=-1)
                x = nn.swish(nn.GroupNorm(8)(nn.Conv(ch, (3, 3))(x)))
            return nn.Conv(3, (1, 1))(x)

    m = UNet()
    x = data((batch, hw, hw, 3), dtype)
    params = linen_params(m, x, dtype=dtype)

    def loss(p, x):
        return jnp.mean((m.apply(p, x).astype(jnp.float32) - x.astype(jnp.float32)) ** 2)
    return trainer(loss, params, (x,), train, infer=lambda p, x: m.apply(p, x))


def lstm(hidden: int, inp: int, steps: int, batch: int, layers=1, dtype="float32",
         train=True) -> Built:
    """LSTM language-model-like regressor (Linen ``nn.RNN`` of ``OptimizedLSTMCell``: a
    scan), stacked ``layers`` deep."""
    import flax.linen as nn
    import jax.numpy as jnp

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            for _ in range(layers):
                x = nn.RNN(nn.OptimizedLSTMCell(hidden))(x)
            return nn.Dense(inp)(x)

    m = Net()
    x = data((batch, steps, inp), dtype)
    params = linen_params(m, x, dtype=dtype)

    def loss(p, x):
        out = m.apply(p, x[:, :-1]).astype(jnp.float32)
        return jnp.mean((out - x[:, 1:].astype(jnp.float32)) ** 2)
    return trainer(loss, params, (x,), train, infer=lambda p, x: m.apply(p, x))


def mha_linen(d: int, heads: int, seq: int, batch: int, kv_seq=None, dtype="float32",
              train=True) -> Built:
    """Encoder-decoder attention (Linen ``MultiHeadDotProductAttention``): causal self
    attention, cross attention to a ``kv_seq`` memory, MLP, each with LayerNorm."""
    import flax.linen as nn
    import jax.numpy as jnp

    class Dec(nn.Module):
        @nn.compact
        def __call__(self, x, mem):
            mask = nn.make_causal_mask(jnp.ones(x.shape[:2]))
            x = x + nn.MultiHeadDotProductAttention(heads)(nn.LayerNorm()(x), mask=mask)
            x = x + nn.MultiHeadDotProductAttention(heads)(nn.LayerNorm()(x), mem)
            h = nn.gelu(nn.Dense(4 * d)(nn.LayerNorm()(x)))
            return x + nn.Dense(d)(h)

    m = Dec()
    x = data((batch, seq, d), dtype)
    mem = data((batch, kv_seq or seq, d), dtype, seed=3)
    params = linen_params(m, x, mem, dtype=dtype)

    def loss(p, x, mem):
        return jnp.mean(m.apply(p, x, mem).astype(jnp.float32) ** 2)
    return trainer(loss, params, (x, mem), train, infer=lambda p, x, mem: m.apply(p, x, mem))


def wavenet(channels: int, layers: int, length: int, batch: int, dtype="float32",
            train=True) -> Built:
    """Audio conv1d stack (Linen): causal dilated convolutions (dilation 1,2,4,...), gated
    tanh*sigmoid units, residual and skip 1x1 convolutions."""
    import flax.linen as nn
    import jax.numpy as jnp

    class WaveNet(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(channels, (1,))(x)
            skip = 0.0
            for i in range(layers):
                dil = 2 ** (i % 6)
                h = nn.Conv(2 * channels, (2,), kernel_dilation=(dil,), padding="CAUSAL")(x)
                a, b = jnp.split(h, 2, axis=-1)
                h = jnp.tanh(a) * nn.sigmoid(b)
                x = x + nn.Conv(channels, (1,))(h)
                skip = skip + nn.Conv(channels, (1,))(h)
            return nn.Conv(1, (1,))(nn.relu(skip))

    m = WaveNet()
    x = data((batch, length, 1), dtype)
    params = linen_params(m, x, dtype=dtype)

    def loss(p, x):
        return jnp.mean((m.apply(p, x).astype(jnp.float32) - x.astype(jnp.float32)) ** 2)
    return trainer(loss, params, (x,), train, infer=lambda p, x: m.apply(p, x))


def mobilenet(width: int, blocks: int, hw: int, batch: int, dtype="float32",
              train=True) -> Built:
    """MobileNet-style (Linen): inverted residual blocks with depthwise 3x3 convolutions
    (``feature_group_count``), LayerNorm, relu6."""
    import flax.linen as nn
    import jax.numpy as jnp

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(width, (3, 3), 2)(x)
            ch = width
            for i in range(blocks):
                stride = 2 if i % 3 == 2 else 1
                h = nn.relu6(nn.Conv(ch * 4, (1, 1))(x))
                h = nn.Conv(ch * 4, (3, 3), stride, feature_group_count=ch * 4)(h)
                h = nn.relu6(nn.LayerNorm()(h))
                h = nn.Conv(ch, (1, 1))(h)
                x = h if stride == 2 else x + h
            return nn.Dense(10)(jnp.mean(x, axis=(1, 2)))

    m = Net()
    x = data((batch, hw, hw, 3), dtype)
    y = labels(batch, 10)
    params = linen_params(m, x, dtype=dtype)
    return trainer(lambda p, x, y: xent(m.apply(p, x), y), params, (x, y), train,
                   infer=lambda p, x, y: m.apply(p, x))


def dcgan(z: int, width: int, hw: int, batch: int, dtype="float32", train=True) -> Built:
    """DCGAN (Linen): a transposed-conv generator and a strided-conv discriminator; train =
    one generator step through the discriminator (non-saturating loss)."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    steps = int(math.log2(hw // 4))

    class G(nn.Module):
        @nn.compact
        def __call__(self, z):
            ch = width * 2 ** steps
            x = nn.Dense(4 * 4 * ch)(z).reshape(z.shape[0], 4, 4, ch)
            for _ in range(steps):
                ch //= 2
                x = nn.relu(nn.LayerNorm()(nn.ConvTranspose(ch, (4, 4), (2, 2))(x)))
            return jnp.tanh(nn.Conv(3, (3, 3))(x))

    class D(nn.Module):
        @nn.compact
        def __call__(self, x):
            ch = width
            for _ in range(steps):
                x = nn.leaky_relu(nn.Conv(ch, (4, 4), (2, 2))(x), 0.2)
                ch *= 2
            return nn.Dense(1)(x.reshape(x.shape[0], -1))

    g, d = G(), D()
    zs = data((batch, z), dtype)
    gp = linen_params(g, zs, dtype=dtype)
    img = jax.eval_shape(lambda p, z: g.apply(p, z), gp, zs)
    dp = linen_params(d, jax.ShapeDtypeStruct(img.shape, img.dtype), dtype=dtype)

    def loss(gp, dp, zs):
        logits = d.apply(dp, g.apply(gp, zs)).astype(jnp.float32)
        return jnp.mean(jax.nn.softplus(-logits))
    return trainer(loss, gp, (dp, zs), train, infer=lambda gp, dp, zs: g.apply(gp, zs))


# --------------------------------------------------------------------------- Flax NNX

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


# --------------------------------------------------------------------------- Equinox

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
        _np_dtype(dtype))
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


# --------------------------------------------------------------------------- plain JAX

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
        _np_dtype(dtype))
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
        _np_dtype(dtype))

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
        _np_dtype(dtype))
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


FAMILY_BUILDERS: dict[str, Callable[..., Built]] = {
    f.__name__: f for f in (resnet, unet, lstm, mha_linen, wavenet, mobilenet, dcgan, vit,
                            mixer, recsys, norms, gpt, gru_eqx, vae, diffusion, pointnet,
                            gnn, moe, gqa, lm_head, ssm, fno, kmeans, cg, newton, ode_rk4, hmc,
                            switch_net, vq, optax_step)}
