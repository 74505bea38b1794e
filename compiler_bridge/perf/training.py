"""What the MLP and the graph network train with: Adam from
``jax.example_libraries.optimizers`` on squared log error (each program weighing the same,
``program_weights``) plus a pairwise ranking loss within each program, every seed at once,
in one compiled trainer per model kind (rows padded to buckets so one compile serves every
fold of an evaluation). jax is imported only here, only to train; ``gelu_np`` lets the
models predict in NumPy.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

def program_weights(programs: Sequence[str]) -> np.ndarray:
    """Each program weighs the same in total (sqrt-damped, so big ones still count more)."""
    names, inverse, counts = np.unique(np.asarray(programs), return_inverse=True,
                                       return_counts=True)
    return (1.0 / np.sqrt(counts[inverse])).astype(np.float32)


def gelu_np(x: np.ndarray) -> np.ndarray:
    """jax.nn.gelu (tanh approximation, its default) in NumPy."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


PAD_ROWS = 256        # kernels are padded to a multiple of this (one compile serves many sizes)
MAX_PAIRS = 20000     # ranking pairs, padded to exactly this many
_TRAINERS: dict = {}  # a model kind's forward function -> its compiled trainer


class FitSettings(Protocol):
    """What :func:`fit_seeds` reads of a model kind's configuration."""

    steps: int
    learning_rate: float
    weight_decay: float
    rank_weight: float


def _trainer(forward):
    """The compiled trainer of one model kind (``forward(params, *inputs)`` -> its log
    correction per kernel), built once per process: every argument is an array padded to
    a bucketed size, the configuration is static, so folds of an evaluation share it."""
    got = _TRAINERS.get(forward)
    if got is not None:
        return got
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.example_libraries import optimizers

    @jax.jit
    def fit(params, inputs, target, weights, pi, pj, pw, gap, steps, lr, wd, rank):
        # params: one set per seed, stacked (fresh ones, or a model to fine-tune)
        opt_init, opt_update, get_params = optimizers.adam(lr)
        wsum = jnp.maximum(jnp.sum(weights), 1e-9)

        def loss(p):
            corr = forward(p, *inputs)
            err = corr - target
            fit_loss = jnp.sum(weights * err * err) / wsum
            # ranking on predicted log times (log roofline + correction): the pair
            # (pi, pj) has label[pi] > label[pj]; gap = log_roof[pi] - log_roof[pj]
            d = corr[pi] - corr[pj] + gap
            fit_loss = fit_loss + rank * jnp.sum(pw * jax.nn.softplus(-2.0 * d))
            reg = sum(jnp.sum(v * v) for k_, v in p.items() if k_.startswith("w"))
            return fit_loss + wd * reg

        def total(stacked):
            return jnp.sum(jax.vmap(loss)(stacked))

        def body(i, st):
            return opt_update(i, jax.grad(total)(get_params(st)), st)
        return get_params(lax.fori_loop(0, steps, body, opt_init(params)))

    _TRAINERS[forward] = fit
    return fit


def fit_seeds(forward, start, inputs: Sequence[np.ndarray], log_roof: np.ndarray,
              log_label: np.ndarray, weights: np.ndarray, groups: np.ndarray,
              cfg: FitSettings, pad_rows: int = PAD_ROWS) -> list[dict[str, np.ndarray]]:
    """Adam on squared log error (``weights``) plus the pairwise ranking loss within each
    program (``groups``), every seed of ``start`` (parameters stacked over seeds) at once;
    ``inputs``: the arrays ``forward`` takes after the parameters, one row per kernel.
    Returns each seed's parameters."""
    n = len(log_roof)
    rows = -(-n // pad_rows) * pad_rows

    def pad(a):
        out = np.zeros((rows,) + a.shape[1:], np.float32)
        out[:n] = a
        return out
    pi = np.zeros(MAX_PAIRS, np.int32)
    pj = np.zeros(MAX_PAIRS, np.int32)
    pw = np.zeros(MAX_PAIRS, np.float32)
    if cfg.rank_weight > 0:
        i, j, w = ranking_pairs(groups, log_label, weights, 0, MAX_PAIRS)
        if i is not None:
            pi[:len(i)], pj[:len(j)], pw[:len(w)] = i, j, w
    gap = (log_roof[pi] - log_roof[pj]).astype(np.float32)
    stacked = _trainer(forward)(start, tuple(pad(a) for a in inputs), pad(log_label - log_roof),
                                pad(weights), pi, pj, pw, gap, np.int32(cfg.steps),
                                np.float32(cfg.learning_rate), np.float32(cfg.weight_decay),
                                np.float32(cfg.rank_weight))
    stacked = {k: np.asarray(v) for k, v in stacked.items()}
    seeds = len(next(iter(stacked.values())))
    return [{k: v[s] for k, v in stacked.items()} for s in range(seeds)]


def ranking_pairs(groups: np.ndarray, log_label: np.ndarray, weights: np.ndarray, seed: int,
           max_pairs: int = 20000):
    """Ordered pairs (slower, faster) of kernels of one program whose labels differ by
    more than 10%, sampled to at most ``max_pairs``; weights sum to 1."""
    rng = np.random.RandomState(seed)
    ii, jj = [], []
    for g in np.unique(groups):
        idx = np.nonzero(groups == g)[0]
        if len(idx) < 2:
            continue
        a = np.repeat(idx, len(idx))
        b = np.tile(idx, len(idx))
        keep = log_label[a] > log_label[b] + 0.1
        ii.append(a[keep])
        jj.append(b[keep])
    if not ii:
        return None, None, None
    i = np.concatenate(ii)
    j = np.concatenate(jj)
    if len(i) > max_pairs:
        pick = rng.choice(len(i), max_pairs, replace=False)
        i, j = i[pick], j[pick]
    if len(i) == 0:
        return None, None, None
    w = weights[i] * weights[j]
    w = w / w.sum()
    return i.astype(np.int32), j.astype(np.int32), w.astype(np.float32)
