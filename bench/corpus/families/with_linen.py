"""The traced corpus's families written with Flax Linen."""

from __future__ import annotations

import math

from bench.corpus.families.helpers import (
    Built,
    data,
    labels,
    linen_params,
    same_dtypes,
    trainer,
    xent,
    zeros_like_abstract,
)


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
