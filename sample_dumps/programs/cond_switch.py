"""lax.cond and lax.switch inside one jitted function.

``route(x, mode, threshold)`` (XLA module ``jit_route``):
  * ``lax.switch`` on ``mode`` picks one of 4 branches (tanh MLP layer,
    softplus, cumulative sum, sort) applied to a [16, 32] matrix;
  * ``lax.cond`` on ``mean(y) > threshold`` either normalizes the result by
    its norm or scales and shifts it.

The function runs with several ``mode``/``threshold`` values (inputs are
NumPy arrays, so there is a single compilation).

Usage (normally via ``sample_dumps/make_samples.py``, which sets XLA_FLAGS):
    python cond_switch.py [dump_dir]
"""
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

W = np.random.RandomState(1).standard_normal((32, 32)).astype(np.float32) / np.sqrt(32)


def branch_dense(x):
    return jnp.tanh(x @ W)


def branch_softplus(x):
    return jax.nn.softplus(x) - 0.5


def branch_cumsum(x):
    return jnp.cumsum(x, axis=-1) / x.shape[-1]


def branch_sort(x):
    return jnp.sort(x, axis=-1)


@jax.jit
def route(x, mode, threshold):
    y = lax.switch(mode, [branch_dense, branch_softplus, branch_cumsum, branch_sort], x)
    z = lax.cond(jnp.mean(y) > threshold,
                 lambda t: t / (jnp.linalg.norm(t) + 1e-6),
                 lambda t: 2.0 * t + 1.0,
                 y)
    return z, jnp.sum(z)


def main():
    rng = np.random.RandomState(0)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    for mode in range(4):
        for threshold in (-1.0, 1.0):
            _, total = route(x, np.int32(mode), np.float32(threshold))
            total = jax.block_until_ready(total)
            print(f"mode {mode} threshold {threshold:+.0f}: sum {float(total):.4f}")


if __name__ == "__main__":
    main()
