"""A graph network cost model, as in the TpuGraphs baselines (Phothilimthana et al., 2023).

Each kernel is the graph of the instructions it fuses (:func:`kernel_graphs.kernel_graph`: node
0 the kernel, then its fused instructions, at most ``MAX_NODES``; edges operand -> user).
A node is its opcode (one-hot) beside its shape features (element count, rank, minor
dimension, physical layout, element type, root/parameter/constant). Message passing is
GraphSAGE's mean aggregation, over operands and over users separately, ``HOPS`` steps each
way, in the scalable SIGN form (Frasca et al., 2020): the propagated features
``A_in^k X`` and ``A_out^k X`` are computed once, read out as the mean over the kernel's
nodes and the kernel node's own row, and the learned part comes after them: a transform
of that readout (the learned opcode/shape embedding) beside the kernel's numeric features
(the MLP's: its work as times on the device profile, loop and program context, its
producer and consumer kernels' roofline times, its schedule position), then an MLP head
that predicts the log correction to the roofline, as the MLP model does. Why SIGN rather
than per-layer learned aggregation: a training step costs what the MLP's does, which
keeps leave-one-family-out over ~300 programs within minutes on 2 cores.

Training: JAX, Adam from ``jax.example_libraries.optimizers``, full batch, rows padded to a
multiple of ``PAD_ROWS`` (one compile serves every fold). Predictions run in NumPy.
Saved like the MLP: ``.npz`` + ``.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .costs import KernelCost
from .devices import DeviceProfile
from .dataset import Dataset
from .features import VOCAB, module_features
from .kernel_graphs import NODE_FEATURES, KernelGraph, kernel_graph
from .model_base import (CLIP, MAX_CORRECTION, SeededModel, normalisation, read_model_files,
                         training_record)
from .training import fit_seeds, gelu_np, program_weights
from ..hlo import HloInstruction, HloModule


@dataclass
class GraphConfig:
    embed: int = 16           # width of the learned transform of the graph readout
    head: int = 32            # hidden units of the head
    steps: int = 500
    learning_rate: float = 3e-3
    weight_decay: float = 1e-1      # see TrainConfig.weight_decay
    seeds: int = 2
    rank_weight: float = 1.0


HOPS = 2                  # message-passing steps (each direction)


def graph_features(g: KernelGraph) -> np.ndarray:
    """One kernel's graph read out after ``HOPS`` mean-aggregation steps over operands and
    over users: [mean over nodes, kernel node] of X, A_in^k X, A_out^k X (k = 1..HOPS),
    where X = [opcode one-hot, node features] (SIGN: the propagation is fixed and
    precomputed, the learned transform comes after, so a step costs as much as the MLP's)."""
    n = len(g.ops)
    x = np.zeros((n, len(VOCAB) + len(NODE_FEATURES)), np.float32)
    x[np.arange(n), g.ops] = 1.0
    x[:, len(VOCAB):] = g.feats
    a_in = np.zeros((n, n), np.float32)
    a_out = np.zeros((n, n), np.float32)
    if len(g.src):
        np.add.at(a_in, (g.dst, g.src), 1.0)       # row: a node, columns: its operands
        np.add.at(a_out, (g.src, g.dst), 1.0)      # row: a node, columns: its users
    a_in /= np.maximum(a_in.sum(1, keepdims=True), 1.0)
    a_out /= np.maximum(a_out.sum(1, keepdims=True), 1.0)
    views = [x]
    h_in, h_out = x, x
    for _ in range(HOPS):
        h_in, h_out = a_in @ h_in, a_out @ h_out
        views += [h_in, h_out]
    return np.concatenate([v.mean(0) for v in views] + [v[0] for v in views])


GRAPH_WIDTH = 2 * (1 + 2 * HOPS) * (len(VOCAB) + len(NODE_FEATURES))


def graph_matrix(graphs: Sequence[KernelGraph]) -> np.ndarray:
    if not graphs:
        return np.zeros((0, GRAPH_WIDTH), np.float32)
    return np.stack([graph_features(g) for g in graphs]).astype(np.float32)


# --------------------------------------------------------------------------- the model

def _init(key, n_numeric: int, cfg: GraphConfig):
    import jax
    import jax.numpy as jnp
    k = jax.random.split(key, 4)

    def dense(kk, a, b, scale=1.0):
        return jax.random.normal(kk, (a, b)) * scale / jnp.sqrt(a)
    d = n_numeric + cfg.embed
    return {"wg": dense(k[0], GRAPH_WIDTH, cfg.embed, 0.5), "bg": jnp.zeros((cfg.embed,)),
            "w1": dense(k[1], d, cfg.head), "b1": jnp.zeros((cfg.head,)),
            "w2": dense(k[2], cfg.head, cfg.head), "b2": jnp.zeros((cfg.head,)),
            "w3": dense(k[3], cfg.head, 1, 0.1), "b3": jnp.zeros((1,))}


def _forward(params, x, g):
    import jax
    import jax.numpy as jnp
    z = jnp.concatenate([x, jax.nn.gelu(g @ params["wg"] + params["bg"])], -1)
    z = jax.nn.gelu(z @ params["w1"] + params["b1"])
    z = jax.nn.gelu(z @ params["w2"] + params["b2"])
    return (z @ params["w3"] + params["b3"])[:, 0]


def _forward_np(params, x, g) -> np.ndarray:
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    z = np.concatenate([x, gelu_np(g @ p["wg"] + p["bg"])], -1)
    z = gelu_np(z @ p["w1"] + p["b1"])
    z = gelu_np(z @ p["w2"] + p["b2"])
    return (z @ p["w3"] + p["b3"])[:, 0]


PAD_ROWS = 512


class GraphModel(SeededModel):
    """The graph network: normalisation of the numeric features, parameters per seed."""

    kind = "gnn"

    def extra_meta(self) -> dict:
        return {**super().extra_meta(), "node_features": list(NODE_FEATURES), "hops": HOPS}

    def _correction(self, numeric: np.ndarray, graphs: Sequence[KernelGraph]) -> np.ndarray:
        x = self.standardized(numeric)
        g = graph_matrix(graphs).astype(np.float64)
        outs = [_forward_np(p, x, g) for p in self.params]
        return np.clip(np.mean(outs, axis=0), -MAX_CORRECTION, MAX_CORRECTION)

    def correction_dataset(self, ds: Dataset) -> np.ndarray:
        if len(ds.graphs) != len(ds):
            raise ValueError("this dataset was built without kernel graphs")
        return self._correction(ds.numeric, ds.graphs)

    def correction(self, module: HloModule, insts: Sequence[HloInstruction],
                   costs: Sequence[KernelCost], device: DeviceProfile) -> np.ndarray:
        num, _, _ = module_features(module, insts, costs, device)
        return self._correction(num, [kernel_graph(i, module) for i in insts])

    @staticmethod
    def load(path: str) -> "GraphModel":
        base, meta, arrays = read_model_files(path)
        if meta.get("model") != "gnn":
            raise ValueError(f"{base}.json: not a graph network model")
        if meta.get("node_features") != list(NODE_FEATURES) or meta.get("hops") != HOPS:
            raise ValueError(f"{base}.json: made by another version of HLO Lens (node "
                             "features differ); train it again")
        return GraphModel.from_files(base, meta, arrays)


def train(ds: Dataset, device: DeviceProfile, cfg: GraphConfig | None = None,
          meta: dict | None = None, init: GraphModel | None = None) -> GraphModel:
    """Fit a graph network on a dataset built with ``device``'s roofline (``init``: a
    model to fine-tune, as for the MLP)."""
    import jax
    cfg = cfg or GraphConfig()
    if len(ds) < 4:
        raise ValueError(f"too little data to train on: {len(ds)} measured kernels")
    if len(ds.graphs) != len(ds):
        raise ValueError("this dataset was built without kernel graphs")
    mean, std = normalisation(ds, init)
    x = np.clip((ds.numeric - mean) / std, -CLIP, CLIP).astype(np.float32)
    g = graph_matrix(ds.graphs)
    log_roof = ds.log_roofline.astype(np.float32)
    log_label = np.log(np.maximum(ds.label_us, 1e-3)).astype(np.float32)
    _, groups = np.unique(np.asarray(ds.program), return_inverse=True)
    if init is not None:
        start = {k: np.stack([np.asarray(p[k], np.float32) for p in init.params])
                 for k in init.params[0]}
    else:
        keys = jax.random.split(jax.random.PRNGKey(0), cfg.seeds)
        start = jax.vmap(lambda key: _init(key, x.shape[1], cfg))(keys)
    params = fit_seeds(_forward, start, (x, g), log_roof, log_label,
                       program_weights(ds.program), groups, cfg, PAD_ROWS)
    info = training_record("gnn", ds, cfg, init, meta)
    return GraphModel(params, mean.astype(np.float32), std.astype(np.float32), device, info)
