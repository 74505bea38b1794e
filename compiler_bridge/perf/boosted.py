"""A gradient-boosted trees cost model: LightGBM regression of the log correction to the
roofline, beside the MLP and the graph network.

The input of a kernel is the MLP's, flattened into one row (:func:`boost_features`): its
numeric features, the log-damped counts of the opcodes it fuses, and each opcode's share
of the size-weighted counts. The target is ``log(measured) - log(roofline)``, each program
weighing the same (``program_weights``), under a Huber loss (a few wild kernels of a noisy
trace pull less). Leave-one-family-out on the traced corpus it ranks and sizes kernels
better than the MLP; the hyperparameters of :class:`BoostConfig` are the ones measured
there, not tuned further.

LightGBM is needed only to train: the trees are read out of ``Booster.dump_model()`` into
flat arrays (:class:`Trees`) and predicted in NumPy, so the app never imports it.
Fine-tuning fits new trees on the residual of the model it starts from (its prediction is
the ``init_score``); the result is both sets of trees. Saved like the others: ``.npz``
(the arrays, float64 thresholds and leaf values: predictions are LightGBM's to the last
bit) + ``.json``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Sequence

import numpy as np

from .costs import KernelCost
from .devices import DeviceProfile
from .dataset import Dataset
from .features import NUMERIC, VOCAB, module_features
from .model_base import MAX_CORRECTION, CostModel, read_model_files, training_record
from .training import program_weights
from ..hlo import HloInstruction, HloModule

N_FEATURES = len(NUMERIC) + 2 * len(VOCAB)
ZERO = 1e-35            # LightGBM's kZeroThreshold: inputs this small are zero to it
MISSING_TYPES = ("None", "Zero", "NaN")


def _threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


@dataclass
class BoostConfig:
    """LightGBM's settings, as measured leave-one-family-out on the traced corpus."""

    objective: str = "huber"
    alpha: float = 0.5
    learning_rate: float = 0.05
    num_leaves: int = 31
    min_data_in_leaf: int = 50
    feature_fraction: float = 0.8
    bagging_fraction: float = 0.8
    bagging_freq: int = 1
    lambda_l2: float = 1.0
    rounds: int = 500
    finetune_rounds: int = 200     # new trees when fine-tuning a model
    # a user's own traces are a few programs: leaves of 50 kernels would leave the trees
    # of a fine-tune nearly empty
    finetune_min_data_in_leaf: int = 5
    seed: int = 0
    num_threads: int = field(default_factory=_threads)

    def params(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if not k.startswith(("rounds", "finetune"))}
        # the same trees on every run and machine (no timing-based choice of layout)
        out.update(verbose=-1, deterministic=True, force_col_wise=True)
        return out


def boost_features(numeric: np.ndarray, counts: np.ndarray, weighted: np.ndarray) -> np.ndarray:
    """One row per kernel: [numeric features, log1p(opcode counts), share of each opcode
    in the size-weighted counts]."""
    numeric = np.asarray(numeric, np.float64)
    counts = np.asarray(counts, np.float64)
    weighted = np.asarray(weighted, np.float64)
    share = weighted / np.maximum(weighted.sum(-1, keepdims=True), 1e-6)
    return np.concatenate([numeric, np.log1p(counts), share], axis=-1)


def dataset_features(ds: Dataset) -> np.ndarray:
    return boost_features(ds.numeric, ds.counts, ds.weighted)


# --------------------------------------------------------------------------- trees

@dataclass(frozen=True)
class Trees:
    """An ensemble of binary trees in flat arrays. Node ``i`` (over all trees) splits on
    ``feature[i]`` at ``threshold[i]``; a child ``c >= 0`` is another node, ``c < 0`` the
    leaf ``~c``; ``roots`` the same encoding per tree (a tree of one leaf has a leaf
    root). ``missing`` is LightGBM's missing type (index in MISSING_TYPES) and
    ``default_left`` where a missing value goes."""

    roots: np.ndarray          # [trees] int32
    feature: np.ndarray        # [nodes] int16
    threshold: np.ndarray      # [nodes] float64
    left: np.ndarray           # [nodes] int32
    right: np.ndarray          # [nodes] int32
    missing: np.ndarray        # [nodes] int8
    default_left: np.ndarray   # [nodes] bool
    leaf_value: np.ndarray     # [leaves] float64

    FIELDS = ("roots", "feature", "threshold", "left", "right", "missing", "default_left",
              "leaf_value")

    def __len__(self) -> int:
        return len(self.roots)

    @staticmethod
    def from_dump(dump: dict) -> "Trees":
        """The trees of ``lightgbm.Booster.dump_model()`` (numerical splits only)."""
        nodes: dict[str, list] = {k: [] for k in ("feature", "threshold", "left", "right",
                                                   "missing", "default_left")}
        leaves: list[float] = []

        def add(node: dict) -> int:
            if "split_index" not in node:
                leaves.append(float(node["leaf_value"]))
                return ~(len(leaves) - 1)
            if node.get("decision_type", "<=") != "<=":
                raise ValueError(f"unsupported split {node.get('decision_type')!r} "
                                 "(categorical features are not used)")
            i = len(nodes["feature"])
            nodes["feature"].append(int(node["split_feature"]))
            nodes["threshold"].append(float(node["threshold"]))
            nodes["missing"].append(MISSING_TYPES.index(node.get("missing_type", "None")))
            nodes["default_left"].append(bool(node.get("default_left", True)))
            nodes["left"].append(0)
            nodes["right"].append(0)
            nodes["left"][i] = add(node["left_child"])
            nodes["right"][i] = add(node["right_child"])
            return i
        roots = [add(t["tree_structure"]) for t in dump.get("tree_info", [])]
        return Trees(np.asarray(roots, np.int32), np.asarray(nodes["feature"], np.int16),
                     np.asarray(nodes["threshold"], np.float64),
                     np.asarray(nodes["left"], np.int32), np.asarray(nodes["right"], np.int32),
                     np.asarray(nodes["missing"], np.int8),
                     np.asarray(nodes["default_left"], bool), np.asarray(leaves, np.float64))

    @staticmethod
    def concat(parts: Sequence["Trees"]) -> "Trees":
        """One ensemble of several (indices shifted): their predictions add up."""
        out: dict[str, list[np.ndarray]] = {k: [] for k in Trees.FIELDS}
        n_nodes = n_leaves = 0
        for t in parts:
            def shift(c: np.ndarray) -> np.ndarray:
                return np.where(c >= 0, c + n_nodes, c - n_leaves).astype(np.int32)
            out["roots"].append(shift(t.roots))
            out["left"].append(shift(t.left))
            out["right"].append(shift(t.right))
            for k in ("feature", "threshold", "missing", "default_left", "leaf_value"):
                out[k].append(getattr(t, k))
            n_nodes += len(t.feature)
            n_leaves += len(t.leaf_value)
        return Trees(**{k: np.concatenate(v) for k, v in out.items()})

    @cached_property
    def _walk(self) -> tuple[np.ndarray, ...]:
        """Nodes then leaves in one index space, a leaf its own child (it absorbs), the
        children of node ``i`` at ``2i`` (left) and ``2i + 1`` (right): every row steps
        through every tree at once, without masks."""
        n, k = len(self.feature), len(self.leaf_value)

        def index(c: np.ndarray) -> np.ndarray:
            return np.where(c >= 0, c, n + ~c).astype(np.intp)
        at_leaf = np.arange(n, n + k, dtype=np.intp)
        children = np.stack([np.concatenate([index(self.left), at_leaf]),
                             np.concatenate([index(self.right), at_leaf])], 1).ravel()
        feature = np.concatenate([self.feature.astype(np.intp), np.zeros(k, np.intp)])
        threshold = np.concatenate([self.threshold, np.zeros(k)])
        missing = np.concatenate([self.missing, np.zeros(k, np.int8)])
        default_right = np.concatenate([~self.default_left, np.zeros(k, bool)])
        return index(self.roots), children, feature, threshold, missing, default_right

    def raw(self, x: np.ndarray, chunk: int = 1 << 18) -> np.ndarray:
        """Sum over trees of the leaf each row reaches: LightGBM's raw score. Rows are
        taken ``chunk // trees`` at a time; each step moves every (row, tree) one level
        down."""
        x = np.asarray(x, np.float64)
        out = np.zeros((len(x),))
        if len(self.roots) == 0 or len(x) == 0:
            return out
        x = np.where(np.abs(x) <= ZERO, 0.0, x)       # as LightGBM reads its input
        roots, children, feature, threshold, missing, default_right = self._walk
        special = bool(np.isnan(x).any() or self.missing.any())
        n = len(self.feature)
        step = max(1, chunk // len(roots))
        for s in range(0, len(x), step):
            xs = x[s:s + step]
            flat = xs.ravel()
            base = (np.arange(len(xs)) * xs.shape[1])[:, None]
            at = np.broadcast_to(roots, (len(xs), len(roots)))
            while (at < n).any():
                val = flat.take(base + feature.take(at))
                if special:
                    mt = missing.take(at)
                    nan = np.isnan(val)
                    val = np.where(nan & (mt != 2), 0.0, val)   # NaN is 0 unless missing
                    miss = ((mt == 1) & (np.abs(val) <= ZERO)) | ((mt == 2) & nan)
                    go_right = np.where(miss, default_right.take(at), val > threshold.take(at))
                else:
                    go_right = val > threshold.take(at)
                at = children.take(2 * at + go_right)
            out[s:s + step] = self.leaf_value.take(at - n).sum(axis=1)
        return out

    def arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        return {prefix + k: getattr(self, k) for k in Trees.FIELDS}

    @staticmethod
    def from_arrays(arrays: dict[str, np.ndarray], prefix: str = "") -> "Trees":
        dtypes = {"roots": np.int32, "feature": np.int16, "threshold": np.float64,
                  "left": np.int32, "right": np.int32, "missing": np.int8,
                  "default_left": bool, "leaf_value": np.float64}
        return Trees(**{k: np.asarray(arrays[prefix + k], dtypes[k]) for k in Trees.FIELDS})


# --------------------------------------------------------------------------- the model

class BoostedModel(CostModel):
    """Gradient-boosted trees predicting the log correction to the roofline."""

    kind = "gbm"

    def __init__(self, trees: Trees, device: DeviceProfile, meta: dict | None = None) -> None:
        super().__init__(device, meta)
        self.trees = trees

    def arrays(self) -> dict[str, np.ndarray]:
        return self.trees.arrays("tree.")

    def extra_meta(self) -> dict:
        return {"trees": len(self.trees), "n_features": N_FEATURES}

    def raw_dataset(self, ds: Dataset) -> np.ndarray:
        """The trees' sum, unclipped (what fine-tuning continues from)."""
        return self.trees.raw(dataset_features(ds))

    def correction_dataset(self, ds: Dataset) -> np.ndarray:
        return np.clip(self.raw_dataset(ds), -MAX_CORRECTION, MAX_CORRECTION)

    def correction(self, module: HloModule, insts: Sequence[HloInstruction],
                   costs: Sequence[KernelCost], device: DeviceProfile) -> np.ndarray:
        x = boost_features(*module_features(module, insts, costs, device))
        return np.clip(self.trees.raw(x), -MAX_CORRECTION, MAX_CORRECTION)

    @staticmethod
    def load(path: str) -> "BoostedModel":
        base, meta, arrays = read_model_files(path)
        if meta.get("model") != "gbm":
            raise ValueError(f"{base}.json: not a gradient-boosted trees model")
        if meta.get("n_features") != N_FEATURES:
            raise ValueError(f"{base}.json: made by another version of HLO Lens (its trees "
                             "read other features); train it again")
        try:
            trees = Trees.from_arrays(arrays, "tree.")
        except KeyError as e:
            raise ValueError(f"{base}.npz: not a gradient-boosted trees model (no {e})") \
                from None
        model = BoostedModel(trees, DeviceProfile.from_json(meta["device"]), meta)
        model.path = base + ".npz"
        return model


def fit_booster(x: np.ndarray, target: np.ndarray, weights: np.ndarray, cfg: BoostConfig,
                rounds: int, init_score: np.ndarray | None = None):
    """A LightGBM booster fitted to ``target`` (lightgbm is imported here only)."""
    import lightgbm as lgb
    data = lgb.Dataset(x, target, weight=weights, init_score=init_score,
                       params={"verbose": -1})
    return lgb.train(cfg.params(), data, num_boost_round=rounds)


def train(ds: Dataset, device: DeviceProfile, cfg: BoostConfig | None = None,
          meta: dict | None = None, init: BoostedModel | None = None) -> BoostedModel:
    """Fit gradient-boosted trees on a dataset built with ``device``'s roofline. ``init``:
    a model to fine-tune: new trees (``cfg.finetune_rounds``) fit what it leaves
    unexplained, and the model is its trees followed by them."""
    cfg = cfg or BoostConfig()
    if len(ds) < 4:
        raise ValueError(f"too little data to train on: {len(ds)} measured kernels")
    if init is not None and not isinstance(init, BoostedModel):
        raise ValueError(f"a {init.kind} model cannot be fine-tuned as boosted trees")
    x = dataset_features(ds)
    target = np.log(np.maximum(ds.label_us, 1e-3)) - ds.log_roofline.astype(np.float64)
    start = init.raw_dataset(ds) if init is not None else None
    rounds = cfg.finetune_rounds if init is not None else cfg.rounds
    fit_cfg = replace(cfg, min_data_in_leaf=cfg.finetune_min_data_in_leaf) \
        if init is not None else cfg
    booster = fit_booster(x, target, program_weights(ds.program), fit_cfg, rounds, start)
    trees = Trees.from_dump(booster.dump_model())
    if init is not None:
        trees = Trees.concat([init.trees, trees])
    info = training_record("gbm", ds, cfg, init, meta)
    return BoostedModel(trees, device, info)
