"""The learned cost model: features, tiny training, files, leave-one-program-out."""

from __future__ import annotations

import json

import numpy as np
import pytest

from compiler_bridge.perf.dataset import Dataset, dataset_from_dumps
from compiler_bridge.perf.evaluation import leave_out, summarize
from compiler_bridge.perf.features import kernel_features, NUMERIC, VOCAB
from compiler_bridge.perf import mlp
from compiler_bridge.perf.model_base import FORMAT
from compiler_bridge import open_dump
from compiler_bridge.perf import kernel_cost, kernels
from compiler_bridge.perf import CPU

from conftest import sample

TINY = mlp.TrainConfig(hidden=8, embed=4, steps=25, seeds=1)


@pytest.fixture(scope="module")
def dataset():
    return dataset_from_dumps([sample("transformer"), sample("scan_while")], CPU)


def test_dataset_holds_every_measured_kernel(dataset):
    assert dataset.programs == ["scan_while", "transformer"]
    assert len(dataset) == 86 + 27
    assert dataset.numeric.shape == (len(dataset), len(NUMERIC))
    assert dataset.counts.shape == (len(dataset), len(VOCAB))
    assert np.isfinite(dataset.numeric).all() and (dataset.label_us > 0).all()
    # a fusion's opcode bag holds what it fuses
    i = dataset.instruction.index("add_tanh_fusion")
    assert dataset.counts[i, VOCAB.index("tanh")] == 1
    assert dataset.counts[i, VOCAB.index("<kernel:fusion>")] == 1


def test_features_flag_in_place_updates_and_loops():
    d = open_dump(sample("scan_while"))
    m = d.stage(d.main, "after_optimizations")
    inst = m.find("bitcast_dynamic-update-slice_fusion")
    num, counts, _ = kernel_features(inst, kernel_cost(inst, m), m, CPU)
    f = dict(zip(NUMERIC, num))
    assert f["in_place_dus"] == 1 and f["in_loop"] == 1 and f["kind_kLoop"] == 1
    assert counts[VOCAB.index("dynamic-update-slice")] == 1


def test_a_convolution_is_featured_as_its_matrix_product():
    """A convolution's M, N, K as a matrix product: 2 M N K is XLA's own flop count
    (``cost_analysis``) of an unpadded one, forward and backward-filter; the filter
    gradient's window (the 14x14 image) is larger than its output (3x3), the forward
    one's smaller."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    from compiler_bridge import parse_hlo

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    x, w = jnp.ones((2, 16, 16, 4)), jnp.ones((3, 3, 4, 8))
    sides = {}
    for name, fn, args in (("forward", conv, (x, w)),
                           ("filter_grad", jax.grad(lambda w, x: conv(x, w).sum()), (w, x))):
        compiled = jax.jit(fn).lower(*args).compile()
        hlo = parse_hlo(compiled.as_text())
        (inst,) = [i for i in kernels(hlo) if kernel_cost(i, hlo).matmul]
        f = dict(zip(NUMERIC, kernel_features(inst, kernel_cost(inst, hlo), hlo, CPU)[0]))
        m, n, k = (np.expm1(f[c]) for c in ("log_conv_m", "log_conv_n", "log_conv_k"))
        assert 2 * m * n * k == pytest.approx(compiled.cost_analysis()["flops"], rel=1e-4)
        assert f["log_dot_m"] == f["dot_lhs_transposed"] == 0
        sides[name] = f["log_conv_window_over_out"]
    assert sides["forward"] < 0 < sides["filter_grad"]


def test_dots_say_which_operand_is_read_across_its_contiguous_dimension():
    """XLA's compiled HLO names each dot's contracting dimensions; with row-major
    operands, contracting the LHS's dimension 0 reads it across its rows (the weight
    gradient's dot of an MLP: both operands K-major), contracting the RHS's last one
    reads it across its rows too."""
    import re
    checked = set()
    for name in ("mlp_train", "transformer"):
        d = open_dump(sample(name))
        m = d.stage(d.main, "after_optimizations")
        for inst in kernels(m):
            fused = [i for n in inst.called_names for i in m.computation(n).instructions]
            dots = [i for i in [inst] + fused if i.opcode == "dot"]
            if len(dots) != 1 or any(o.shape.rank != 2 for o in dots[0].operands):
                continue
            text = dots[0].text
            lc = int(re.search(r"lhs_contracting_dims=\{(\d)\}", text).group(1))
            rc = int(re.search(r"rhs_contracting_dims=\{(\d)\}", text).group(1))
            assert all(o.shape.layout is None or o.shape.layout.minor_to_major == (1, 0)
                       for o in dots[0].operands)
            f = dict(zip(NUMERIC, kernel_features(inst, kernel_cost(inst, m), m, CPU)[0]))
            want = (float(lc == 0), float(rc == 1), float(lc == 0 and rc == 0))
            assert (f["dot_lhs_transposed"], f["dot_rhs_transposed"], f["dot_k_major_both"]) \
                == want, (name, inst.name, text)
            checked.add(want)
    # row-major, the MLP's K-major weight gradient, the transformer's (1, 1) backward dots
    assert {(0.0, 0.0, 0.0), (1.0, 0.0, 1.0), (1.0, 1.0, 0.0)} <= checked


def test_tiny_training_saves_and_loads_without_pickle(dataset, tmp_path):
    model = mlp.train(dataset, CPU, TINY)
    pred = model.predict_dataset(dataset)
    assert pred.shape == (len(dataset),) and np.isfinite(pred).all() and (pred > 0).all()
    path = model.save(str(tmp_path / "model"))
    assert path.endswith("model.npz")
    meta = json.loads((tmp_path / "model.json").read_text())
    assert meta["format"] == FORMAT and meta["programs"] == ["scan_while", "transformer"]
    with np.load(path, allow_pickle=False) as z:
        assert "seed0.w1" in z.files
    again = mlp.LearnedModel.load(path)
    assert np.allclose(again.predict_dataset(dataset), pred, rtol=1e-5)
    # predicting straight from a module gives the same numbers
    d = open_dump(sample("scan_while"))
    m = d.stage(d.main, "after_optimizations")
    insts = [i for i in kernels(m) if i.name in set(dataset.instruction)]
    direct = again.predict(m, insts)
    sub = dataset.subset(np.array([p == "scan_while" for p in dataset.program]))
    by_name = dict(zip(sub.instruction, again.predict_dataset(sub)))
    assert direct == pytest.approx([by_name[i.name] for i in insts], rel=1e-4)


def test_a_model_of_another_feature_set_is_refused(dataset, tmp_path):
    mlp.train(dataset, CPU, TINY).save(str(tmp_path / "m.npz"))
    meta = json.loads((tmp_path / "m.json").read_text())
    meta["vocab"] = meta["vocab"][:-1]
    (tmp_path / "m.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="another version"):
        mlp.LearnedModel.load(str(tmp_path / "m.npz"))


def test_leave_out_reports_each_program(dataset):
    folds = leave_out(dataset, lambda d: mlp.train(d, CPU, TINY))
    assert [f.program for f in folds] == ["scan_while", "transformer"]
    for f in folds:
        assert set(f.learned) == set(f.roofline) == set(f.noise_floor)
        assert -1 <= f.learned["kendall_tau"] <= 1
    s = summarize(folds)
    assert set(s) == {"roofline", "learned", "noise_floor"}


def test_leaving_a_group_out_trains_without_any_of_its_programs(dataset):
    seen: list[list[str]] = []

    def fit(ds):
        seen.append(sorted(set(ds.program)))
        return mlp.train(ds, CPU, TINY)
    # a third program: scan_while's kernels again under another name, in its group
    twin = dataset.subset(np.array([p == "scan_while" for p in dataset.program]))
    twin.program, twin.programs = ["twin"] * len(twin), ["twin"]
    ds = Dataset.concat([dataset, twin])
    assert ds.programs == ["scan_while", "transformer", "twin"]
    plain = leave_out(ds, fit)
    assert seen == [["transformer", "twin"], ["scan_while", "twin"],
                    ["scan_while", "transformer"]]
    # with the twin in training, scan_while is predicted from its own kernels: far better
    # than when its whole group is left out
    seen.clear()
    strict = leave_out(ds, fit, group_of={"scan_while": "g", "twin": "g"})
    assert seen == [["transformer"], ["scan_while", "twin"]]     # one model per group
    assert [f.program for f in strict] == ["scan_while", "transformer", "twin"]
    assert strict[0].learned == strict[2].learned
    assert plain[0].learned["median_ape"] <= strict[0].learned["median_ape"]


def test_schedule_position_runs_from_first_to_last_kernel():
    d = open_dump(sample("transformer"))
    m = d.stage(d.main, "after_optimizations")
    entry = [i for i in kernels(m) if i.computation is m.entry]
    pos = [dict(zip(NUMERIC, kernel_features(i, kernel_cost(i, m), m, CPU)[0]))
           ["schedule_position"] for i in entry]
    assert pos[0] == 0 and pos[-1] == pytest.approx(1)
    assert pos == sorted(pos) and len(set(pos)) == len(pos)
