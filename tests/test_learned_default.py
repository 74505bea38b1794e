"""The default model shipped with HLO Lens, features that transfer across machines (times
on the device profile), calibration on first use, fine-tuning, and the graph
network (instruction graphs of real kernels, training, files)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

import numpy as np
import pytest

from compiler_bridge import open_dump
from compiler_bridge.perf import CPU, kernel_cost, kernels, runtime_report
from compiler_bridge.perf import devices
from compiler_bridge.perf import boosted as B
from compiler_bridge.perf import graph_model as G
from compiler_bridge.perf.dataset import dataset_from_dumps
from compiler_bridge.perf.evaluation import leave_out
from compiler_bridge.perf.features import FEATURE_VERSION, kernel_features, NUMERIC, VOCAB
from compiler_bridge.perf.kernel_graphs import kernel_graph, NODE_FEATURES
from compiler_bridge.perf import mlp, model_loader
from compiler_bridge.perf.model_base import CLIP
from compiler_bridge.perf.model_loader import load_model, MODELS_DIR, shipped_model_path

from conftest import sample

TINY = mlp.TrainConfig(hidden=8, embed=4, steps=25, seeds=1)
TINY_G = G.GraphConfig(embed=4, head=8, steps=25, seeds=1)


@pytest.fixture(scope="module")
def dataset():
    return dataset_from_dumps([sample("transformer"), sample("scan_while")], CPU)


@pytest.fixture(scope="module")
def shipped():
    return load_model(shipped_model_path("cpu"))


@pytest.fixture
def fresh_machine(tmp_path, monkeypatch):
    """No saved model of the user's and no calibrated profile yet (a new user)."""
    monkeypatch.setattr(model_loader, "default_model_path", lambda kind="cpu": str(tmp_path / "none.npz"))
    monkeypatch.setenv("HLOLENS_CACHE", str(tmp_path))
    return tmp_path


# --------------------------------------------------------------------------- shipped

def test_the_shipped_model_is_small_documented_and_loads(shipped):
    base = shipped_model_path("cpu")[:-4]
    size = os.path.getsize(base + ".npz") + os.path.getsize(base + ".json")
    assert size < 1_000_000
    meta = json.loads(open(base + ".json", encoding="utf-8").read())
    assert meta["default"] is True and meta["feature_version"] == FEATURE_VERSION
    assert meta["corpus_hash"] and meta["calibration"]["name"] and meta["device"]["measured"]
    n, m = len(meta["programs"]), len(meta["families"])
    assert n >= 50 and m >= 10
    assert shipped.describe().startswith(f"default model — trained on {n} programs of {m} "
                                         "families")
    assert os.path.exists(os.path.join(MODELS_DIR, "README.md"))


def test_a_new_user_gets_the_default_model_and_a_quick_calibration_once(fresh_machine,
                                                                        shipped):
    dump = open_dump(sample("transformer"))
    r = runtime_report(dump)
    assert r.predictor == "learned" and r.predictor_detail.startswith("default model")
    assert any("measured it on first use" in n for n in r.notes), r.notes
    assert os.path.exists(fresh_machine / "device.json")
    # the full sizes, as the default model's profile was measured (not the quick ones)
    assert r.device.measured and not r.device.details["quick"]
    assert r.device.details["rounds"] == 3       # each rate the median of three
    # predictions on the profile alone are the shipped model's on this machine's (just
    # measured) profile; the ones shown are fitted to the sample's trace (trace_fit)
    hlo = dump.stage(dump.main, "after_optimizations")
    insts = kernels(hlo)
    want = shipped.predict(hlo, insts, device=r.device)
    got = {row.instruction: row.profile_us for row in r.rows}
    assert r.fit is not None and all(row.uncalibrated_us is not None for row in r.rows)
    assert [got[i.name] for i in insts] == pytest.approx(list(want), rel=1e-6)
    assert r.metrics["kendall_tau"] > 0.3
    again = runtime_report(dump)
    assert not any("first use" in n for n in again.notes)   # cached
    assert again.device == r.device


def test_a_profile_calibrated_before_the_depthwise_sine_and_fft_rates_is_measured_again(
        fresh_machine, shipped):
    """A profile an older HLO Lens saved lacks rates the roofline now uses: priced at the
    vector rate, a depthwise convolution would be predicted 30x too fast, an FFT 7x too
    slow."""
    before_all = dataclasses.replace(CPU, measured=True, source="an older calibrate")
    before_fft = dataclasses.replace(before_all, grouped_conv_flops=1e9, trig_flops=200.0,
                                     window_flops=1e9, fresh_bandwidth=1e9)
    assert before_all.grouped_conv_flops == 0 and before_all.trig_flops == 0
    assert before_fft.fft_flops == 0
    for old in (before_all, before_fft):
        devices.save_profile(old, str(fresh_machine / "device.json"))
        r = runtime_report(open_dump(sample("scan_while")))
        assert r.predictor == "learned"
        assert any("predates the depthwise-convolution, sine, FFT, reduce-window and "
                   "fresh-page rates: measured it again" in n for n in r.notes), r.notes
        saved = devices.load_profile(str(fresh_machine / "device.json"))
        assert min(saved.grouped_conv_flops, saved.trig_flops, saved.fft_flops,
                   saved.window_flops, saved.fresh_bandwidth) > 0
        assert saved == r.device
    assert not any("measured it" in n for n in runtime_report(
        open_dump(sample("scan_while"))).notes)


def test_a_stale_default_model_falls_back_to_the_roofline_with_a_note(fresh_machine,
                                                                      monkeypatch):
    base = shipped_model_path("cpu")[:-4]
    stale = fresh_machine / "default-cpu"
    shutil.copy(base + ".npz", str(stale) + ".npz")
    meta = json.loads(open(base + ".json", encoding="utf-8").read())
    meta["feature_version"] = 1
    (fresh_machine / "default-cpu.json").write_text(json.dumps(meta))
    monkeypatch.setattr(model_loader, "shipped_model_path", lambda kind="cpu": str(stale) + ".npz")
    r = runtime_report(open_dump(sample("scan_while")))
    assert r.predictor == "roofline"
    assert any("default cost model not used" in n and "train it again" in n for n in r.notes)
    assert not os.path.exists(fresh_machine / "device.json")   # no calibration for nothing


def _fine_tune(shipped, dataset, steps: int):
    """Fine-tune the shipped model, whichever kind it is, for ``steps`` steps (trees)."""
    if shipped.kind == "gbm":
        return B.train(dataset, shipped.device,
                       dataclasses.replace(B.BoostConfig(), finetune_rounds=steps), init=shipped)
    return mlp.train(dataset, shipped.device, dataclasses.replace(TINY, steps=steps),
                   init=shipped)


def test_fine_tuning_starts_from_the_default_models_weights(dataset, shipped):
    if shipped.kind == "mlp":
        same = _fine_tune(shipped, dataset, 0)
        assert np.allclose(same.predict_dataset(dataset), shipped.predict_dataset(dataset),
                           rtol=1e-5)
    tuned = _fine_tune(shipped, dataset, 30)
    if shipped.kind == "gbm":      # the shipped trees first, unchanged
        n = len(shipped.trees)
        np.testing.assert_array_equal(tuned.trees.leaf_value[:len(shipped.trees.leaf_value)],
                                      shipped.trees.leaf_value)
        assert len(tuned.trees) > n
    assert tuned.meta["fine_tuned_from"]["programs"] == shipped.meta["programs"]
    assert tuned.meta["programs"] == ["scan_while", "transformer"]
    assert not tuned.is_default and "fine-tuned from a model of" in tuned.describe()
    err = [np.mean((np.log(m.predict_dataset(dataset)) - np.log(dataset.label_us)) ** 2)
           for m in (shipped, tuned)]
    assert err[1] < err[0]


# --------------------------------------------------------------------------- transfer

def test_features_are_times_on_the_device_profile():
    """A machine twice as fast in every rate: every time feature drops by log 2, every
    structural feature stays (so a kernel looks the same relative to its machine)."""
    fast = dataclasses.replace(
        CPU, matmul_flops={k: 2 * v for k, v in CPU.matmul_flops.items()},
        vector_flops=2 * CPU.vector_flops, bandwidth=2 * CPU.bandwidth,
        launch_overhead_us=CPU.launch_overhead_us / 2, per_buffer_us=CPU.per_buffer_us / 2)
    d = open_dump(sample("transformer"))
    m = d.stage(d.main, "after_optimizations")
    timed = {"log_roofline_us", "log_compute_us", "log_read_us", "log_write_us",
             "log_overhead_us", "log_largest_operand_us", "program_log_compute_us",
             "program_log_memory_us", "program_log_roofline_us"}
    checked = 0
    for inst in kernels(m)[:40]:
        c = kernel_cost(inst, m)
        a = dict(zip(NUMERIC, kernel_features(inst, c, m, CPU)[0]))
        b = dict(zip(NUMERIC, kernel_features(inst, c, m, fast)[0]))
        for k in timed:
            if a[k] > 0:              # above ~1 µs, where the log's floor does not matter
                assert a[k] - b[k] == pytest.approx(np.log(2), abs=0.01), k
                checked += 1
        for k in ("log_out_elements", "log_dot_k", "log_fused_ops", "schedule_position",
                  "log_intensity_vs_ridge", "share_of_program_roofline"):
            assert a[k] == pytest.approx(b[k], abs=1e-5), k
    assert checked > 40


def test_producers_and_consumers_are_the_neighbouring_kernels():
    d = open_dump(sample("scan_while"))
    m = d.stage(d.main, "after_optimizations")
    inst = m.find("add_tanh_fusion")
    f = dict(zip(NUMERIC, kernel_features(inst, kernel_cost(inst, m), m, CPU)[0]))
    src = set()
    for o in inst.operands:
        while o.opcode in ("bitcast", "get-tuple-element"):
            o = o.operands[0]
        if o.opcode not in ("parameter", "constant"):
            src.add(o.name)
    assert src, "the sample's fusion reads another kernel's output"
    assert f["log_producers"] == pytest.approx(np.log1p(len(src)))
    assert f["log_consumers"] >= np.log1p(1) - 1e-6


# --------------------------------------------------------------------------- graph network

def test_a_kernel_graph_is_its_fused_computation():
    d = open_dump(sample("scan_while"))
    m = d.stage(d.main, "after_optimizations")
    inst = m.find("add_tanh_fusion")
    fused = m.computation(inst.called_names[0]).instructions
    g = kernel_graph(inst, m)
    assert [VOCAB[o] for o in g.ops] == ["<kernel:fusion>"] + [
        i.opcode if i.opcode in VOCAB else "<other>" for i in fused]
    names = [inst.name] + [i.name for i in fused]
    edges = {(names[s], names[t]) for s, t in zip(g.src, g.dst)}
    want = {(o, i.name) for i in fused for o in i.operand_names}
    want.add((m.computation(inst.called_names[0]).root.name, inst.name))
    assert edges == want
    dot = next(i for i in kernels(m) if i.opcode == "dot")
    g = kernel_graph(dot, m)          # fuses nothing: its operands are the other nodes
    assert len(g.ops) == 1 + len(dot.operands) and set(g.dst.tolist()) == {0}


def test_graph_model_trains_saves_loads_and_predicts_like_its_dataset(dataset, tmp_path):
    model = G.train(dataset, CPU, TINY_G)
    pred = model.predict_dataset(dataset)
    assert pred.shape == (len(dataset),) and np.isfinite(pred).all() and (pred > 0).all()
    path = model.save(str(tmp_path / "g"))
    with np.load(path, allow_pickle=False) as z:
        assert "seed0.wg" in z.files
    again = load_model(path)
    assert isinstance(again, G.GraphModel)
    assert np.allclose(again.predict_dataset(dataset), pred, rtol=1e-5)
    d = open_dump(sample("scan_while"))
    m = d.stage(d.main, "after_optimizations")
    insts = [i for i in kernels(m) if i.name in set(dataset.instruction)]
    sub = dataset.subset(np.array([p == "scan_while" for p in dataset.program]))
    by_name = dict(zip(sub.instruction, again.predict_dataset(sub)))
    assert again.predict(m, insts, device=CPU) == pytest.approx(
        [by_name[i.name] for i in insts], rel=1e-4)


def test_leave_out_by_family_never_trains_on_the_family(dataset):
    seen: list[list[str]] = []

    def fit(d):
        seen.append(sorted(set(d.program)))
        return G.train(d, CPU, TINY_G)
    keep: dict = {}
    folds = leave_out(dataset, fit, {"scan_while": "a", "transformer": "b"}, keep=keep)
    assert seen == [["transformer"], ["scan_while"]]
    assert [f.program for f in folds] == ["scan_while", "transformer"]
    assert set(keep) == {"scan_while", "transformer"}
    assert all(0 < f.ratio < 100 for f in folds)


def test_message_passing_reaches_the_kernel_from_its_root():
    """SIGN readout: the kernel node's one-hop view over operands is its fused root (a
    tanh), two hops is what feeds the tanh (an add)."""
    d = open_dump(sample("scan_while"))
    m = d.stage(d.main, "after_optimizations")
    g = kernel_graph(m.find("add_tanh_fusion"), m)
    f = G.graph_features(g)
    width = len(VOCAB) + len(NODE_FEATURES)
    views = f.reshape(2, 1 + 2 * G.HOPS, width)     # [mean, kernel node] x views
    kernel_in1, kernel_in2 = views[1, 1], views[1, 3]
    assert kernel_in1[VOCAB.index("tanh")] == 1 and kernel_in1[:len(VOCAB)].sum() == 1
    assert kernel_in2[VOCAB.index("add")] == 1
    assert views[0, 0, :len(VOCAB)].sum() == pytest.approx(1.0)   # mean of one-hots


def test_the_numpy_forward_is_the_jax_forward(dataset):
    import jax.numpy as jnp
    model = G.train(dataset, CPU, TINY_G)
    x = np.clip((dataset.numeric - model.mean) / model.std, -CLIP, CLIP).astype(np.float32)
    g = G.graph_matrix(dataset.graphs)
    p = model.params[0]
    want = np.asarray(G._forward({k: jnp.asarray(v) for k, v in p.items()}, x, g))
    assert np.allclose(G._forward_np(p, x, g), want, rtol=1e-3, atol=1e-4)
