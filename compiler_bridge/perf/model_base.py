"""What every learned cost model is: :class:`CostModel` (the device profile it was
trained against, what it was trained on, prediction as a correction to the roofline on any
device profile, its files: ``.npz`` arrays + ``.json`` record, never pickle),
:class:`SeededModel` (parameters per seed over standardized features: the MLP and the
graph network), ``read_model_files`` (a saved model checked to be one this version
reads) and what fine-tuning keeps of its start. Imports no model kind: each kind imports
this, and ``model_loader`` imports the kinds.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Sequence

import numpy as np

from .costs import KernelCost, costs_of
from .roofline import roofline_us
from .dataset import Dataset
from .devices import DeviceProfile
from .features import FEATURE_VERSION, NUMERIC, VOCAB
from ..hlo import HloInstruction, HloModule

FORMAT = "hlolens-learned-cost-model"
VERSION = 1
CLIP = 6.0              # standardized features are clipped to +-CLIP
MAX_CORRECTION = 6.0    # |log correction| at most this (a factor of ~400)


class CostModel:
    """What every learned model shares: the device profile it was trained against, what
    it was trained on (``meta``), its files, and prediction as a correction to the
    roofline of the device it predicts for."""

    kind = "model"

    def __init__(self, device: DeviceProfile, meta: dict | None = None) -> None:
        self.device = device
        self.meta = meta or {}
        self.path = ""

    def arrays(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    @property
    def key(self) -> str:
        """Content identity: a hash of the arrays, the device profile and what
        ``describe`` says."""
        h = hashlib.blake2b(digest_size=16)
        for name, a in sorted(self.arrays().items()):
            arr = np.ascontiguousarray(np.asarray(a))
            h.update(f"{name}{arr.dtype}{arr.shape}".encode())
            h.update(arr.tobytes())
        h.update(self.device.key.encode())
        h.update(self.describe().encode())
        return h.hexdigest()

    @property
    def is_default(self) -> bool:
        return bool(self.meta.get("default"))

    def describe(self) -> str:
        progs = self.meta.get("programs", [])
        fams = self.meta.get("families") or []
        what = {"gnn": "graph network", "gbm": "gradient-boosted trees"}.get(self.kind, "MLP")
        if self.is_default:
            return (f"default model — trained on {len(progs)} programs of {len(fams)} "
                    f"families ({what}, {self.meta.get('kernels', '?')} kernels)")
        where = f" ({self.path})" if self.path else ""
        base = self.meta.get("fine_tuned_from")
        tuned = (f", fine-tuned from a model of {len(base.get('programs') or [])} programs"
                 if isinstance(base, dict) else "")
        return (f"learned model{where} ({what}), trained on {len(progs)} programs, "
                f"{self.meta.get('kernels', '?')} kernels{tuned}")

    def correction(self, module: HloModule, insts: Sequence[HloInstruction],
                   costs: Sequence[KernelCost], device: DeviceProfile) -> np.ndarray:
        raise NotImplementedError

    def correction_dataset(self, ds: Dataset) -> np.ndarray:
        raise NotImplementedError

    def predict_dataset(self, ds: Dataset) -> np.ndarray:
        """Predicted µs for a dataset (its features and roofline on the dataset's device)."""
        if len(ds) == 0:
            return np.zeros((0,))
        return np.exp(ds.log_roofline.astype(np.float64) + self.correction_dataset(ds))

    def predict(self, module: HloModule, insts: Sequence[HloInstruction],
                costs: Sequence[KernelCost] | None = None,
                device: DeviceProfile | None = None) -> np.ndarray:
        """Predicted µs per kernel on ``device`` (default: the one it was trained
        against): its roofline there, times the learned correction of features that are
        themselves times on that device, so a model trained on one machine's calibrated
        profile predicts another's."""
        if not insts:
            return np.zeros((0,))
        device = device or self.device
        costs = costs if costs is not None else costs_of(module, insts)
        roof = np.asarray([roofline_us(c, device) for c in costs], np.float64)
        return np.exp(np.log(np.maximum(roof, 1e-3))
                      + self.correction(module, insts, costs, device))

    # -- files: <path>.npz (arrays) + <path>.json (everything else)
    def save(self, path: str) -> str:
        base = path[:-4] if path.endswith(".npz") else path
        os.makedirs(os.path.dirname(os.path.abspath(base)) or ".", exist_ok=True)
        # numpy's stub matches **arrays against savez's allow_pickle: bool
        np.savez_compressed(base + ".npz", **self.arrays())  # type: ignore[arg-type]
        meta = dict(self.meta)
        meta.update({"format": FORMAT, "version": VERSION, "model": self.kind,
                     "feature_version": FEATURE_VERSION, "vocab": list(VOCAB),
                     "numeric": list(NUMERIC), "device": self.device.to_json()})
        meta.update(self.extra_meta())
        with open(base + ".json", "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        self.path = base + ".npz"
        return self.path

    def extra_meta(self) -> dict:
        return {}


def read_model_files(path: str) -> tuple[str, dict, dict[str, np.ndarray]]:
    """(base path, meta, arrays) of a saved model, checked to be one this version of HLO
    Lens can use (raises ValueError saying why not)."""
    base = path[:-4] if path.endswith(".npz") else (path[:-5] if path.endswith(".json") else path)
    try:
        with open(base + ".json", encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{base}.json: not a readable cost model ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{base}.json: not an HLO Lens cost model")
    if meta.get("feature_version") != FEATURE_VERSION or meta.get("vocab") != list(VOCAB) \
            or meta.get("numeric") != list(NUMERIC):
        raise ValueError(f"{base}.json: made by another version of HLO Lens (features "
                         f"version {meta.get('feature_version', 1)}, this one reads "
                         f"{FEATURE_VERSION}); train it again")
    try:
        with np.load(base + ".npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise ValueError(f"{base}.npz: not a readable cost model ({e})") from None
    return base, meta, arrays


class SeededModel(CostModel):
    """What both kinds (MLP, graph network) are: parameters of each seed, averaged, over
    numeric features standardized by the training set's mean and std."""

    def __init__(self, params: list[dict[str, np.ndarray]], mean: np.ndarray, std: np.ndarray,
                 device: DeviceProfile, meta: dict | None = None) -> None:
        super().__init__(device, meta)
        self.params = params
        self.mean = mean
        self.std = std

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"mean": np.asarray(self.mean, np.float32), "std": np.asarray(self.std, np.float32)}
        for s, p in enumerate(self.params):
            for k, v in p.items():
                out[f"seed{s}.{k}"] = np.asarray(v, np.float32)
        return out

    def extra_meta(self) -> dict:
        return {"seeds": len(self.params)}

    def standardized(self, numeric) -> np.ndarray:
        return np.clip((np.asarray(numeric, np.float64) - self.mean) / self.std, -CLIP, CLIP)

    @classmethod
    def from_files(cls, base: str, meta: dict, arrays: dict[str, np.ndarray]):
        """The model ``read_model_files`` read (its kind already checked)."""
        params = []
        for s in range(int(meta.get("seeds", 1))):
            prefix = f"seed{s}."
            params.append({k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)})
        model = cls(params, arrays["mean"], arrays["std"],
                    DeviceProfile.from_json(meta["device"]), meta)
        model.path = base + ".npz"
        return model


def normalisation(ds: Dataset, init: SeededModel | None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std that standardize the numeric features: a fine-tuned model keeps its
    start's; else the dataset's (a feature constant in training stays tame)."""
    if init is not None:
        return init.mean.astype(np.float64), init.std.astype(np.float64)
    return ds.numeric.mean(0), np.maximum(ds.numeric.std(0), 0.1)


def training_record(kind: str, ds: Dataset, cfg, init: CostModel | None,
                    meta: dict | None) -> dict:
    """What a trained model records: its kind, the programs and kernels it was trained on,
    its configuration (a dataclass), the model it was fine-tuned from, and ``meta``."""
    info = {"model": kind, "programs": ds.programs, "kernels": len(ds), "config": cfg.__dict__}
    if init is not None:
        info["fine_tuned_from"] = _fine_tune_record(init)
    info.update(meta or {})
    return info


def _fine_tune_record(base) -> dict:
    """What a fine-tuned model keeps of the model it started from."""
    return {k: base.meta.get(k) for k in ("model", "programs", "families", "corpus_hash",
                                         "calibration", "kernels") if k in base.meta}
