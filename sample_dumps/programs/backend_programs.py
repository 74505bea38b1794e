"""Small JAX programs compiled ahead of time for GPUs and TPUs (no accelerator needed).

Used by ``sample_dumps/make_backend_samples.py``, which imports :data:`PROGRAMS`, gives
each program a topology's devices and compiles it with ``jax.jit(...).lower(...).compile()``
on abstract arguments (``jax.ShapeDtypeStruct`` with shardings): nothing runs, nothing is
allocated, so a program may be far larger than this machine's memory.

* ``transformer_train_step``: pre-LayerNorm decoder layers (causal 4-head attention,
  gelu MLP; one layer: each more adds ~200 KB of HLO text per target), tied embeddings,
  d_model 256, sequence 128, batch 8, vocabulary 1024; float32 parameters,
  bfloat16 compute; next-token cross-entropy, ``value_and_grad``, SGD. One device.
* ``convnet_train_step``: 3 convolutions (3x3, 16/32/64 channels, the last two stride 2),
  relu, global average pool, dense 10; images 32x32x3, batch 32, NHWC; bfloat16 compute;
  softmax cross-entropy, SGD. One device.
* ``sharded_mlp_train_step``: a 2-layer MLP (512 -> 2048 -> 512) trained with data and
  model parallelism on a ("data", "model") mesh of every device: the batch is split along
  "data", the first weight by columns and the second by rows along "model" (Megatron
  style), so the SPMD partitioner inserts the all-reduces of both. bfloat16 compute.
* ``convnet_train_step`` at batch 8192 of 224x224 images (``oom``): the activations kept
  for the backward pass are tens of GiB, more than one chip's HBM; its compile fails.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

LR = 1e-2
COMPUTE = jnp.bfloat16


# a program: the topology's devices -> (function, abstract arguments, jax.jit options);
# XLA names the module jit_<function name>
Build = Callable[[Sequence[Any]], tuple[Callable, tuple, dict]]


def spec(shape: tuple[int, ...], sharding, dtype=jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)


def sgd(params, grads):
    return jax.tree.map(lambda p, g: p - LR * g.astype(p.dtype), params, grads)


# ---- transformer ---------------------------------------------------------------------

D_MODEL, HEADS, D_MLP, LAYERS, VOCAB = 256, 4, 1024, 1, 1024


def transformer_shapes() -> dict:
    layer = {"ln1": (D_MODEL,), "wqkv": (D_MODEL, 3 * D_MODEL), "wo": (D_MODEL, D_MODEL),
             "ln2": (D_MODEL,), "w1": (D_MODEL, D_MLP), "w2": (D_MLP, D_MODEL)}
    return {"embed": (VOCAB, D_MODEL), "layers": [layer] * LAYERS, "ln_f": (D_MODEL,)}


def layer_norm(scale, x, eps=1e-5):
    x32 = x.astype(jnp.float32)
    mean = x32.mean(-1, keepdims=True)
    var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
    return ((x32 - mean) * jax.lax.rsqrt(var + eps) * scale).astype(COMPUTE)


def attention(p, x):
    b, s, d = x.shape
    dh = d // HEADS
    qkv = (x @ p["wqkv"].astype(COMPUTE)).reshape(b, s, 3, HEADS, dh)
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / np.sqrt(dh)
    scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, -1e9)
    weights = jax.nn.softmax(scores, axis=-1).astype(COMPUTE)
    return jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, s, d) @ p["wo"].astype(COMPUTE)


def transformer_loss(params, tokens):
    x = params["embed"].astype(COMPUTE)[tokens[:, :-1]]
    for p in params["layers"]:
        x = x + attention(p, layer_norm(p["ln1"], x))
        h = jax.nn.gelu(layer_norm(p["ln2"], x) @ p["w1"].astype(COMPUTE))
        x = x + h @ p["w2"].astype(COMPUTE)
    logits = (layer_norm(params["ln_f"], x) @ params["embed"].astype(COMPUTE).T)
    logp = jax.nn.log_softmax(logits.astype(jnp.float32))
    return -jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1).mean()


def transformer_train_step(params, tokens):
    loss, grads = jax.value_and_grad(transformer_loss)(params, tokens)
    return sgd(params, grads), loss


def transformer(batch: int, seq: int) -> Build:
    def build(devices):
        one = SingleDeviceSharding(devices[0])
        params = jax.tree.map(lambda s: spec(s, one), transformer_shapes(),
                              is_leaf=lambda s: isinstance(s, tuple))
        tokens = spec((batch, seq + 1), one, jnp.int32)
        return transformer_train_step, (params, tokens), {"donate_argnums": 0}
    return build


# ---- conv net ------------------------------------------------------------------------

CHANNELS, STRIDES, CLASSES = (3, 16, 32, 64), (1, 2, 2), 10


def convnet_loss(params, images, labels):
    x = images.astype(COMPUTE)
    for w, stride in zip(params["convs"], STRIDES):
        x = jax.lax.conv_general_dilated(x, w.astype(COMPUTE), (stride, stride), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = jax.nn.relu(x)
    logits = x.mean(axis=(1, 2)) @ params["dense"].astype(COMPUTE)
    logp = jax.nn.log_softmax(logits.astype(jnp.float32))
    return -jnp.take_along_axis(logp, labels[:, None], axis=-1).mean()


def convnet_train_step(params, images, labels):
    loss, grads = jax.value_and_grad(convnet_loss)(params, images, labels)
    return sgd(params, grads), loss


def convnet(batch: int, image: int) -> Build:
    return lambda devices: convnet_args(devices, batch, image)


def convnet_args(devices, batch: int, image: int):
    one = SingleDeviceSharding(devices[0])
    convs = [spec((3, 3, cin, cout), one) for cin, cout in zip(CHANNELS, CHANNELS[1:])]
    params = {"convs": convs, "dense": spec((CHANNELS[-1], CLASSES), one)}
    images = spec((batch, image, image, CHANNELS[0]), one)
    labels = spec((batch,), one, jnp.int32)
    return convnet_train_step, (params, images, labels), {"donate_argnums": 0}


# ---- data + model parallel MLP --------------------------------------------------------

D_IN, D_HIDDEN, MLP_BATCH = 512, 2048, 64


def mlp_loss(params, x, y):
    h = jax.nn.relu(x.astype(COMPUTE) @ params["w1"].astype(COMPUTE))
    out = h @ params["w2"].astype(COMPUTE)
    return ((out.astype(jnp.float32) - y) ** 2).mean()


def sharded_mlp_train_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return sgd(params, grads), loss


def sharded_mlp(devices):
    n = len(devices)
    model = 2 if n % 2 == 0 and n > 1 else 1
    mesh = jax.sharding.Mesh(np.asarray(devices).reshape(n // model, model), ("data", "model"))

    def on(*axes):
        return NamedSharding(mesh, P(*axes))
    params = {"w1": spec((D_IN, D_HIDDEN), on(None, "model")),
              "w2": spec((D_HIDDEN, D_IN), on("model", None))}
    x = spec((MLP_BATCH, D_IN), on("data", None))
    y = spec((MLP_BATCH, D_IN), on("data", None))
    out = ({"w1": on(None, "model"), "w2": on("model", None)}, on())
    return sharded_mlp_train_step, (params, x, y), {"donate_argnums": 0, "out_shardings": out}


PROGRAMS: dict[str, Build] = {
    "transformer": transformer(batch=8, seq=128),
    "convnet": convnet(batch=32, image=32),
    "sharded": sharded_mlp,
    "oom": convnet(batch=8192, image=224),
}
