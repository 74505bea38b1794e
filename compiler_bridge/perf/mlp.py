"""The MLP cost model: pooled opcode embeddings (sum, mean, size-weighted mean of
``features.VOCAB`` counts) beside the numeric features, two GELU layers, the log correction
to the roofline; a few seeds averaged. Trained in JAX (``training``), predicted in NumPy;
``train(init=...)`` fine-tunes a model (the shipped default).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dataset import Dataset
from .devices import DeviceProfile
from .features import VOCAB, module_features
from .model_base import (CLIP, MAX_CORRECTION, SeededModel, normalisation, read_model_files,
                         training_record)
from .training import fit_seeds, gelu_np, program_weights

@dataclass
class TrainConfig:
    hidden: int = 16
    embed: int = 8
    steps: int = 600
    learning_rate: float = 3e-3
    # strong enough to keep corrections tame on families never seen (chosen by
    # leave-one-family-out on the 11 families of the first traced corpus)
    weight_decay: float = 3e-2
    seeds: int = 3
    rank_weight: float = 1.0     # pairwise ranking loss (within each program), 0 = off


def _init(key, n_in: int, cfg: TrainConfig, vocab: int):
    import jax
    import jax.numpy as jnp
    k = jax.random.split(key, 4)
    d_in = n_in + 3 * cfg.embed

    def dense(kk, a, b, scale=1.0):
        return jax.random.normal(kk, (a, b)) * scale / jnp.sqrt(a)
    return {
        "embed": jax.random.normal(k[0], (vocab, cfg.embed)) * 0.1,
        "w1": dense(k[1], d_in, cfg.hidden), "b1": jnp.zeros((cfg.hidden,)),
        "w2": dense(k[2], cfg.hidden, cfg.hidden), "b2": jnp.zeros((cfg.hidden,)),
        "w3": dense(k[3], cfg.hidden, 1, 0.1), "b3": jnp.zeros((1,)),
    }


def _forward(params, numeric, counts, weighted):
    import jax
    import jax.numpy as jnp
    e = params["embed"]
    total = jnp.maximum(counts.sum(-1, keepdims=True), 1.0)
    wtotal = jnp.maximum(weighted.sum(-1, keepdims=True), 1e-6)
    pooled = jnp.concatenate([
        jnp.log1p(counts) @ e,            # sum pooling (log-damped counts)
        (counts / total) @ e,             # mean pooling
        (weighted / wtotal) @ e,          # size-weighted mean pooling
    ], axis=-1)
    x = jnp.concatenate([numeric, pooled], axis=-1)
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    h = jax.nn.gelu(h @ params["w2"] + params["b2"])
    return (h @ params["w3"] + params["b3"])[:, 0]


def _forward_np(params, numeric, counts, weighted) -> np.ndarray:
    """_forward in NumPy: predictions need no JAX (the app stays light)."""
    e = params["embed"].astype(np.float64)
    total = np.maximum(counts.sum(-1, keepdims=True), 1.0)
    wtotal = np.maximum(weighted.sum(-1, keepdims=True), 1e-6)
    pooled = np.concatenate([np.log1p(counts) @ e, (counts / total) @ e,
                             (weighted / wtotal) @ e], axis=-1)
    x = np.concatenate([numeric, pooled], axis=-1)
    h = gelu_np(x @ params["w1"] + params["b1"])
    h = gelu_np(h @ params["w2"] + params["b2"])
    return (h @ params["w3"] + params["b3"])[:, 0]


def _initial(cfg: TrainConfig, n_in: int, init: list[dict[str, np.ndarray]] | None):
    """Parameters to start from, stacked over seeds: fresh, or a model's (fine-tuning)."""
    if init is not None:
        return {k: np.stack([np.asarray(p[k], np.float32) for p in init]) for k in init[0]}
    import jax
    keys = jax.random.split(jax.random.PRNGKey(0), cfg.seeds)
    return jax.vmap(lambda k: _init(k, n_in, cfg, len(VOCAB)))(keys)


class LearnedModel(SeededModel):
    """The MLP: normalisation, parameters of each seed, and what it was trained on."""

    kind = "mlp"

    def _correction(self, numeric, counts, weighted) -> np.ndarray:
        x = self.standardized(numeric)
        counts = np.asarray(counts, np.float64)
        weighted = np.asarray(weighted, np.float64)
        outs = [_forward_np({k: np.asarray(v, np.float64) for k, v in p.items()}, x, counts,
                            weighted) for p in self.params]
        return np.clip(np.mean(outs, axis=0), -MAX_CORRECTION, MAX_CORRECTION)

    def correction_dataset(self, ds: Dataset) -> np.ndarray:
        return self._correction(ds.numeric, ds.counts, ds.weighted)

    def correction(self, module, insts, costs, device) -> np.ndarray:
        num, cnt, wtd = module_features(module, insts, costs, device)
        return self._correction(num, cnt, wtd)

    @staticmethod
    def load(path: str) -> "LearnedModel":
        base, meta, arrays = read_model_files(path)
        if meta.get("model", "mlp") != "mlp":
            raise ValueError(f"{base}.json: a {meta.get('model')} model, not an MLP")
        return LearnedModel.from_files(base, meta, arrays)


def train(ds: Dataset, device: DeviceProfile, cfg: TrainConfig | None = None,
          meta: dict | None = None, init: "LearnedModel | None" = None) -> "LearnedModel":
    """Fit a model on a dataset (built with ``device``'s roofline). ``init``: a model to
    fine-tune (its normalisation and weights are the start; its training programs are
    kept in the new model's record)."""
    cfg = cfg or TrainConfig()
    if len(ds) < 4:
        raise ValueError(f"too little data to train on: {len(ds)} measured kernels")
    mean, std = normalisation(ds, init)
    x = np.clip((ds.numeric - mean) / std, -CLIP, CLIP).astype(np.float32)
    log_roof = ds.log_roofline.astype(np.float32)
    log_label = np.log(np.maximum(ds.label_us, 1e-3)).astype(np.float32)
    _, groups = np.unique(np.asarray(ds.program), return_inverse=True)
    start = _initial(cfg, x.shape[1], init.params if init is not None else None)
    params = fit_seeds(_forward, start, (x, ds.counts, ds.weighted), log_roof, log_label,
                       program_weights(ds.program), groups, cfg)
    info = training_record("mlp", ds, cfg, init, meta)
    return LearnedModel(params, mean.astype(np.float32), std.astype(np.float32), device, info)
