"""Measure this machine for the roofline: matmul and vector flop rates, memory bandwidth by
working-set size, per-kernel overhead, with small JAX micro-benchmarks.

Everything is measured the way kernel runtimes are measured everywhere else in HLO Lens:
one profiler trace of small jitted programs, each kernel's self time read back with
:mod:`compiler_bridge.perf.traces` (so the figures include what the profiler adds per kernel,
and exclude Python dispatch). Each benchmark's kernel is the longest op event of its
module; the median over repeats is kept.

* matmul: ``x @ y`` (XLA:CPU runs it through YNNPACK); ``x.T @ y`` (a plain ``dot``,
  Eigen) is measured too, from its start to its ``end:`` completion marker, since its
  thunk runs asynchronously; the faster of the two;
* vector: a long FMA chain and a short ``tanh`` chain on a cache-resident array (one
  fusion, small enough that XLA:CPU runs it on one thread; four ``tanh`` per element, as
  fusions use them: a long chain would time the latency of one, not the throughput), and the FMA chain on an array large
  enough that XLA:CPU splits the fusion over threads (``outer_dimension_partitions``): the
  ratio of the two rates is the parallel speed-up (``threads``);
* bandwidth: an elementwise update in a ``while`` body at several sizes from L2 to DRAM
  (buffers reused, as temporaries are: ``bandwidth_curve``), and ``y = 2x + 1`` into a
  program output of 4 MiB (a new buffer each run, from the heap: ``output_bandwidth``)
  and into one of 48 MiB, which malloc maps fresh from the kernel in every run
  (``fresh_bandwidth``: page faults, the rate of a large temp allocation's first writes);
* sines: four ``sin`` of normally distributed data (``trig_flops``: XLA:CPU's sine costs
  ten times its tanh or more, depending on its arguments);
* grouped convolution: a depthwise 3x3 convolution (``grouped_conv_flops``);
* FFT: a batch of 64x64 real 2-D transforms (``fft_flops``, its flops counted as
  ``costs.fft_work`` counts them);
* reduce-window: a 2x2 product pool, which XLA:CPU runs as generated scalar loops
  (``window_flops``; it hands a max or sum window to YNNPACK, but not a cumulative sum
  or the tree its reduction rewriter makes of a large bf16 sum);
* overhead: a ``while`` loop (data-dependent trip count, so its body stays separate
  kernels) whose body holds scalar kernels and one fusion of 48 tiny operands.

``quick=True`` runs reduced sizes (about 2 s, for tests; the full run takes about 3 s).
Two calibrations of one machine a minute apart differ by up to 2x in some rates, so first
use, the ``calibrate`` command and the benchmark that ships the default model keep each
rate's median over ``ROUNDS`` full runs (``median_profile``); how far a model's predictions
move between profiles is in ``bench/accuracy/transfer_bench.py``.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import statistics
import tempfile
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from .devices import DeviceProfile, host_name

if TYPE_CHECKING:        # jax is imported when calibrating, not with this module
    from jax.stages import Wrapped

# (jitted function, its arguments, (what its work counts: 'flops', 'bytes'..., how much))
Program = tuple["Wrapped", tuple[Any, ...], tuple[str, float]]


def _programs(quick: bool) -> dict[str, Program]:
    """name -> (jitted function, args, work): work = flops, bytes or None."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    rng = np.random.RandomState(0)
    out: dict[str, Program] = {}
    n_mm = 384 if quick else 1024
    a = jnp.asarray(rng.standard_normal((n_mm, n_mm)).astype(np.float32))

    def mm_ynn(x, y):
        return x @ y

    def mm_dot(x, y):
        return x.T @ y
    out["mm_ynn"] = (jax.jit(mm_ynn), (a, a), ("flops", 2.0 * n_mm ** 3))
    out["mm_dot"] = (jax.jit(mm_dot), (a, a), ("flops", 2.0 * n_mm ** 3))

    n_vec, chain = 1 << 14, (32 if quick else 96)

    def fma(name: str):
        """The FMA chain as a program of its own name (its module in the trace)."""
        def chain_of(x):
            for _ in range(chain):
                x = x * 0.999 + 0.001
            return x
        chain_of.__name__ = chain_of.__qualname__ = name
        return jax.jit(chain_of)

    def tanh_chain(x):
        for _ in range(4):
            x = jnp.tanh(x)
        return x
    v = jnp.ones((n_vec,), jnp.float32)
    out["fma_chain"] = (fma("fma_chain"), (v,), ("flops", 2.0 * chain * n_vec))
    n_par = n_vec * 16   # 1 MiB: split over threads, still cache-sized
    out["fma_split"] = (fma("fma_split"), (jnp.ones((n_par,), jnp.float32),),
                        ("flops", 2.0 * chain * n_par))
    out["tanh_chain"] = (jax.jit(tanh_chain), (v,), ("transcendentals", 4 * n_vec))

    def sin_chain(x):
        # arguments spread as data's are (a sine's cost depends on them; a constant
        # input's branches are all predicted)
        return jnp.sin(x) + jnp.sin(2 * x) + jnp.sin(3 * x) + jnp.sin(4 * x)
    normal = jnp.asarray(rng.standard_normal(n_vec).astype(np.float32))
    out["sin_chain"] = (jax.jit(sin_chain), (normal,), ("transcendentals", 4 * n_vec))

    sizes = [1 << 13, 1 << 15, 1 << 17, 1 << 19, 1 << 21] + ([] if quick else [1 << 23])
    trips = jnp.int32(6 if quick else 12)
    for n in sizes:
        def warm(x, k):
            return lax.while_loop(lambda s: s[0] < k,
                                  lambda s: (s[0] + 1, s[1] * 1.0001 + 1e-4, s[2]),
                                  (0, x, x))[1]
        warm.__name__ = warm.__qualname__ = f"warm_{n}"
        out[f"warm_{n}"] = (jax.jit(warm), (jnp.ones((n,), jnp.float32), trips),
                            ("bytes", 8.0 * n))
    # 4 MiB, the size of most outputs in the traced corpus: reused from the heap between
    # runs (a 16 MiB one was mapped fresh in some runs and not others: 0.6-12 GB/s)
    n_out = 1 << 20

    def stream(x):
        return x * 2.0 + 1.0
    out["stream"] = (jax.jit(stream), (jnp.ones((n_out,), jnp.float32),), ("bytes", 4.0 * n_out))
    # 48 MiB: over glibc's largest mmap threshold (32 MiB), so the output is mapped fresh
    # in every run, as a large temp allocation is
    n_fresh = 12 << 20

    def fresh_stream(x):
        return x * 2.0 + 1.0
    out["fresh_stream"] = (jax.jit(fresh_stream), (jnp.ones((n_fresh,), jnp.float32),),
                           ("bytes", 4.0 * n_fresh))

    # a depthwise 3x3 convolution (feature_group_count = channels), as MobileNets have:
    # XLA:CPU's libraries run it far below the matmul rate
    chans, side = 64, (8 if quick else 16)
    img = jnp.asarray(rng.standard_normal((4, side, side, chans)).astype(np.float32))
    filt = jnp.asarray(rng.standard_normal((3, 3, 1, chans)).astype(np.float32))

    def depthwise(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=chans)
    out["depthwise"] = (jax.jit(depthwise), (img, filt),
                        ("flops", 2.0 * 9 * img.size))

    # 2-D real FFTs, as Fourier neural operators run them (XLA:CPU calls DUCC)
    batch = 16 if quick else 64
    planes = jnp.asarray(rng.standard_normal((batch, 64, 64)).astype(np.float32))

    def fft2(x):
        return jnp.fft.rfft2(x)
    out["fft2"] = (jax.jit(fft2), (planes,), ("flops", 5.0 * batch * 4096 * 12))

    # a 2x2 product pool: a reduce-window outside YNNPACK, in generated scalar loops
    pool_in = jnp.asarray(rng.uniform(0.5, 1.5, (4 if quick else 16, 512, 128))
                          .astype(np.float32))

    def product_pool(x):
        return lax.reduce_window(x, 1.0, lax.mul, (1, 2, 2), (1, 2, 2), "VALID")
    out["product_pool"] = (jax.jit(product_pool), (pool_in,),
                           ("flops", 3.0 * pool_in.size / 4))

    wide = 48

    def loop_wide(xs, n):
        def body(s):
            i, vs = s
            acc = vs[0] * 1.0001
            for y in vs[1:]:
                acc = acc + y
            return i + 1, (acc,) + tuple(vs[1:])
        return lax.while_loop(lambda s: s[0] < n, body, (0, xs))[1]
    xs = tuple(jnp.full((8,), float(i), jnp.float32) for i in range(wide))
    out["loop_wide"] = (jax.jit(loop_wide), (xs, jnp.int32(40 if quick else 200)),
                        ("buffers", wide))
    return out


def _measure(programs: dict[str, Program], repeat: int) -> tuple[dict[str, list[float]], dict, int]:
    """Self times (µs) per program from one profiler session; loop kernels apart."""
    import jax

    from ..hlo import parse_hlo
    from .trace_files import read_trace_file

    widest = ""
    fn, args, _ = programs["loop_wide"]
    text = fn.lower(*args).compile().as_text()
    if text is None:
        raise RuntimeError("jax gave no HLO text for the loop_wide program")
    fusions = [i for i in parse_hlo(text).instructions() if i.opcode == "fusion"]
    if fusions:
        widest = max(fusions, key=lambda i: len(i.operand_names)).name
    for fn, args, _ in programs.values():
        jax.block_until_ready(fn(*args))   # compile and warm up
    with tempfile.TemporaryDirectory(prefix="hlolens-calibrate-") as tmp:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            for _ in range(repeat):
                for fn, args, _ in programs.values():
                    jax.block_until_ready(fn(*args))
        files = glob.glob(os.path.join(tmp, "**", "perfetto_trace.json.gz"), recursive=True)
        if not files:
            raise RuntimeError("the profiler wrote no perfetto_trace.json.gz")
        trace = read_trace_file(files[0])
    # the longest top-level op of each run of each module; loop bodies apart
    per_warm: dict[str, list[float]] = defaultdict(list)
    best: dict[tuple[str, str], float] = {}
    loop: dict[str, list[float]] = {"small": [], "wide": []}
    for e in trace.events:
        if e.module == "jit_loop_wide":
            if e.parent != -1:
                loop["wide" if e.op == widest else "small"].append(e.self_us)
            continue
        if e.module.startswith("jit_warm_"):
            if e.parent != -1 and "fusion" in e.op:   # the body's elementwise kernel
                per_warm[e.module[4:]].append(e.self_us)
            continue
        if e.parent == -1:
            key = (e.module, e.run)
            took = e.async_us if e.async_us is not None else e.self_us
            best[key] = max(best.get(key, 0.0), took)
    per: dict[str, list[float]] = defaultdict(list)
    per.update(per_warm)
    for (module, _run), t in best.items():
        per[module[4:] if module.startswith("jit_") else module].append(t)
    return per, loop, len(trace.events)


# Calibrations of one machine a minute apart differ by up to 2x in some rates (the
# speed-up of a split fusion measured 1.1 and 2.0; matmul 211 and 329 GFLOP/s): the
# profile a model is trained against and the one it predicts with should both be typical.
ROUNDS = 3


def median_profile(profiles: list[DeviceProfile]) -> DeviceProfile:
    """Each rate's median over several calibrations of one machine (the first one's name
    and details; the bandwidth curve point by point)."""
    first = profiles[0]
    if len(profiles) == 1:
        return first

    def med(get) -> float:
        return float(statistics.median(get(p) for p in profiles))
    changes: dict[str, Any] = {f.name: med(lambda p, n=f.name: getattr(p, n))
                               for f in dataclasses.fields(DeviceProfile)
                               if isinstance(getattr(first, f.name), float)}
    matmul = {k: med(lambda p, k=k: p.matmul_flops.get(k, 0.0)) for k in first.matmul_flops}
    curve = []
    if all(len(p.bandwidth_curve) == len(first.bandwidth_curve) for p in profiles):
        curve = [[size, med(lambda p, i=i: p.bandwidth_curve[i][1])]
                 for i, (size, _) in enumerate(first.bandwidth_curve)]
    details = dict(first.details, rounds=len(profiles),
                   seconds=round(sum(p.details.get("seconds", 0.0) for p in profiles), 2))
    changes.update(matmul_flops=matmul, bandwidth_curve=curve or first.bandwidth_curve,
                   details=details)
    return dataclasses.replace(first, **changes)


def calibrate(quick: bool = False, log=None, rounds: int = 1) -> DeviceProfile:
    """Measure this machine and return its profile (not saved; see devices.save_profile):
    with ``rounds`` > 1, each rate's median over that many calibrations."""
    if rounds > 1:
        runs = []
        for i in range(rounds):
            if log is not None:
                log(f"-- round {i + 1} of {rounds}")
            runs.append(calibrate(quick, log))
        profile = median_profile(runs)
        if log is not None:
            log(f"the median of {rounds} rounds: matmul "
                f"{profile.matmul_rate('f32') / 1e9:.0f} GFLOP/s, vector "
                f"{profile.vector_flops / 1e9:.1f} GFLOP/s x{profile.threads:.2f}")
        return profile
    import jax

    def say(msg: str) -> None:
        if log is not None:
            log(msg)

    t0 = time.perf_counter()
    programs = _programs(quick)
    per, loop, events = _measure(programs, 3 if quick else 7)

    def rate(name: str) -> float:
        work = programs[name][2][1]
        t = statistics.median(per[name]) if per.get(name) else float("nan")
        return work / (t * 1e-6)

    def optional(name: str) -> float:
        """A rate the roofline can do without: 0 (the profile's fallback) if not measured."""
        r = rate(name)
        return 0.0 if r != r else r

    mm = max(rate("mm_ynn"), rate("mm_dot"))
    say(f"matmul f32: {rate('mm_ynn') / 1e9:.1f} GFLOP/s (x @ y), "
        f"{rate('mm_dot') / 1e9:.1f} GFLOP/s (x.T @ y)")
    vec = rate("fma_chain")
    trans = rate("tanh_chain")
    trans_cost = max(vec / trans, 1.0)
    threads = min(max(rate("fma_split") / vec, 1.0), float(os.cpu_count() or 1))
    if threads != threads:   # NaN: not measured
        threads = 1.0
    say(f"vector f32: {vec / 1e9:.1f} GFLOP/s on one thread, x{threads:.2f} when XLA "
        f"splits a fusion over threads; tanh: {trans / 1e9:.2f} G/s = {trans_cost:.1f} "
        "flops each")
    trig_cost = max(vec / rate("sin_chain"), 1.0)
    if trig_cost != trig_cost:
        trig_cost = 0.0
    say(f"sin: {rate('sin_chain') / 1e9:.2f} G/s = {trig_cost:.1f} flops each")
    grouped = optional("depthwise")
    say(f"depthwise convolution: {grouped / 1e9:.2f} GFLOP/s")
    fft = optional("fft2")
    say(f"FFT: {fft / 1e9:.2f} GFLOP/s (5 n log2 n per transform)")
    window = optional("product_pool")
    say(f"reduce-window in generated loops: {window / 1e9:.2f} GFLOP/s")
    overhead = statistics.median(loop["small"]) if loop["small"] else 1.0
    per_buffer = 0.0
    if loop["wide"]:
        wide = programs["loop_wide"][2][1]
        per_buffer = max(statistics.median(loop["wide"]) - overhead, 0.0) / (wide - 1)
    say(f"kernel overhead under the profiler: {overhead:.2f} µs "
        f"(+{per_buffer * 1000:.1f} ns per buffer)")
    curve = []
    for name in sorted((n for n in programs if n.startswith("warm_")),
                       key=lambda n: programs[n][2][1]):
        nbytes = programs[name][2][1]
        if not per.get(name):
            continue
        t = statistics.median(per[name])
        bw = nbytes / (max(t - overhead, 1e-3) * 1e-6)
        curve.append([nbytes, bw])
        say(f"bandwidth at {nbytes / 1024:.0f} KiB (reused buffers): {bw / 1e9:.1f} GB/s")
    out_bw = rate("stream")
    say(f"bandwidth writing a program output ({programs['stream'][2][1] / 2 ** 20:.0f} MiB, "
        f"a new buffer each run): {out_bw / 1e9:.1f} GB/s")
    fresh_bw = optional("fresh_stream")
    say(f"bandwidth writing pages mapped fresh ({programs['fresh_stream'][2][1] / 2 ** 20:.0f} "
        f"MiB output, over malloc's mmap threshold): {fresh_bw / 1e9:.1f} GB/s")
    dev = jax.devices()[0]
    kind = dev.platform if dev.platform in ("cpu", "gpu", "tpu") else "cpu"
    name = f"{getattr(dev, 'device_kind', kind)} on {host_name()}"
    return DeviceProfile(
        name, kind, {"f32": mm}, vector_flops=vec,
        bandwidth=curve[-1][1] if curve else out_bw, output_bandwidth=out_bw,
        launch_overhead_us=overhead, per_buffer_us=per_buffer,
        transcendental_flops=trans_cost, bandwidth_curve=curve, threads=threads,
        grouped_conv_flops=grouped, trig_flops=trig_cost, fft_flops=fft,
        window_flops=window, fresh_bandwidth=fresh_bw,
        source=f"python -m compiler_bridge calibrate{' --quick' if quick else ''}, "
               f"{time.strftime('%Y-%m-%d')}, jax {jax.__version__}",
        measured=True,
        details={"quick": quick, "seconds": round(time.perf_counter() - t0, 2),
                 "events": events,
                 "matmul_ynn": rate("mm_ynn"), "matmul_dot": rate("mm_dot")})


def outdated(profile: DeviceProfile) -> bool:
    """A CPU profile calibrated before ``calibrate`` measured every rate the roofline now
    uses (depthwise convolutions, sines, FFTs, reduce-windows, fresh pages): the roofline
    would price those at the wrong rate, so it is measured again."""
    return profile.kind == "cpu" and profile.measured and min(
        profile.grouped_conv_flops, profile.trig_flops, profile.fft_flops,
        profile.window_flops, profile.fresh_bandwidth) <= 0


def ensure_calibrated(path: str = "") -> tuple[DeviceProfile, str]:
    """This machine's calibrated profile; when there is none yet, calibration runs now
    (about 8-10 s with JAX's import: the median of three full runs, as the default model's
    profile was measured) and is cached where ``calibrate`` saves, so only the first use pays;
    one an older HLO Lens saved without a rate the roofline now uses is measured again.
    Returns (profile, a note saying so, or '')."""
    from ..config import settings
    from .devices import load_calibrated, save_profile
    path = path or settings().calibrated_profile
    found = load_calibrated(path)
    if found is not None and not outdated(found):
        return found, ""
    t0 = time.perf_counter()
    profile = calibrate(rounds=ROUNDS)
    try:
        save_profile(profile, path)
        where = "cached for next time"
    except OSError:
        where = "not cached: the cache folder is not writable"
    why = ("the calibrated profile of this machine predates the depthwise-convolution, "
           "sine, FFT, reduce-window and fresh-page rates: measured it again" if found is not None else
           "no calibrated profile of this machine: measured it on first use")
    return profile, (f"{why} ({time.perf_counter() - t0:.1f} s, {where}); `python -m "
                     "compiler_bridge calibrate` measures it again")
