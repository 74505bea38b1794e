"""One small transformer block, forward + backward + SGD update.

Pre-LayerNorm block: x + MHA(LN(x)), then x + MLP(LN(x)) with gelu (tanh
form); d_model 64, 4 heads (fused q/k/v projection, causal mask, softmax),
sequence 32, batch 2, MLP width 256, float32. The loss is the mean squared
error against a fixed target. The jitted function is
``train_step(params, batch)`` (XLA module ``jit_train_step``), which uses
``jax.value_and_grad`` and applies a plain SGD update.

After one warm-up step, 5 steps run under
``jax.profiler.trace(<dump_dir>/trace, create_perfetto_trace=True)``.

Usage (normally via ``sample_dumps/make_samples.py``, which sets XLA_FLAGS):
    python transformer.py <dump_dir>
"""
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp

D_MODEL, HEADS, SEQ, BATCH, D_MLP = 64, 4, 32, 2, 256
LR = 1e-2


def init_params(rng):
    def dense(n_in, n_out):
        return rng.standard_normal((n_in, n_out)).astype(np.float32) / np.sqrt(n_in)

    return {
        "ln1": {"scale": np.ones(D_MODEL, np.float32), "bias": np.zeros(D_MODEL, np.float32)},
        "attn": {"wqkv": dense(D_MODEL, 3 * D_MODEL), "wo": dense(D_MODEL, D_MODEL)},
        "ln2": {"scale": np.ones(D_MODEL, np.float32), "bias": np.zeros(D_MODEL, np.float32)},
        "mlp": {"w1": dense(D_MODEL, D_MLP), "b1": np.zeros(D_MLP, np.float32),
                "w2": dense(D_MLP, D_MODEL), "b2": np.zeros(D_MODEL, np.float32)},
    }


def layer_norm(p, x, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * p["scale"] + p["bias"]


def self_attention(p, x):
    b, s, d = x.shape
    dh = d // HEADS

    qkv = (x @ p["wqkv"]).reshape(b, s, 3, HEADS, dh)  # fused q/k/v projection
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(dh).astype(np.float32)
    causal = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(causal, scores, -1e9)
    weights = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, s, d)
    return out @ p["wo"]


def mlp(p, x):
    h = jax.nn.gelu(x @ p["w1"] + p["b1"])
    return h @ p["w2"] + p["b2"]


def block(params, x):
    x = x + self_attention(params["attn"], layer_norm(params["ln1"], x))
    x = x + mlp(params["mlp"], layer_norm(params["ln2"], x))
    return x


def loss_fn(params, batch):
    x, target = batch
    return jnp.mean((block(params, x) - target) ** 2)


@jax.jit
def train_step(params, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    params = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    return params, loss


def main():
    dump_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    rng = np.random.RandomState(0)
    params = init_params(rng)
    x = rng.standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    target = rng.standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    batch = (x, target)
    params, loss = jax.block_until_ready(train_step(params, batch))  # compile + warm up
    print(f"warm-up loss {float(loss):.4f}")
    with jax.profiler.trace(os.path.join(dump_dir, "trace"), create_perfetto_trace=True):
        for step in range(5):
            params, loss = jax.block_until_ready(train_step(params, batch))
    print(f"after 5 traced steps: loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
