"""A scan and a while loop in one jitted function.

``step(rnn_params, xs, matrix)`` (XLA module ``jit_step``):
  * ``lax.scan`` runs an Elman RNN (hidden 32, input 16, tanh) over 16 time
    steps of a batch of 4 and returns the final hidden state and the mean of
    all hidden states;
  * ``lax.while_loop`` runs power iteration on a 32x32 symmetric matrix until
    the eigenvalue estimate changes by less than 1e-6 (at most 200 iterations)
    and returns the dominant eigenvalue and the iteration count.

The step runs once to compile, then 3 times under
``jax.profiler.trace(<dump_dir>/trace, create_perfetto_trace=True)``.

Usage (normally via ``sample_dumps/make_samples.py``, which sets XLA_FLAGS):
    python scan_while.py <dump_dir>
"""
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

HIDDEN, INPUT, STEPS, BATCH, N = 32, 16, 16, 4, 32
TRACED_STEPS = 3


def rnn(params, xs):
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h

    h0 = jnp.zeros((xs.shape[1], HIDDEN), xs.dtype)
    h_final, hs = lax.scan(cell, h0, xs)  # xs: [time, batch, input]
    return h_final, jnp.mean(hs, axis=0)


def power_iteration(matrix, tol=1e-6, max_iters=200):
    v0 = jnp.ones((matrix.shape[0],), matrix.dtype) / np.sqrt(matrix.shape[0])

    def cond(state):
        _, lam, lam_prev, i = state
        return jnp.logical_and(jnp.abs(lam - lam_prev) > tol, i < max_iters)

    def body(state):
        v, lam, _, i = state
        w = matrix @ v
        v_new = w / jnp.linalg.norm(w)
        return v_new, v_new @ (matrix @ v_new), lam, i + 1

    init = (v0, jnp.float32(0.0), jnp.float32(jnp.inf), jnp.int32(0))
    v, lam, _, iters = lax.while_loop(cond, body, init)
    return lam, v, iters


@jax.jit
def step(rnn_params, xs, matrix):
    h_final, h_mean = rnn(rnn_params, xs)
    lam, v, iters = power_iteration(matrix)
    return h_final, h_mean, lam, v, iters


def main():
    dump_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    rng = np.random.RandomState(0)
    params = {
        "wx": (rng.standard_normal((INPUT, HIDDEN)) / np.sqrt(INPUT)).astype(np.float32),
        "wh": (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32),
        "b": np.zeros((HIDDEN,), np.float32),
    }
    xs = rng.standard_normal((STEPS, BATCH, INPUT)).astype(np.float32)
    a = rng.standard_normal((N, N)).astype(np.float32)
    u = rng.standard_normal((N,)).astype(np.float32)
    u /= np.linalg.norm(u)
    # Symmetric noise plus a rank-one part (eigenvalue gap ~2x): about 15 iterations.
    matrix = (a + a.T) / 4 + (N / 5) * np.outer(u, u)
    out = jax.block_until_ready(step(params, xs, matrix))  # compile + warm up
    print(f"eigenvalue {float(out[2]):.5f} after {int(out[4])} iterations")
    with jax.profiler.trace(os.path.join(dump_dir, "trace"), create_perfetto_trace=True):
        for _ in range(TRACED_STEPS):
            out = jax.block_until_ready(step(params, xs, matrix))


if __name__ == "__main__":
    main()
