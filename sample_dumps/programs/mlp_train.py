"""MLP train step: 3 dense layers (64 -> 128 -> 128 -> 10, relu), softmax
cross-entropy loss, hand-written Adam update; batch 32, float32.

The jitted function is ``train_step(params, opt_state, batch)`` (XLA module
``jit_train_step``). Inputs are made with NumPy so that no eager JAX modules
are compiled. Runs unchanged on JAX 0.4.30 and 0.10.x.

Usage (normally via ``sample_dumps/make_samples.py``, which sets XLA_FLAGS):
    python mlp_train.py [dump_dir]
"""
import sys

import numpy as np

import jax
import jax.numpy as jnp

SIZES = (64, 128, 128, 10)
BATCH = 32
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8


def init_params(rng):
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        w = rng.standard_normal((n_in, n_out)).astype(np.float32) / np.sqrt(n_in)
        b = np.zeros((n_out,), np.float32)
        params.append({"w": w, "b": b})
    return params


def init_adam(params):
    zeros = [{k: np.zeros_like(v) for k, v in layer.items()} for layer in params]
    zeros2 = [{k: np.zeros_like(v) for k, v in layer.items()} for layer in params]
    return {"m": zeros, "v": zeros2, "t": np.zeros((), np.int32)}


def mlp(params, x):
    for i, layer in enumerate(params):
        x = x @ layer["w"] + layer["b"]
        if i < len(params) - 1:
            x = jax.nn.relu(x)
    return x


def loss_fn(params, batch):
    x, labels = batch
    logits = mlp(params, x)
    logp = jax.nn.log_softmax(logits)
    one_hot = jax.nn.one_hot(labels, SIZES[-1])
    return -jnp.mean(jnp.sum(one_hot * logp, axis=-1))


def adam_update(params, grads, opt_state):
    t = opt_state["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: B1 * m + (1 - B1) * g, opt_state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, opt_state["v"], grads)
    tf = t.astype(jnp.float32)
    scale = LR * jnp.sqrt(1 - B2 ** tf) / (1 - B1 ** tf)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - scale * m / (jnp.sqrt(v) + EPS), params, m, v)
    return params, {"m": m, "v": v, "t": t}


@jax.jit
def train_step(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    params, opt_state = adam_update(params, grads, opt_state)
    return params, opt_state, loss


def main():
    rng = np.random.RandomState(0)
    params = init_params(rng)
    opt_state = init_adam(params)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.randint(0, SIZES[-1], size=(BATCH,)).astype(np.int32)
    batch = (x, labels)
    for step in range(3):
        params, opt_state, loss = train_step(params, opt_state, batch)
        loss = jax.block_until_ready(loss)
        print(f"step {step}: loss {float(loss):.4f}")
    if "--trace" in sys.argv[2:]:
        # 3 more steps under the profiler (compiled already, so the trace holds only the
        # runs); what JAX 0.4.30's CPU profiler writes has no per-op events
        import os
        with jax.profiler.trace(os.path.join(sys.argv[1], "trace"), create_perfetto_trace=True):
            for step in range(3):
                params, opt_state, loss = train_step(params, opt_state, batch)
                jax.block_until_ready(loss)


if __name__ == "__main__":
    main()
