"""Finding and reading a saved cost model of any kind: where the user's model is saved
(``default_model_path``), the default model shipped in ``models/`` (see its README;
``shipped_model_path``), and ``load_model``, which reads a model's record and hands it to
its kind's class (``KINDS``: the MLP, the graph network, gradient-boosted trees).
"""

from __future__ import annotations

import os

from .boosted import BoostedModel
from .graph_model import GraphModel
from .mlp import LearnedModel
from .model_base import CostModel, read_model_files
from ..config import settings

# model kind (its files' "model") -> class; a file that names none is an MLP's
KINDS: dict[str | None, type[LearnedModel] | type[GraphModel] | type[BoostedModel]] = {
    cls.kind: cls for cls in (LearnedModel, GraphModel, BoostedModel)}


def default_model_path(kind: str = "cpu") -> str:
    """Where ``train`` saves by default and the app looks: one model per device kind."""
    return os.path.join(settings().cache_dir, f"cost-model-{kind}.npz")


MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


def shipped_model_path(kind: str = "cpu") -> str:
    """The default model shipped with HLO Lens for a device kind (models/README.md says
    how it was made); used when the user has saved none."""
    return os.path.join(MODELS_DIR, f"default-{kind}.npz")


def try_load_model(path: str, which: str) -> tuple[CostModel | None, str]:
    """The ``which`` ('saved', 'default') model at ``path``, or (None, why not) when it is
    missing, stale or broken: the caller falls back and says why."""
    if not os.path.exists(path):
        return None, f"no {which} cost model"
    try:
        return load_model(path), ""
    except (OSError, ValueError, KeyError) as e:
        return None, f"{which} cost model not used: {str(e).splitlines()[0]}"


def load_model(path: str) -> CostModel:
    """A saved model of any kind (MLP, graph network, gradient-boosted trees)."""
    _, meta, _ = read_model_files(path)
    return KINDS.get(meta.get("model"), LearnedModel).load(path)
