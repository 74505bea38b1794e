"""The gradient-boosted trees cost model: its NumPy trees predict what LightGBM itself
predicts (real kernels of the traced sample dumps), its files, fine-tuning on the residual,
its description, and `train --kind gbm`."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import lightgbm as lgb
import numpy as np
import pytest

from compiler_bridge import open_dump
from compiler_bridge.perf import CPU, kernels
from compiler_bridge.perf import boosted as B
from compiler_bridge.perf.dataset import Dataset, dataset_from_dumps
from compiler_bridge.perf import mlp
from compiler_bridge.perf.model_base import MAX_CORRECTION
from compiler_bridge.perf.model_loader import load_model
from compiler_bridge.perf.training import program_weights

from conftest import ROOT, sample

# few rounds and small leaves: fast, and deep enough trees on ~100 kernels
SMALL = dataclasses.replace(B.BoostConfig(), rounds=40, finetune_rounds=20, min_data_in_leaf=5)


@pytest.fixture(scope="module")
def dataset():
    return dataset_from_dumps([sample("transformer"), sample("scan_while")], CPU)


def _of(ds: Dataset, program: str) -> Dataset:
    return ds.subset(np.array([p == program for p in ds.program]))


def _target(ds: Dataset) -> np.ndarray:
    return np.log(np.maximum(ds.label_us, 1e-3)) - ds.log_roofline.astype(np.float64)


def _depth(t: B.Trees, c: int) -> int:
    return 0 if c < 0 else 1 + max(_depth(t, int(t.left[c])), _depth(t, int(t.right[c])))


# --------------------------------------------------------------------------- trees

def test_numpy_trees_predict_what_lightgbm_predicts(dataset):
    """Trees fit on one program, read out of dump_model(), predict LightGBM's raw score
    on both programs' kernels (the other one never seen)."""
    train = _of(dataset, "transformer")
    x = B.dataset_features(train)
    booster = B.fit_booster(x, _target(train), program_weights(train.program), SMALL,
                            SMALL.rounds)
    trees = B.Trees.from_dump(booster.dump_model())
    assert len(trees) == SMALL.rounds
    assert max(_depth(trees, int(r)) for r in trees.roots) >= 3
    assert len(set(trees.feature.tolist())) > 5
    everything = B.dataset_features(dataset)
    want = booster.predict(everything, raw_score=True)
    np.testing.assert_allclose(trees.raw(everything), want, rtol=0, atol=1e-9)
    # in chunks of a few rows: the same
    np.testing.assert_allclose(trees.raw(everything, chunk=3 * len(trees)), want, rtol=0,
                               atol=1e-9)


def test_a_program_too_small_to_split_gives_constant_trees_lightgbm_agrees(dataset):
    """27 kernels, at least 50 per leaf (the real setting): trees of one leaf."""
    small = _of(dataset, "scan_while")
    x = B.dataset_features(small)
    booster = B.fit_booster(x, _target(small), program_weights(small.program),
                            B.BoostConfig(), 10)
    trees = B.Trees.from_dump(booster.dump_model())
    assert len(trees.feature) == 0 and (trees.roots < 0).all()
    np.testing.assert_allclose(trees.raw(B.dataset_features(dataset)),
                               booster.predict(B.dataset_features(dataset), raw_score=True),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("missing", ["NaN", "Zero", "None"])
def test_missing_values_go_where_lightgbm_sends_them(dataset, missing):
    """Our features have no NaN, but the trees handle LightGBM's three missing types as
    it does: NaN learned as missing, zero as missing, and NaN read as zero."""
    x = B.dataset_features(dataset)
    rng = np.random.RandomState(0)
    holes = x.copy()
    holes[rng.rand(*x.shape) < 0.3] = np.nan
    params = SMALL.params()
    if missing == "Zero":
        params["zero_as_missing"] = True
    fit_on = holes if missing == "NaN" else x
    booster = lgb.train(params, lgb.Dataset(fit_on, _target(dataset), params={"verbose": -1}),
                        num_boost_round=SMALL.rounds)
    trees = B.Trees.from_dump(booster.dump_model())
    assert B.MISSING_TYPES.index(missing) in set(trees.missing.tolist())
    if missing != "None":
        assert set(trees.default_left.tolist()) == {True, False}
    for rows in (x, holes):
        np.testing.assert_allclose(trees.raw(rows), booster.predict(rows, raw_score=True),
                                   rtol=0, atol=1e-9)


def test_train_is_lightgbm_on_the_log_correction(dataset):
    """The model's correction is the booster's raw score on [numeric, log1p counts,
    weighted shares] fit to log(measured) - log(roofline), program-weighted."""
    model = B.train(dataset, CPU, SMALL)
    assert isinstance(model, B.BoostedModel) and model.kind == "gbm"
    # in float64, as LightGBM bins it (float32 sums move a bin edge now and then)
    numeric, counts, weighted = (a.astype(np.float64) for a in
                                 (dataset.numeric, dataset.counts, dataset.weighted))
    x = np.concatenate([numeric, np.log1p(counts), weighted / weighted.sum(1, keepdims=True)],
                       axis=1)
    data = lgb.Dataset(x, np.log(dataset.label_us) - dataset.log_roofline,
                       weight=program_weights(dataset.program), params={"verbose": -1})
    booster = lgb.train(SMALL.params(), data, num_boost_round=SMALL.rounds)
    want = np.clip(booster.predict(x, raw_score=True), -MAX_CORRECTION, MAX_CORRECTION)
    np.testing.assert_allclose(model.correction_dataset(dataset), want, rtol=0, atol=1e-6)
    meta = model.meta
    assert meta["programs"] == ["scan_while", "transformer"] and meta["kernels"] == len(dataset)
    assert meta["config"]["objective"] == "huber"


def test_the_default_hyperparameters_are_the_measured_ones():
    p = B.BoostConfig().params()
    assert {k: p[k] for k in ("objective", "alpha", "learning_rate", "num_leaves",
                              "min_data_in_leaf", "feature_fraction", "bagging_fraction",
                              "bagging_freq", "lambda_l2", "seed")} == {
        "objective": "huber", "alpha": 0.5, "learning_rate": 0.05, "num_leaves": 31,
        "min_data_in_leaf": 50, "feature_fraction": 0.8, "bagging_fraction": 0.8,
        "bagging_freq": 1, "lambda_l2": 1.0, "seed": 0}
    assert B.BoostConfig().rounds == 500 and 1 <= p["num_threads"] <= 2


def test_train_refuses_too_little_data_and_another_kind_to_fine_tune(dataset):
    with pytest.raises(ValueError, match="too little data"):
        B.train(dataset.subset(np.arange(len(dataset)) < 3), CPU, SMALL)
    other = mlp.train(dataset, CPU, mlp.TrainConfig(hidden=4, embed=2, steps=2, seeds=1))
    with pytest.raises(ValueError, match="cannot be fine-tuned as boosted trees"):
        B.train(dataset, CPU, SMALL, init=other)    # type: ignore[arg-type]


# --------------------------------------------------------------------------- files

def test_save_load_round_trip_predicts_the_same(dataset, tmp_path):
    model = B.train(dataset, CPU, SMALL)
    pred = model.predict_dataset(dataset)
    assert pred.shape == (len(dataset),) and np.isfinite(pred).all() and (pred > 0).all()
    path = model.save(str(tmp_path / "trees"))
    with np.load(path, allow_pickle=False) as z:
        assert z["tree.threshold"].dtype == np.float64 and z["tree.feature"].dtype == np.int16
    meta = json.loads((tmp_path / "trees.json").read_text())
    assert meta["model"] == "gbm" and meta["trees"] == SMALL.rounds
    again = load_model(path)
    assert isinstance(again, B.BoostedModel)
    np.testing.assert_array_equal(again.predict_dataset(dataset), pred)
    assert again.key == model.key
    # from a module, as the app predicts: what the dataset's rows predict
    d = open_dump(sample("scan_while"))
    m = d.stage(d.main, "after_optimizations")
    sub = _of(dataset, "scan_while")
    insts = [i for i in kernels(m) if i.name in set(sub.instruction)]
    by_name = dict(zip(sub.instruction, again.predict_dataset(sub)))
    assert again.predict(m, insts, device=CPU) == pytest.approx(
        [by_name[i.name] for i in insts], rel=1e-6)


def test_a_model_reading_other_features_is_refused(dataset, tmp_path):
    path = B.train(dataset, CPU, SMALL).save(str(tmp_path / "trees"))
    meta = json.loads((tmp_path / "trees.json").read_text())
    meta["n_features"] = B.N_FEATURES - 1
    (tmp_path / "trees.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="train it again"):
        load_model(path)


# --------------------------------------------------------------------------- fine-tuning

def test_fine_tuning_keeps_the_trees_and_fits_the_residual(dataset):
    base_ds, new_ds = _of(dataset, "transformer"), _of(dataset, "scan_while")
    base = B.train(base_ds, CPU, SMALL)
    tuned = B.train(new_ds, CPU, SMALL, init=base)
    n = len(base.trees)
    assert len(tuned.trees) == n + SMALL.finetune_rounds
    np.testing.assert_array_equal(tuned.trees.roots[:n], base.trees.roots)
    for k in ("feature", "threshold", "left", "right", "leaf_value"):
        np.testing.assert_array_equal(getattr(tuned.trees, k)[:len(getattr(base.trees, k))],
                                      getattr(base.trees, k))
    # the new trees are LightGBM's fit with the base model's prediction as init_score
    x = B.dataset_features(new_ds)
    booster = B.fit_booster(x, _target(new_ds), program_weights(new_ds.program), SMALL,
                            SMALL.finetune_rounds, base.raw_dataset(new_ds))
    np.testing.assert_allclose(tuned.raw_dataset(new_ds) - base.raw_dataset(new_ds),
                               booster.predict(x, raw_score=True), rtol=0, atol=1e-9)

    def loss(model):
        return float(np.mean((model.correction_dataset(new_ds) - _target(new_ds)) ** 2))
    assert loss(tuned) < 0.8 * loss(base)
    assert tuned.meta["programs"] == ["scan_while"]
    assert tuned.meta["fine_tuned_from"]["programs"] == ["transformer"]
    assert "fine-tuned from a model of 1 programs" in tuned.describe()


# --------------------------------------------------------------------------- describe

def test_describe_names_the_kind(dataset, tmp_path):
    model = B.train(dataset, CPU, SMALL)
    model.save(str(tmp_path / "trees"))
    assert model.describe() == (f"learned model ({tmp_path / 'trees.npz'}) (gradient-boosted "
                                f"trees), trained on 2 programs, {len(dataset)} kernels")
    shipped = B.BoostedModel(model.trees, CPU, {**model.meta, "default": True,
                                                "families": ["a", "b"]})
    assert shipped.describe() == ("default model — trained on 2 programs of 2 families "
                                  f"(gradient-boosted trees, {len(dataset)} kernels)")


# --------------------------------------------------------------------------- CLI

def _run(*args: str, cache: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HLOLENS_CACHE=cache)
    env.setdefault("JAX_PLATFORMS", "cpu")
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_cli_trains_boosted_trees_and_predicts_without_lightgbm(tmp_path):
    out = tmp_path / "mine"
    p = _run("-m", "compiler_bridge", "train", sample("scan_while"), sample("transformer"),
             "--out", str(out), "--kind", "gbm", "--steps", "30", "--device", "cpu",
             "--from-scratch", cache=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert "trained a gbm on 113 kernels" in p.stdout
    meta = json.loads((tmp_path / "mine.json").read_text())
    # --steps: boosting rounds (LightGBM stops early when 50 kernels a leaf allow no split)
    assert meta["model"] == "gbm" and meta["config"]["rounds"] == 30
    assert 1 <= meta["trees"] <= 30
    # predicting (as the app does) never imports lightgbm
    code = ("import sys, json; from compiler_bridge import open_dump; "
            "from compiler_bridge.perf import runtime_report; "
            f"r = runtime_report(open_dump({sample('scan_while')!r}), "
            f"model={str(out) + '.npz'!r}, device='cpu'); "
            "print(json.dumps([r.predictor, r.predictor_detail, 'lightgbm' in sys.modules]))")
    p = _run("-c", code, cache=str(tmp_path))
    assert p.returncode == 0, p.stderr
    predictor, detail, imported = json.loads(p.stdout.strip().splitlines()[-1])
    assert predictor == "learned" and "gradient-boosted trees" in detail
    assert imported is False
