"""Predictions fitted to the trace of the machine that made it, scored on held-out kernels
(issue 34, item 1), and a step time far off the measured one flagged (issue 32, item 10).
All on the committed sample dumps and their real JAX profiler traces."""

from __future__ import annotations

import json
import math
import re
import statistics

import pytest

from compiler_bridge import open_dump, runtime_report
from compiler_bridge.perf import metrics as M
from compiler_bridge.perf import trace_fit as F
from tests.support.cli import run
from tests.support.samples import sample


def _fitted_and_alone(name: str, device: str):
    """A sample's roofline report on ``device``, fitted to its trace and not."""
    dump = open_dump(sample(name))
    return (runtime_report(dump, auto_model=False, device=device),
            runtime_report(dump, auto_model=False, device=device, fit_to_trace=False))


@pytest.fixture(scope="module")
def roofline_reports():
    """The sample transformer's report with the roofline, fitted to its trace and not."""
    return _fitted_and_alone("transformer", "cpu")


def test_metrics_are_those_of_kernels_the_fit_did_not_see(roofline_reports):
    fitted, alone = roofline_reports
    rows = fitted.measured_rows
    assert fitted.fit is not None and fitted.fit["scored_on"] == "held-out kernels"
    names = [f"{r.module_id}/{r.instruction}" for r in rows]
    pred = [r.uncalibrated_us for r in rows]
    meas = [r.measured_us for r in rows]
    cls = [F.kernel_class(r.cost, r.bound) for r in rows]
    # each kernel predicted by a fit of the other folds alone, redone here
    folds = [F.fold_of(n) for n in names]
    for f in range(F.FOLDS):
        train = [i for i in range(len(rows)) if folds[i] != f]
        c = F.fit([pred[i] for i in train], [meas[i] for i in train], [cls[i] for i in train])
        for i in (i for i in range(len(rows)) if folds[i] == f):
            assert rows[i].held_out_us == pytest.approx(c.apply(pred[i], cls[i]), rel=1e-9)
    assert fitted.metrics == pytest.approx(M.all_metrics([r.held_out_us for r in rows], meas),
                                           nan_ok=True)
    # the predictor alone is what the report without the fit says
    assert fitted.metrics_uncalibrated == pytest.approx(alone.metrics, nan_ok=True)
    assert [r.uncalibrated_us for r in fitted.rows] == [r.predicted_us for r in alone.rows]


def test_a_kernels_own_measurement_never_moves_its_held_out_prediction(roofline_reports):
    fitted, _ = roofline_reports
    rows = fitted.measured_rows
    names = [f"{r.module_id}/{r.instruction}" for r in rows]
    pred = [r.uncalibrated_us for r in rows]
    meas = [r.measured_us for r in rows]
    cls = [F.kernel_class(r.cost, r.bound) for r in rows]
    first = F.calibrate_to_trace(names, pred, meas, cls)
    assert first is not None
    moved = list(meas)
    moved[0] *= 100.0
    second = F.calibrate_to_trace(names, pred, moved, cls)
    assert second is not None
    assert second.held_out[0] == pytest.approx(first.held_out[0], rel=1e-12)
    assert second.correction != first.correction       # the fit on all kernels did move


@pytest.fixture(scope="module")
def other_machine():
    """scan_while's CPU trace predicted on a profile of another machine (an H100's)."""
    return _fitted_and_alone("scan_while", "h100")


def test_the_fit_brings_another_machines_profile_to_this_trace(other_machine):
    """On the profile alone, the kernels are predicted ~10x off; fitted to the trace, the
    held-out median APE is a tenth of that and the step time within 2x."""
    fitted, alone = other_machine
    assert alone.metrics["median_ape"] > 5.0
    assert fitted.metrics["median_ape"] < 0.1 * alone.metrics["median_ape"]
    step = fitted.step_time("0000")
    assert step is not None and step.ratio is not None
    assert 0.5 < step.ratio < 2.0 and not step.far_off
    assert step.uncalibrated_us == pytest.approx(alone.step_time("0000").predicted_us)


def test_a_step_predicted_more_than_2x_off_is_flagged(other_machine):
    _, alone = other_machine
    step = alone.step_time("0000")
    assert step is not None and step.measured_us
    off = step.predicted_us / step.measured_us
    assert max(off, 1 / off) > 2.0                   # another machine's profile
    assert step.far_off and step.to_json()["off_by_more_than_2x"] is True
    from compiler_bridge.perf.cli import step_line
    assert "more than 2x off" in step_line(step, alone.predictor)


def test_runtimes_json_says_which_metrics_are_which():
    done = run("runtimes", sample("scan_while"), "--roofline", "--device", "cpu", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    m, un = data["metrics"], data["metrics_uncalibrated"]
    assert m["fit"]["split"] == "kernels" and m["fit"]["folds"] == F.FOLDS
    assert m["fit"]["loss"] == "absolute deviation of log time"      # a median regression
    assert m["fit"]["kernels"] == m["kernels_compared"] == un["kernels_compared"]
    assert not math.isclose(m["median_ape"], un["median_ape"])
    k = data["kernels"][0]
    assert k["predicted_uncalibrated_us"] == pytest.approx(k["roofline_us"])
    assert "off_by_more_than_2x" in data["step_time"][0]
    text = run("runtimes", sample("scan_while"), "--roofline", "--device", "cpu").stdout
    assert "fitted to this trace, scored on held-out kernels" in text
    assert "profile alone" in text
    done = run("runtimes", sample("scan_while"), "--roofline", "--device", "cpu", "--json",
               "--no-fit")
    plain = json.loads(done.stdout)
    assert plain["metrics"]["fit"] is None
    assert plain["metrics"]["median_ape"] == pytest.approx(un["median_ape"])
    assert [k["predicted_us"] for k in plain["kernels"]] == \
        pytest.approx([k["predicted_uncalibrated_us"] for k in data["kernels"]])


def test_too_few_kernels_are_not_fitted_and_say_so():
    assert F.calibrate_to_trace(["a", "b"], [1.0, 2.0], [1.0, 2.0], ["compute"] * 2) is None


def test_the_panel_says_fitted_or_profile_alone_and_flags_a_step_far_off(other_machine):
    from ui.runtimes import step_line
    fitted, alone = other_machine
    line = step_line(alone.step_time("0000"), alone)
    assert "more than 2× off" in line and "fitted to this trace" not in line
    line = step_line(fitted.step_time("0000"), fitted)
    assert "fitted to this trace" in line and "on the profile alone" in line
    assert "more than 2× off" not in line


def test_each_metric_is_reported_beside_its_floor(roofline_reports):
    fitted, _ = roofline_reports
    got = fitted.metrics_json()["against_floor"]
    assert set(got) == set(M.METRICS)
    for k, (ours, floor) in got.items():
        assert ours == pytest.approx(fitted.metrics[k])
        assert floor == pytest.approx(fitted.noise_floor[k])


def test_the_scatter_plots_the_held_out_predictions_the_metrics_score(roofline_reports):
    from viz import runtime as V
    fitted, _ = roofline_reports
    fig = V.scatter_figure(fitted)
    plotted = {cd[0]: y for tr in fig.data if tr.customdata is not None
               for cd, y in zip(tr.customdata, tr.y)}
    rows = fitted.measured_rows
    assert plotted == {r.instruction: r.held_out_us for r in rows}
    assert any(r.held_out_us != r.predicted_us for r in rows)
    assert "fitted to this trace, held out" in fig.layout.title.text


@pytest.fixture(scope="module")
def model_rows():
    """The sample transformer's measured kernels under the shipped default model (what
    the panel fits when a dump has a trace): names, predictions, measurements, classes."""
    r = runtime_report(open_dump(sample("transformer")), auto_model=True, fit_to_trace=False)
    assert r.predictor != "roofline"
    rows = sorted(r.measured_rows, key=lambda x: x.instruction)
    return ([f"{x.module_id}/{x.instruction}" for x in rows], [x.predicted_us for x in rows],
            [x.measured_us for x in rows], [F.kernel_class(x.cost, x.bound) for x in rows])


def test_the_fit_puts_the_typical_kernel_on_its_measurement(model_rows):
    """A median regression: half the kernels measured above the fitted time, half below
    (least squares left the median kernel 0.18 in log, 20%, too slow: a few kernels in a
    slow mode pulled every class up)."""
    _, pred, meas, cls = model_rows
    c = F.fit(pred, meas, cls)
    residuals = [math.log(m / c.apply(p, k)) for p, m, k in zip(pred, meas, cls)]
    assert abs(statistics.median(residuals)) < 0.05


def test_a_fifth_of_kernels_in_a_slow_mode_moves_the_others_little(model_rows):
    """Every fifth kernel measured 10x slower (as CPU kernels whose executions land in a
    slow mode are): the others' fitted times move by 14% (least squares: 56%) on this
    machine's profile, 15-31% (least squares 56-75%) on profiles 2x slower, 2x faster or
    skewed (compute 2.5x, bandwidth 0.6x): asserted against least squares in the same
    run, since the predictions come from the machine's calibrated profile."""
    _, pred, meas, cls = model_rows
    slow = [m * 10 if i % 5 == 0 else m for i, m in enumerate(meas)]

    def moved(loss: str) -> float:
        before, after = F.fit(pred, meas, cls, loss), F.fit(pred, slow, cls, loss)
        return statistics.median(abs(math.log(after.apply(p, k) / before.apply(p, k)))
                                 for i, (p, k) in enumerate(zip(pred, cls)) if i % 5)
    assert moved("absolute") < 0.7 * moved("squared")


def test_the_default_models_held_out_median_ape_meets_the_goal_on_the_sample(model_rows):
    """Issue 34's goal per program, median APE <= 40% on held-out kernels, on the sample
    transformer's own trace (least squares: 40.3%)."""
    names, pred, meas, cls = model_rows
    cal = F.calibrate_to_trace(names, pred, meas, cls)
    assert cal is not None
    assert M.median_ape(cal.held_out, meas) <= 0.40


def test_an_unknown_loss_is_refused_naming_the_ones_there_are(model_rows):
    _, pred, meas, cls = model_rows
    with pytest.raises(ValueError, match="absolute"):
        F.fit(pred, meas, cls, loss="huber")
    # least squares stays available for the benchmark's comparison, and differs
    assert F.fit(pred, meas, cls, "squared") != F.fit(pred, meas, cls)


def test_the_fitted_step_is_an_expected_sum_not_a_sum_of_typical_kernels():
    """A median fit puts the typical kernel on its measurement, but a step is a sum where
    the slow kernels count: the sample transformer's fitted times alone sum to 0.64 of
    its measured step (default model; roofline 0.76-0.82, by the machine's calibrated
    profile). Each kernel's fitted time times the smearing factor (measured over fitted
    time, summed over executions) sums to within 15% of it, closer than the median fit."""
    for auto in (True, False):
        r = runtime_report(open_dump(sample("transformer")), auto_model=auto)
        step = r.step_time(r.modules[0][0])
        assert step is not None and step.measured_us
        assert abs(math.log(step.predicted_us / step.measured_us)) < math.log(1.15)
        assert step.median_fit_us is not None
        # the bias smearing removes (a bound on the ratio would hold on one machine's
        # profile only: a fresh machine's calibration put the roofline's at 0.82)
        assert step.median_fit_us < step.predicted_us
        assert (abs(math.log(step.predicted_us / step.measured_us))
                < abs(math.log(step.median_fit_us / step.measured_us)))
        assert step.to_json()["predicted_median_fit_us"] == step.median_fit_us
        # per kernel, the prediction (and so every metric) stays the median fit's
        row = r.measured_rows[0]
        assert row.expected_us == pytest.approx(row.predicted_us * row.smearing)
        assert row.to_json()["predicted_us"] == row.predicted_us
        assert r.fit is not None and r.fit["smearing_all"] > 1.0


def test_the_smearing_factor_is_measured_over_fitted_time_summed_over_executions(
        model_rows):
    """The chosen factor weighs each kernel's exp(residual) by its fitted time per step
    (what it adds to a step); Duan's, kept for the benchmark's comparison, does not, per
    kind of kernel with enough of them, else over all."""
    _, pred, meas, cls = model_rows
    runs = [1.0 + i % 3 for i in range(len(pred))]
    c = F.fit(pred, meas, cls, weights=runs)
    fitted = [c.apply(p, k) for p, k in zip(pred, cls)]
    assert c.smear == {}
    assert c.smear_all == pytest.approx(sum(m * w for m, w in zip(meas, runs)) /
                                        sum(f * w for f, w in zip(fitted, runs)))
    assert all(c.smearing(k) == c.smear_all for k in cls)
    duan = F.fit(pred, meas, cls, smearing="kind")
    ratios = [m / duan.apply(p, k) for p, m, k in zip(pred, meas, cls)]
    assert duan.smear_all == pytest.approx(statistics.mean(ratios))
    for kind in set(cls):
        mine = [x for x, k in zip(ratios, cls) if k == kind]
        if len(mine) >= F.SMEAR_MIN_KERNELS:
            assert duan.smearing(kind) == pytest.approx(statistics.mean(mine))
        else:                   # too few for a mean of exp: all kernels'
            assert duan.smearing(kind) == duan.smear_all
    assert any(len([k for k in cls if k == kind]) >= F.SMEAR_MIN_KERNELS for kind in cls)
    with pytest.raises(ValueError, match="time"):
        F.fit(pred, meas, cls, smearing="median")


def test_held_out_expected_times_smear_with_the_fitting_folds_alone(model_rows):
    names, pred, meas, cls = model_rows
    cal = F.calibrate_to_trace(names, pred, meas, cls)
    assert cal is not None
    folds = [F.fold_of(n) for n in names]
    train = [i for i in range(len(names)) if folds[i] != folds[0]]
    c = F.fit([pred[i] for i in train], [meas[i] for i in train], [cls[i] for i in train])
    assert cal.held_out_expected[0] == pytest.approx(c.expected(pred[0], cls[0]), rel=1e-9)
    moved = list(meas)
    moved[0] *= 100.0                   # its own measurement moves neither time
    again = F.calibrate_to_trace(names, pred, moved, cls)
    assert again is not None
    assert again.held_out_expected[0] == pytest.approx(cal.held_out_expected[0], rel=1e-12)
    assert again.correction.smear_all != cal.correction.smear_all


def test_kernels_split_over_threads_can_have_an_offset_of_their_own(roofline_reports):
    """The candidate of bench.accuracy.trace_fit_threads (not kept): kernels XLA:CPU splits
    over threads (``outer_dimension_partitions`` in the dump) are marked, and the fit gives
    them one more offset, which is what moves their fitted times and nothing else's."""
    fitted, _ = roofline_reports
    rows = fitted.measured_rows
    split = {r.instruction for r in rows if r.cost.partitions > 1}
    path = next(f.path for f in open_dump(sample("transformer")).main.files
                if f.path.endswith("cpu_after_optimizations.txt"))
    with open(sample("transformer") + "/" + path, encoding="utf-8") as f:
        text = f.read()
    # XLA wrote the partitions: every marked kernel's line has a non-empty list of them
    # (an empty list is one piece), no other kernel's
    assert split and all(
        bool(re.search(r'"outer_dimension_partitions":\["\d+"', line)) == (name in split)
        for name in {r.instruction for r in rows}
        for line in text.splitlines() if line.lstrip().startswith(f"%{name} = ")
        or line.lstrip().startswith(f"ROOT %{name} = "))
    pred = [r.uncalibrated_us for r in rows]
    meas = [r.measured_us for r in rows]
    plain = [F.kernel_class(r.cost, r.bound, threads=False) for r in rows]
    marked = [F.kernel_class(r.cost, r.bound, threads=True) for r in rows]
    assert [c.endswith("+" + F.THREADS) for c in marked] == [r.instruction in split
                                                             for r in rows]
    c = F.fit(pred, meas, marked)
    assert F.THREADS in c.b and F.THREADS not in F.fit(pred, meas, plain).b
    for r, p, k, m in zip(rows, pred, plain, marked):
        ratio = c.apply(p, m) / c.apply(p, k)
        assert ratio == pytest.approx(math.exp(c.b[F.THREADS]) if r.instruction in split
                                      else 1.0)


def test_why_no_fit_names_the_fold_not_too_few_kernels(model_rows):
    """Ten of the sample's kernels, seven of them in one fold by name: the held-out folds
    leave 3 to fit one of them, so nothing is fitted; the reason says so (it said 'too
    few ... (8 needed)' of 10 kernels); below 8 kernels it is too few."""
    names, pred, meas, cls = model_rows
    by_fold: dict[int, list[int]] = {}
    for i, k in enumerate(names):
        by_fold.setdefault(F.fold_of(k), []).append(i)
    crowded = max(by_fold.values(), key=len)[:7]
    rest = [i for i in range(len(names)) if i not in crowded][:3]
    pick = crowded + rest
    sub = [names[i] for i in pick]
    assert F.calibrate_to_trace(sub, [pred[i] for i in pick], [meas[i] for i in pick],
                                [cls[i] for i in pick]) is None
    why = F.why_no_fit(sub)
    assert "one fold holds 7 of them and would leave 3 to fit (4 needed)" in why
    assert F.why_no_fit(sub[:7]) == "too few (8 needed)"
