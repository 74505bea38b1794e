"""The runtime commands of ``python -m compiler_bridge``: ``runtimes``, ``profile``,
``calibrate``, ``train`` (registered by :func:`add_runtime_commands`)."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

from ..config import settings
from ..dumps import DumpError, open_dump, require_modules


def add_runtime_commands(sub) -> None:
    r = sub.add_parser("runtimes", help="measured and predicted kernel runtimes of a dump")
    r.add_argument("path", help="a dump folder, .zip or .tar.gz (its traces are read)")
    r.add_argument("--trace", action="append", metavar="FILE|DIR",
                   help="a trace file, or the profiler's output folder, to use instead of "
                        "the dump's own (repeatable)")
    r.add_argument("--model", help="a learned cost model (.npz); default: the saved model "
                                   "for this device kind if there is one, else the default "
                                   "model shipped for it, else the roofline")
    r.add_argument("--roofline", action="store_true", help="predict with the roofline only")
    r.add_argument("--device", help="device profile: cpu, h100, h200, a100, tpu_v4, tpu_v5e, "
                                    "tpu_v5p, tpu_v6e, local (calibrated) or a profile JSON "
                                    "(default: the device the dump was compiled for)")
    r.add_argument("--module", action="append", help="module id or name (repeatable)")
    r.add_argument("--stat", default="median", choices=("median", "p10", "min", "mean"),
                   help="statistic of the measured runs (default median)")
    r.add_argument("--top", type=int, default=25, help="kernels to print (text output)")
    r.add_argument("--no-fit", action="store_true",
                   help="predict on the device profile alone: no correction fitted to the "
                        "trace (by default, with a trace, predictions are fitted to it and "
                        "scored on held-out kernels)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_runtimes)

    p = sub.add_parser(
        "profile", help="run a JAX script with dumps and the profiler on",
        description="Run SCRIPT.py with XLA_FLAGS set to dump HLO into --out and the JAX "
                    "profiler on (trace in <out>/trace), in a child process. Put --out "
                    "before the script, or last on the line; after `--` everything goes "
                    "to the script.")
    p.add_argument("--out", help="the dump folder to write (opened by the app as is)")
    p.add_argument("--passes", action="store_true", help="also dump HLO after every pass")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    p.set_defaults(func=cmd_profile)

    c = sub.add_parser("calibrate", help="measure this machine's flop rates, bandwidth and "
                                         "kernel overhead for the roofline")
    c.add_argument("--out", help="profile JSON to write (default ~/.cache/hlolens/device.json)")
    c.add_argument("--quick", action="store_true", help="reduced sizes (about 2 s)")
    c.add_argument("--rounds", type=int, default=0,
                   help="keep each rate's median over this many calibrations (default 3, "
                        "1 with --quick)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_calibrate)

    t = sub.add_parser("train", help="train the learned cost model on dumps with traces")
    t.add_argument("dumps", nargs="+", help="dump folders that carry profiler traces")
    t.add_argument("--out", required=True, help="the model to write (MODEL.npz + MODEL.json); "
                   "~/.cache/hlolens/cost-model-cpu.npz is the one the app picks up")
    t.add_argument("--device", help="device profile for the roofline term (default: the "
                                    "calibrated profile of this machine, else generic CPU)")
    t.add_argument("--stat", default="median", choices=("median", "p10", "min", "mean"))
    t.add_argument("--steps", type=int, default=None,
                   help="optimizer steps (boosted trees: boosting rounds)")
    t.add_argument("--seeds", type=int, default=None, help="models averaged")
    t.add_argument("--evaluate", action="store_true",
                   help="also report leave-one-program-out accuracy (trains once per program)")
    t.add_argument("--kind", choices=("mlp", "gnn", "gbm"), default=None,
                   help="model kind when training from scratch: MLP, graph network or "
                        "gradient-boosted trees (default: the default model's kind, else mlp)")
    t.add_argument("--from-scratch", action="store_true",
                   help="do not start from the default model shipped with HLO Lens "
                        "(default: fine-tune it on these dumps)")
    t.set_defaults(func=cmd_train)


# --------------------------------------------------------------------------- runtimes

def _fmt(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _si(x: float) -> str:
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.1f}{unit}"
    return f"{x:.0f}"


def cmd_runtimes(args: argparse.Namespace) -> int:
    from .model_loader import load_model
    from .runtimes import runtime_report
    from .trace_events import TraceError
    dump = open_dump(args.path)
    require_modules(dump, args.path)
    model = None
    if args.model and not args.roofline:
        try:
            model = load_model(args.model)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    try:
        report = runtime_report(dump, args.module, args.trace, model, args.device, args.stat,
                                auto_model=not args.roofline, fit_to_trace=not args.no_fit)
    except KeyError as e:       # no such --module: a usage error, exit 2 as everywhere
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    except TraceError as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 1
    failed = report.trace_error is not None and (bool(args.trace) or bool(dump.traces))
    if not report.modules:      # none of the modules asked for could be read: say why
        for note in report.notes:
            print(f"error: {args.path}: {note}", file=sys.stderr)
        print(f"error: {args.path}: no module could be reported", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_json(), indent=1, allow_nan=False, default=_json_default))
    else:
        _print_report(report, args.top)
    if report.trace_error:
        print(f"{'error' if failed else 'note'}: {report.trace_error}", file=sys.stderr)
    # a trace file that could not be read beside others that were: the report is of the
    # rest, the input still has a problem (exit 1, as a file that does not parse anywhere)
    skipped = report.measured.errors if report.measured is not None else []
    for err in skipped:
        print(f"error: {err}", file=sys.stderr)
    return 1 if failed or skipped else 0


def _json_default(x):
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def step_line(st, predictor: str) -> str:
    """One module's step time, predicted and measured, in words."""
    fitted = st.uncalibrated_us is not None and st.median_fit_us is not None
    how = ("the kernels' expected times, fitted to this trace and times the fit's "
           "smearing factor" if fitted else "the kernels' predicted times" if predictor != "roofline"
           else "the kernels' rooflines")
    line = (f"step of module {st.module_id}: predicted {_us(st.predicted_us)} ({how}, each "
            "times its executions per step, summed")
    if fitted:
        line += (f"; {_us(st.median_fit_us)} from the fitted times alone, "
                 f"{_us(st.uncalibrated_us)} on the profile alone")
    line += f"; an estimate: {st.caveat})" if st.caveat else ")"
    if st.measured_us is not None:
        line += f"; measured {_us(st.measured_us)} (median step while profiling)"
    if st.far_off and st.ratio is not None:
        line += (f"\nWARNING: the predicted step is {st.ratio:.2g}x the measured one "
                 "(more than 2x off)")
    return line


def estimate_line(est) -> str:
    """XLA's own estimate of a module beside the roofline, in words (predictions both)."""
    parts = []
    if est.kernels:
        parts.append(f"Kendall tau {_fmt(est.kendall_tau)} over {est.kernels} kernels "
                     f"XLA:TPU priced (estimated_cycles at {est.clock_hz / 1e9:.2f} GHz: "
                     f"{_us(est.xla_us) if est.xla_us is not None else '-'}), ratio "
                     f"{_fmt(est.ratio)} (roofline / XLA)")
    if est.optimal_us is not None:
        parts.append(f"optimal_seconds {_us(est.optimal_us)}, ratio "
                     f"{_fmt(est.optimal_ratio)} (roofline step / XLA)")
    return (f"XLA's estimate of module {est.module_id}: " + "; ".join(parts)
            + " (two predictions, not a measurement)")


def _us(us: float) -> str:
    return f"{us / 1e3:.3g} ms" if us >= 1e3 else f"{us:.3g} µs"


def _print_report(report, top: int) -> None:
    mods = ", ".join(f"{i} {n}" for i, n in report.modules)
    print(f"dump {report.dump}: module {mods}")
    print(f"predicted by: {report.predictor_detail}; measured: {report.stat} per execution; "
          "share: mean time per step / mean step (overlap: share of its time other kernels "
          "ran too)")
    rows = sorted(report.rows, key=lambda r: (-(r.share or 0.0), -r.predicted_us))
    print(f"{'kernel':40s} {'opcode':10s} {'measured':>10s} {'predicted':>10s} {'ratio':>6s} "
          f"{'share':>6s} {'overlap':>7s} {'flops':>7s} {'bytes':>7s} bound")
    for r in rows[:top]:
        share = f"{r.share:.1%}" if r.share is not None else "-"
        overlap = f"{r.overlap:.0%}" if r.overlap else "-"
        print(f"{r.instruction[:40]:40s} {r.opcode[:10]:10s} {_fmt(r.measured_us):>10s} "
              f"{r.predicted_us:10.2f} {_fmt(r.ratio):>6s} {share:>6s} {overlap:>7s} "
              f"{_si(r.cost.flops):>7s} {_si(r.cost.bytes):>7s} {r.bound}")
    if len(rows) > top:
        print(f"... {len(rows) - top} more kernels (--top N, --json)")
    for mid, _name in report.modules:
        st = report.step_time(mid)
        if st is not None:
            print(step_line(st, report.predictor))
    for est in report.xla_estimates:
        print(estimate_line(est))
    m = report.metrics_json()
    nf = m.get("noise_floor") or {}
    if report.metrics:
        print(f"\naccuracy over {m['kernels_compared']} measured kernels "
              "(noise floor: one half of the measurements against the other, by "
              "profiling session when the trace has several, else by run):")
        fit = m.get("fit")
        if fit:
            print(f"  fitted to this trace, scored on held-out kernels ({fit['folds']}-fold "
                  "over kernels); 'profile alone': the predictor without the fit")
        elif m.get("fit_note"):
            print(f"  not fitted to the trace: {m['fit_note']}")
        un = report.uncalibrated_json() if fit else None
        from .metrics import METRICS
        for k in METRICS:
            alone = f"   profile alone {_fmt(un.get(k))}" if un else ""
            print(f"  {k:18s} {_fmt(m[k]):>6s}   (noise floor {_fmt(nf.get(k))}){alone}")
    print(f"events: {m['matched_events']} matched, {m['unmatched_events']} unmatched")
    for n in report.notes:
        print(f"note: {n}")


# --------------------------------------------------------------------------- profile

def _split_out(args: argparse.Namespace) -> tuple[str | None, list[str]]:
    rest = list(args.args)
    out = args.out
    if "--" in rest:
        k = rest.index("--")
        before, rest = rest[:k], rest[k + 1:]
        for i, a in enumerate(before):
            if a == "--out" and i + 1 < len(before):
                out = before[i + 1]
            elif a.startswith("--out="):
                out = a[6:]
        return out, rest
    if out is None and len(rest) >= 2 and rest[-2] == "--out":
        return rest[-1], rest[:-2]
    if out is None and rest and rest[-1].startswith("--out="):
        return rest[-1][6:], rest[:-1]
    return out, rest


def cmd_profile(args: argparse.Namespace) -> int:
    out, script_args = _split_out(args)
    if not out:
        print("error: profile needs --out DIR", file=sys.stderr)
        return 2
    script = os.path.abspath(args.script)
    if not os.path.isfile(script):
        print(f"error: {args.script}: no such script", file=sys.stderr)
        return 1        # a missing input path: 1, as every command
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    flags = [f"--xla_dump_to={out}", "--xla_dump_hlo_as_text"]
    if args.passes:
        flags.append("--xla_dump_hlo_pass_re=.*")
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join(x for x in (env.get("XLA_FLAGS", ""), *flags) if x)
    cmd = [sys.executable, "-m", "compiler_bridge.perf.profile_runner", os.path.join(out, "trace"),
           script, *script_args]
    print(f"XLA_FLAGS={env['XLA_FLAGS']}", file=sys.stderr)
    t0 = time.perf_counter()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(x for x in (here, env.get("PYTHONPATH", "")) if x)
    code = subprocess.call(cmd, env=env)
    secs = time.perf_counter() - t0
    try:
        dump = open_dump(out)
    except DumpError as e:
        print(f"error: {e}", file=sys.stderr)
        return code or 1
    print(f"{out}: {len(dump.modules)} modules, {len(dump.traces)} trace files "
          f"({secs:.1f} s); main program: {dump.main.label if dump.main else '-'}")
    if dump.traces:
        from .trace_events import TraceError
        from .traces import measure
        try:
            m = measure(dump)
            print(f"trace: {m.matched_events} per-op events matched, "
                  f"{m.unmatched_events} unmatched")
            for n in m.notes:
                print(f"note: {n}")
        except TraceError as e:
            print(f"note: {e}")
    if code != 0:
        print(f"error: {args.script} exited with code {code}", file=sys.stderr)
    return code


# --------------------------------------------------------------------------- calibrate

def cmd_calibrate(args: argparse.Namespace) -> int:
    from .calibrate import ROUNDS, calibrate
    from .devices import save_profile
    rounds = args.rounds or (1 if args.quick else ROUNDS)
    profile = calibrate(quick=args.quick, log=None if args.json else print, rounds=rounds)
    path = save_profile(profile, args.out or settings().calibrated_profile)
    if args.json:
        print(json.dumps({"path": path, "profile": profile.to_json()}, indent=1))
    else:
        print(f"saved {path}")
    return 0


# --------------------------------------------------------------------------- train

def cmd_train(args: argparse.Namespace) -> int:
    from . import boosted as B
    from . import graph_model as G
    from . import mlp
    from .dataset import dataset_from_dumps
    from .devices import device_profile
    from .evaluation import leave_out, summarize
    from .model_loader import shipped_model_path, try_load_model
    from .trace_events import TraceError
    if args.device:
        device = device_profile(args.device)
    else:
        from .calibrate import ensure_calibrated
        device, note = ensure_calibrated()
        if note:
            print(f"note: {note}")
    base = None
    if not args.from_scratch:
        base, why = try_load_model(shipped_model_path(device.kind), "default")
        if base is not None and args.kind and args.kind != base.kind:
            why = f"the default model is a {base.kind}, --kind asks for {args.kind}"
            base = None
        if base is None:
            print(f"note: training from scratch ({why})")
    kind = base.kind if base is not None else (args.kind or "mlp")
    # boosted trees: fine-tuning adds finetune_rounds trees fit to the model's residual
    bcfg = B.BoostConfig()
    if args.steps:
        bcfg.rounds = bcfg.finetune_rounds = args.steps
    cfg: mlp.TrainConfig | G.GraphConfig = mlp.TrainConfig() if kind == "mlp" else G.GraphConfig()
    if base is not None:
        # fine-tuning: fewer, smaller steps from the default model's weights
        cfg.steps, cfg.learning_rate = 200, 1e-3
    if args.steps:
        cfg.steps = args.steps
    if args.seeds and base is None:
        cfg.seeds = args.seeds
    try:
        ds = dataset_from_dumps(args.dumps, device, args.stat, log=print)
    except (TraceError, DumpError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    meta: dict = {"stat": args.stat, "dumps": [os.path.basename(os.path.normpath(d))
                                               for d in args.dumps]}

    def fit(d, m=None):
        if kind == "gbm":
            return B.train(d, device, bcfg, m, base)    # type: ignore[arg-type]
        if kind == "gnn":
            return G.train(d, device, cfg, m, base)    # type: ignore[arg-type]
        return mlp.train(d, device, cfg, m, base)        # type: ignore[arg-type]
    if args.evaluate:
        folds = leave_out(ds, fit, log=print)
        summary = summarize(folds)
        meta["leave_one_program_out"] = summary
        for which, vals in summary.items():
            print(f"{which:12s} " + "  ".join(f"{k} {_fmt(v)}" for k, v in vals.items()))
    t0 = time.perf_counter()
    model = fit(ds, meta)
    path = model.save(args.out)
    how = f"fine-tuned the {base.describe()} " if base is not None else f"trained a {kind} "
    print(f"{how}on {len(ds)} kernels of {len(ds.programs)} programs in "
          f"{time.perf_counter() - t0:.1f} s; saved {path}")
    return 0
