"""Write real JAX programs' dumps and profiler traces into ``generated/traced/`` (git-ignored):
the corpus the runtime benchmark (``bench/runtime_bench.py``) and ``python -m compiler_bridge
train`` learn and test on, beside the two committed sample traces.

The corpus: the plain-JAX families below (``_PLAIN``) and the families of
``bench/traced_families.py``, written with Flax (Linen and NNX), Equinox and Optax — ResNet,
ViT, GPT (scan over layers and unrolled), U-Net, MLP-Mixer, GNN, LSTM/GRU under scan,
recommender embeddings, diffusion, VAE, optimizer updates, solvers (CG, Newton, RK4, HMC),
attention variants, conv1d audio, normalization layers, MoE routing, FFT — each in several
sizes, float32 and bfloat16, training step and inference (``--list``). Random weights only:
parameters come from ``jax.eval_shape`` filled by NumPy, so nothing but the step is compiled.
Each program's folder holds an ordinary dump (the app opens it as is), ``trace/`` with one
profiling session per round, ``program.json`` (name, family, library, dtype, mode,
description, base program and configuration) and ``cost_analysis.json`` (XLA's
``compiled.cost_analysis()`` of the dumped compile).

How it runs (2 shared cores): programs run in batches inside child processes
(``JAX_PLATFORMS=cpu``; one interpreter start per batch, not per program). Each program is
compiled with ``jax.jit(...).lower(...).compile(compiler_options=...)``: XLA debug options are
per compilation, so the dump round passes ``xla_dump_to=<folder>`` for that program's compile
alone and a configuration variant passes its own options, all in one process. Per program and
session: compile (a later round loads the same executable from JAX's persistent cache in
``generated/traced/.jax-cache``, whose key leaves out the dump options), two warm-up steps,
then enough steps for ~0.5 s (3-12) under ``jax.profiler.trace``; the session lands in
``<folder>/trace/plugins/profile/``. Wall time on 2 shared cores: BENCHMARKS.md.

Measurements are taken in ``--rounds`` rounds: round 1 dumps and traces every program into a
temporary folder renamed into place when complete (a reader never sees half a program), each
later round adds one more profiling session per program, in a rotated order, minutes after
the first. Why: these 2 cores are shared with other jobs, and re-measuring a program a minute
later moves its kernels' medians by 10-70% (DESIGN.md section 4: contention, page faults), far
more than the spread between runs of one session. The label is the median over every run, and
more sessions buy more than a quiet machine does: 7 per program (the default) put two halves of
a program's runs within 0.8-1.25 of each other for 85% of programs, 3 for 72% (BENCHMARKS.md).

Step times (issue 15, point 5): profiling sessions taken minutes apart disagree by up to 3x
on a program's step time, more than most configurations of one program differ, and the
profiler changes what it measures. So, once every configuration of a base program has its
folder, all of them are compiled in one child process and run in turn, round after round
(``--step-rounds``, a rotated order each round), timed by the wall clock without the
profiler; every other program likewise, in groups of 8 across families. That is one run;
``--step-runs`` (2) runs per group, a pass over all groups apart, because two runs disagree
more than the rounds of one run do. Each folder gets ``step_times.json``: its runs, the
median over all their rounds, and the medians of even and odd runs (the noise floor).
``bench/runtime_bench.py`` ranks configurations by these and compares every program's
predicted module time with its own.

Cached and bounded: a program whose folder already holds ``--rounds`` sessions is skipped; a
folder missing is dumped first; ``--budget-min N`` stops cleanly between programs once N
minutes have passed (run again to continue); ``--chunk i/n`` takes one n-th of every
family's programs, ``--family a,b`` whole families; the order interleaves families, so a
partial run covers them all.

Configurations (issue 15, point 5): ``CONFIGS`` compile the same program with XLA options
that change the optimized HLO; ``<base>@<config>`` is a program of its own (same family as its
base) for ``CONFIG_BASES``. Checked on jax 0.10.2 / CPU (the after-optimizations HLO
compared with the default compile's):

- works (the optimized HLO differs; ``CONFIGS``): ``xla_cpu_use_fusion_emitters=false``
  (fusions emitted the legacy way: other fusion kinds and kernel boundaries);
  ``xla_disable_hlo_passes=`` ``fusion`` (no instruction fusion: ~2.4x the kernels),
  ``dot-library-rewriter`` (dots stay HLO dots, fused with their neighbours: fewer kernels),
  ``cse``, ``reshape-mover``, ``cpu-parallel-task-assigner`` (kernels not split into
  parallel tasks: same instructions, other backend configs and one thread per kernel);
- works but only on some programs: ``transpose-folding`` (attention: the transposes feeding
  dots stay; a conv net's HLO is unchanged); ``algsimp`` changes everything (2-4x the
  instructions, an unrealistic compile) and is left out;
- compiles but the optimized HLO is identical (codegen-only or not a CPU pass):
  ``xla_cpu_enable_fast_math``, ``xla_cpu_prefer_vector_width=128``,
  ``xla_llvm_disable_expensive_passes``, ``xla_cpu_parallel_codegen_split_count``,
  ``xla_cpu_enable_concurrency_optimized_scheduler=false``, ``xla_cpu_use_onednn``,
  ``xla_cpu_use_xnnpack``, disabling ``multi_output_fusion``;
- layouts (JAX's layout API, ``jax.experimental.layout.Format``/``Layout`` as the jit's
  in/out shardings) work on CPU: ``colmajor`` gives every argument and result of rank >= 2
  a column-major layout (XLA adds copies/transposes at the edges and picks other layouts
  inside: e.g. 78 -> 160 copies in ``attn_m``).

    .venv/bin/python bench/make_traced_programs.py                 # all (see BENCHMARKS.md)
    .venv/bin/python bench/make_traced_programs.py --chunk 1/4 --budget-min 20
    .venv/bin/python bench/make_traced_programs.py --family vit,gnn --rounds 2
    .venv/bin/python bench/make_traced_programs.py mlp_s attn_m    # some
    .venv/bin/python bench/make_traced_programs.py --list
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from typing import NamedTuple

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# HLOLENS_TRACED_OUT: another place for the corpus (the tests' temporary folders)
OUT = os.environ.get("HLOLENS_TRACED_OUT") or os.path.join(ROOT, "generated", "traced")
# XLA's compiles are shared between rounds through JAX's persistent cache (its key leaves out
# the dump options): a later round loads the executable instead of compiling again.
CACHE = os.path.join(OUT, ".jax-cache")
if ROOT not in sys.path:       # run as a script: bench.traced_families beside this file
    sys.path.insert(0, ROOT)


# name -> (description, builder name, keyword arguments)
_PLAIN: dict[str, tuple[str, str, dict]] = {
    "mlp_s": ("MLP 256-512-256-10 train step (SGD), batch 64", "mlp",
              dict(sizes=(256, 512, 256, 10), batch=64)),
    "mlp_m": ("MLP 784-1024-1024-10 train step, batch 128", "mlp",
              dict(sizes=(784, 1024, 1024, 10), batch=128)),
    "mlp_l": ("MLP 1024-2048-1024-10 train step, batch 256", "mlp",
              dict(sizes=(1024, 2048, 1024, 10), batch=256)),
    "mlp_deep_infer": ("8-layer 256-wide gelu MLP, inference, batch 512", "mlp_infer",
                       dict(width=256, depth=8, batch=512)),
    "cnn_s": ("CNN 32x32x3 -> conv16 -> conv32 -> pool -> dense, train, batch 16", "cnn",
              dict(hw=32, cin=3, ch=(16, 32), batch=16)),
    "cnn_m": ("CNN 64x64x8 -> conv32 s2 -> conv64 s2 -> pool -> dense, train, batch 8", "cnn",
              dict(hw=64, cin=8, ch=(32, 64), batch=8, stride=2)),
    "attn_s": ("transformer block d64 seq64 4 heads, train, batch 4", "transformer",
               dict(d=64, seq=64, heads=4, batch=4)),
    "attn_m": ("transformer block d128 seq128 4 heads, train, batch 2", "transformer",
               dict(d=128, seq=128, heads=4, batch=2)),
    "attn_deep": ("4 transformer blocks d64 seq32 (unrolled), train, batch 2: wide backward "
                  "fusions", "transformer", dict(d=64, seq=32, heads=4, batch=2, layers=4)),
    "attn_l_infer": ("2 transformer blocks d256 seq256 8 heads, inference, batch 1",
                     "transformer", dict(d=256, seq=256, heads=8, batch=1, layers=2,
                                         train=False)),
    "rnn_scan": ("GRU over 32 steps (lax.scan), hidden 128, batch 16, train", "rnn",
                 dict(hidden=128, inp=64, steps=32, batch=16)),
    "while_solver": ("Jacobi iteration + power iteration (lax.while_loop), 256x256",
                     "solver", dict(n=256)),
    "elementwise": ("elementwise-heavy: gelu/softplus/sin/exp/log/where chains, 3 shapes",
                    "elementwise", dict()),
    "reductions": ("reduction-heavy: softmax, layernorm, axis sums, logsumexp, argmax, "
                   "cumsum, sort/top-k", "reductions", dict()),
    "layout_gather": ("transposes, concat, pad, slices, embedding gather, segment_sum",
                      "layout", dict()),
    "mlp_xs": ("MLP 128-256-10 train step, batch 32", "mlp",
               dict(sizes=(128, 256, 10), batch=32)),
    "mlp_w": ("MLP 2048-1024-10 train step, batch 128", "mlp",
              dict(sizes=(2048, 1024, 10), batch=128)),
    "mlp_infer_512": ("4-layer 512-wide gelu MLP, inference, batch 128", "mlp_infer",
                      dict(width=512, depth=4, batch=128)),
    "mlp_infer_1024": ("3-layer 1024-wide gelu MLP, inference, batch 64", "mlp_infer",
                       dict(width=1024, depth=3, batch=64)),
    "cnn_xs": ("CNN 16x16x3 -> conv8 -> conv16, train, batch 32", "cnn",
               dict(hw=16, cin=3, ch=(8, 16), batch=32)),
    "cnn_wide": ("CNN 32x32x16 -> conv32 -> conv32, train, batch 8", "cnn",
                 dict(hw=32, cin=16, ch=(32, 32), batch=8)),
    "attn_xs": ("transformer block d32 seq16 2 heads, train, batch 8", "transformer",
                dict(d=32, seq=16, heads=2, batch=8)),
    "attn_96": ("transformer block d96 seq48 3 heads, train, batch 4", "transformer",
                dict(d=96, seq=48, heads=3, batch=4)),
    "attn_2l": ("2 transformer blocks d128 seq64 4 heads, train, batch 2", "transformer",
                dict(d=128, seq=64, heads=4, batch=2, layers=2)),
    "attn_512_infer": ("transformer block d512 seq64 8 heads, inference, batch 1",
                       "transformer", dict(d=512, seq=64, heads=8, batch=1, train=False)),
    "rnn_s": ("GRU over 16 steps (lax.scan), hidden 64, batch 8, train", "rnn",
              dict(hidden=64, inp=32, steps=16, batch=8)),
    "rnn_l": ("GRU over 16 steps (lax.scan), hidden 256, batch 32, train", "rnn",
              dict(hidden=256, inp=128, steps=16, batch=32)),
    "while_solver_s": ("Jacobi + power iteration (lax.while_loop), 128x128", "solver",
                       dict(n=128)),
    "while_solver_l": ("Jacobi + power iteration (lax.while_loop), 512x512", "solver",
                       dict(n=512)),
    "elementwise_s": ("elementwise-heavy, shapes 1/8 of `elementwise`", "elementwise",
                      dict(scale=8)),
    "reductions_s": ("reduction-heavy, shapes 1/8 of `reductions`", "reductions",
                     dict(scale=8)),
    "layout_s": ("layout/gather, shapes 1/8 of `layout_gather`", "layout", dict(scale=8)),
    "optimizer_s": ("Adam update over 24 parameter arrays, grad accumulation", "optimizer",
                    dict(n_params=24)),
    "optimizer_wide": ("Adam update over 64 parameter arrays, grad accumulation, global-norm "
                       "clip (a 64-operand fusion)", "optimizer", dict(n_params=64)),
    # one more size of each family, so a held-out program has a sibling on both sides
    "mlp_infer_narrow": ("6-layer 128-wide gelu MLP, inference, batch 256", "mlp_infer",
                         dict(width=128, depth=6, batch=256)),
    "cnn_deep": ("CNN 32x32x8 -> conv16 -> conv16 -> conv32, train, batch 8", "cnn",
                 dict(hw=32, cin=8, ch=(16, 16, 32), batch=8)),
    "attn_m_infer": ("transformer block d128 seq128 4 heads, inference, batch 4",
                     "transformer", dict(d=128, seq=128, heads=4, batch=4, train=False)),
    "attn_l": ("transformer block d256 seq128 8 heads, train, batch 1", "transformer",
               dict(d=256, seq=128, heads=8, batch=1)),
    "rnn_m": ("GRU over 24 steps (lax.scan), hidden 128, batch 8, train", "rnn",
              dict(hidden=128, inp=64, steps=24, batch=8)),
    "while_solver_m": ("Jacobi + power iteration (lax.while_loop), 384x384", "solver",
                       dict(n=384)),
    "elementwise_m": ("elementwise-heavy, shapes 1/2 of `elementwise`", "elementwise",
                      dict(scale=2)),
    "reductions_m": ("reduction-heavy, shapes 1/2 of `reductions`", "reductions",
                     dict(scale=2)),
    "layout_m": ("layout/gather, shapes 1/2 of `layout_gather`", "layout", dict(scale=2)),
    "layout_xs": ("layout/gather, shapes 1/16 of `layout_gather`", "layout", dict(scale=16)),
    "mlp_infer_384": ("4-layer 384-wide gelu MLP, inference, batch 64", "mlp_infer",
                      dict(width=384, depth=4, batch=64)),
    "mlp_infer_thin": ("8-layer 64-wide gelu MLP, inference, batch 1024", "mlp_infer",
                       dict(width=64, depth=8, batch=1024)),
    "mlp_b": ("MLP 512-768-512-10 train step, batch 96", "mlp",
              dict(sizes=(512, 768, 512, 10), batch=96)),
    "cnn_s2": ("CNN 48x48x4 -> conv24 s2 -> conv48 s2, train, batch 4", "cnn",
               dict(hw=48, cin=4, ch=(24, 48), batch=4, stride=2)),
    "attn_long_infer": ("transformer block d64 seq256 2 heads, inference, batch 2",
                        "transformer", dict(d=64, seq=256, heads=2, batch=2, train=False)),
    "attn_192": ("transformer block d192 seq96 6 heads, train, batch 2", "transformer",
                 dict(d=192, seq=96, heads=6, batch=2)),
    "rnn_w": ("GRU over 12 steps (lax.scan), hidden 192, batch 16, train", "rnn",
              dict(hidden=192, inp=96, steps=12, batch=16)),
    "while_solver_xs": ("Jacobi + power iteration (lax.while_loop), 192x192", "solver",
                        dict(n=192)),
    "optimizer_m": ("Adam update over 40 parameter arrays, grad accumulation", "optimizer",
                    dict(n_params=40)),
    "elementwise_xs": ("elementwise-heavy, shapes 1/4 of `elementwise`", "elementwise",
                       dict(scale=4)),
    "reductions_xs": ("reduction-heavy, shapes 1/4 of `reductions`", "reductions",
                      dict(scale=4)),
    "layout_4": ("layout/gather, shapes 1/4 of `layout_gather`", "layout", dict(scale=4)),
}


# --------------------------------------------------------------------------- programs
# Each builder returns (jitted step, args, how to feed the outputs back as next args).

def _mlp(sizes, batch):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    params = [(rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a),
               np.zeros((b,), np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.randint(0, sizes[-1], size=(batch,))
    y = np.eye(sizes[-1], dtype=np.float32)[y]

    def loss(ps, x, y):
        h = x
        for i, (w, b) in enumerate(ps):
            h = h @ w + b
            if i < len(ps) - 1:
                h = jax.nn.relu(h)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h) * y, axis=-1))

    @jax.jit
    def train_step(ps, x, y):
        value, g = jax.value_and_grad(loss)(ps, x, y)
        return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, ps, g), value

    return train_step, (params, x, y), lambda out, args: (out[0],) + args[1:]


def _mlp_infer(width, depth, batch):
    import jax
    import numpy as np
    rng = np.random.RandomState(0)
    ws = [rng.standard_normal((width, width)).astype(np.float32) / np.sqrt(width)
          for _ in range(depth)]
    x = rng.standard_normal((batch, width)).astype(np.float32)

    @jax.jit
    def forward(ws, x):
        for w in ws:
            x = jax.nn.gelu(x @ w)
        return x

    return forward, (ws, x), None


def _cnn(hw, cin, ch, batch, stride=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    rng = np.random.RandomState(0)
    chans = (cin,) + tuple(ch)
    convs = [rng.standard_normal((3, 3, a, b)).astype(np.float32) / np.sqrt(9 * a)
             for a, b in zip(chans[:-1], chans[1:])]
    dense = rng.standard_normal((ch[-1], 10)).astype(np.float32) / np.sqrt(ch[-1])
    x = rng.standard_normal((batch, hw, hw, cin)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=(batch,))]

    def loss(p, x, y):
        cs, d = p
        h = x
        for k in cs:
            h = lax.conv_general_dilated(h, k, (stride, stride), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.relu(h)
        h = jnp.mean(h, axis=(1, 2))
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ d) * y, axis=-1))

    @jax.jit
    def train_step(p, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), value

    return train_step, ((convs, dense), x, y), lambda out, args: (out[0],) + args[1:]


def _transformer(d, seq, heads, batch, layers=1, train=True):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)

    def dense(a, b):
        return rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a)

    params = [{"g1": np.ones(d, np.float32), "wqkv": dense(d, 3 * d), "wo": dense(d, d),
               "g2": np.ones(d, np.float32), "w1": dense(d, 4 * d), "w2": dense(4 * d, d)}
              for _ in range(layers)]
    x = rng.standard_normal((batch, seq, d)).astype(np.float32)

    def ln(x, g):
        m = jnp.mean(x, -1, keepdims=True)
        v = jnp.mean((x - m) ** 2, -1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g

    def block(p, x):
        b, s, _ = x.shape
        dh = d // heads
        qkv = (ln(x, p["g1"]) @ p["wqkv"]).reshape(b, s, 3, heads, dh)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        att = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.float32(np.sqrt(dh))
        att = jnp.where(jnp.tril(jnp.ones((s, s), bool)), att, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(att, -1), v).reshape(b, s, d)
        x = x + o @ p["wo"]
        return x + jax.nn.gelu(ln(x, p["g2"]) @ p["w1"]) @ p["w2"]

    def forward(ps, x):
        for p in ps:
            x = block(p, x)
        return x

    if not train:
        return jax.jit(forward), (params, x), None

    @jax.jit
    def train_step(ps, x):
        value, g = jax.value_and_grad(lambda ps: jnp.mean(forward(ps, x) ** 2))(ps)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, ps, g), value

    return train_step, (params, x), lambda out, args: (out[0],) + args[1:]


def _rnn(hidden, inp, steps, batch):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    rng = np.random.RandomState(0)

    def dense(a, b):
        return rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a)

    p = {"wz": dense(inp + hidden, hidden), "wr": dense(inp + hidden, hidden),
         "wh": dense(inp + hidden, hidden)}
    xs = rng.standard_normal((steps, batch, inp)).astype(np.float32)

    def loss(p, xs):
        def cell(h, x):
            hx = jnp.concatenate([x, h], -1)
            z = jax.nn.sigmoid(hx @ p["wz"])
            r = jax.nn.sigmoid(hx @ p["wr"])
            c = jnp.tanh(jnp.concatenate([x, r * h], -1) @ p["wh"])
            h = (1 - z) * h + z * c
            return h, h
        _, hs = lax.scan(cell, jnp.zeros((xs.shape[1], hidden)), xs)
        return jnp.mean(hs ** 2)

    @jax.jit
    def train_step(p, xs):
        value, g = jax.value_and_grad(loss)(p, xs)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), value

    return train_step, (p, xs), lambda out, args: (out[0],) + args[1:]


def _solver(n):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    rng = np.random.RandomState(0)
    a = rng.standard_normal((n, n)).astype(np.float32) / n
    a = a + np.diag(np.full(n, 2.0, np.float32))   # diagonally dominant
    b = rng.standard_normal((n,)).astype(np.float32)

    @jax.jit
    def solve(a, b):
        d = jnp.diag(a)
        r = a - jnp.diag(d)

        def cond(s):
            x, x_old, i = s
            return jnp.logical_and(jnp.max(jnp.abs(x - x_old)) > 1e-6, i < 100)

        def body(s):
            x, _, i = s
            return (b - r @ x) / d, x, i + 1

        x, _, iters = lax.while_loop(cond, body, (b / d, jnp.zeros_like(b), 0))

        def pbody(i, v):
            w = a @ v
            return w / jnp.linalg.norm(w)
        v = lax.fori_loop(0, 40, pbody, jnp.ones((n,)) / np.sqrt(n))
        return x, iters, v @ (a @ v)

    return solve, (a, b), None


def _elementwise(scale=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    xs = [rng.standard_normal(s).astype(np.float32)
          for s in ((1024 // scale, 1024), (256 // scale, 4096), (64 // scale, 128, 128))]

    @jax.jit
    def f(a, b, c):
        outs = []
        for x in (a, b, c):
            outs.append(jax.nn.gelu(x) * 1.5 + 0.1)
            outs.append(jnp.sin(x) * jnp.cos(2 * x))
            outs.append(jax.nn.softplus(x) - jnp.log1p(jnp.exp(-jnp.abs(x))))
            outs.append(jnp.where(x > 0, x * x, jnp.exp(x) - 1))
            outs.append(jnp.clip(x, -1, 1).astype(jnp.bfloat16).astype(jnp.float32) + x)
        y = a * 2.0
        for _ in range(6):   # a dependent chain cut by transposes: several kernels
            y = jnp.tanh(y).T * 0.9
        outs.append(y)
        return outs

    return f, tuple(xs), None


def _reductions(scale=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    a = rng.standard_normal((512 // scale, 2048)).astype(np.float32)
    b = rng.standard_normal((2048 // scale, 1024)).astype(np.float32)
    c = rng.standard_normal((64 // scale, 64, 64)).astype(np.float32)
    v = rng.standard_normal(((1 << 18) // scale,)).astype(np.float32)

    @jax.jit
    def f(a, b, c, v):
        sm = jax.nn.softmax(a, axis=-1)
        m = jnp.mean(b, -1, keepdims=True)
        lnb = (b - m) * jax.lax.rsqrt(jnp.var(b, -1, keepdims=True) + 1e-5)
        return (sm, lnb, jnp.sum(b, axis=0), jnp.sum(b, axis=1), jnp.max(c, axis=(0, 2)),
                jax.nn.logsumexp(a, axis=0), jnp.argmax(a, axis=-1), jnp.cumsum(c, axis=1),
                jnp.sort(v), jax.lax.top_k(a, 8)[0], jnp.var(c, axis=(1, 2)))

    return f, (a, b, c, v), None


def _layout(scale=1):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    a = rng.standard_normal((2048 // scale, 1024)).astype(np.float32)
    t = rng.standard_normal((16 // scale, 64, 32, 48)).astype(np.float32)
    table = rng.standard_normal((32000 // scale, 256)).astype(np.float32)
    ids = rng.randint(0, 32000 // scale, size=(4096 // scale,)).astype(np.int32)
    seg = np.sort(rng.randint(0, 512, size=(4096 // scale,))).astype(np.int32)

    @jax.jit
    def f(a, t, table, ids, seg):
        emb = table[ids]
        pooled = jax.ops.segment_sum(emb, seg, num_segments=512)
        return (a.T + 1.0, jnp.transpose(t, (0, 2, 1, 3)) * 2.0,
                jnp.transpose(t, (3, 1, 2, 0)) + 1.0,
                jnp.concatenate([a, a[::-1]], axis=1), jnp.pad(a, ((8, 8), (0, 16))),
                a[:, 128:640] * 3.0, a.reshape(-1, 2048)[:, ::2] + 0.5,
                emb * 2.0, pooled, table.at[ids[:256]].add(1.0))

    return f, (a, t, table, ids, seg), None


def _optimizer(n_params):
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.RandomState(0)
    shapes = [((i % 7 + 1) * 32, (i % 5 + 1) * 16) if i % 3 else ((i % 11 + 1) * 64,)
              for i in range(n_params)]
    params = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    m = [np.zeros(s, np.float32) for s in shapes]
    v = [np.zeros(s, np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(2)]

    @jax.jit
    def step(params, m, v, g0, g1):
        g = [(a + b) * 0.5 for a, b in zip(g0, g1)]          # gradient accumulation
        norm = jnp.sqrt(sum(jnp.sum(x * x) for x in g))      # global norm clip
        g = [x * jnp.minimum(1.0, 1.0 / (norm + 1e-6)) for x in g]
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
        params = [p - 1e-3 * a / (jnp.sqrt(b) + 1e-8) for p, a, b in zip(params, m, v)]
        return params, m, v

    return step, (params, m, v, grads[0], grads[1]), \
        lambda out, args: (out[0], out[1], out[2]) + args[3:]


BUILDERS = {"mlp": _mlp, "mlp_infer": _mlp_infer, "cnn": _cnn, "transformer": _transformer,
            "rnn": _rnn, "solver": _solver, "elementwise": _elementwise,
            "reductions": _reductions, "layout": _layout, "optimizer": _optimizer}




class Program(NamedTuple):
    """One corpus program. Index 1 is the family (``runtime_bench`` reads ``[1]``)."""
    description: str
    family: str
    kwargs: dict
    builder: str
    library: str = "jax"
    dtype: str = "float32"
    mode: str = "train"         # 'train' (a training/update step) or 'infer'
    base: str = ""              # configuration variants: the program compiled otherwise
    config: str = ""


def _plain_mode(name: str, builder: str, kwargs: dict) -> str:
    if builder in ("mlp", "cnn", "rnn", "optimizer"):
        return "train"
    if builder == "transformer":
        return "train" if kwargs.get("train", True) else "infer"
    return "infer"


PROGRAMS: dict[str, Program] = {
    n: Program(d, b, kw, b, "jax", "float32", _plain_mode(n, b, kw)) for n, (d, b, kw) in
    _PLAIN.items()}

# family -> (builder, library, sizes as (tag, kwargs), variants)
TRAIN_INFER = (("float32", True), ("bfloat16", True), ("float32", False), ("bfloat16", False))
ONE_MODE = (("float32", False), ("bfloat16", False))
FAMILIES: dict[str, tuple[str, str, list[tuple[str, dict]], tuple]] = {
    "resnet": ("resnet", "flax.linen", [
        ("xs", dict(depth=2, width=8, hw=16, batch=8)),
        ("s", dict(depth=2, width=16, hw=32, batch=8)),
        ("m", dict(depth=4, width=16, hw=32, batch=8)),
        ("l", dict(depth=4, width=32, hw=32, batch=4)),
        ("xl", dict(depth=6, width=16, hw=64, batch=2))], TRAIN_INFER),
    "unet": ("unet", "flax.linen", [
        ("xs", dict(levels=2, width=8, hw=16, batch=4)),
        ("s", dict(levels=2, width=16, hw=32, batch=4)),
        ("m", dict(levels=3, width=16, hw=32, batch=4)),
        ("l", dict(levels=3, width=32, hw=32, batch=2)),
        ("xl", dict(levels=3, width=16, hw=64, batch=2))], TRAIN_INFER),
    "lstm": ("lstm", "flax.linen", [
        ("xs", dict(hidden=32, inp=16, steps=16, batch=8)),
        ("s", dict(hidden=64, inp=32, steps=32, batch=16)),
        ("m", dict(hidden=128, inp=64, steps=32, batch=16)),
        ("l", dict(hidden=256, inp=64, steps=24, batch=32)),
        ("deep", dict(hidden=96, inp=32, steps=24, batch=16, layers=2))], TRAIN_INFER),
    "mha_linen": ("mha_linen", "flax.linen", [
        ("xs", dict(d=32, heads=2, seq=16, batch=4)),
        ("s", dict(d=64, heads=4, seq=32, batch=4)),
        ("m", dict(d=128, heads=4, seq=64, batch=2, kv_seq=96)),
        ("l", dict(d=256, heads=8, seq=64, batch=2)),
        ("long", dict(d=64, heads=4, seq=256, batch=1, kv_seq=128))], TRAIN_INFER),
    "wavenet": ("wavenet", "flax.linen", [
        ("xs", dict(channels=16, layers=4, length=512, batch=2)),
        ("s", dict(channels=32, layers=6, length=1024, batch=2)),
        ("m", dict(channels=32, layers=10, length=2048, batch=2)),
        ("l", dict(channels=64, layers=8, length=2048, batch=1)),
        ("long", dict(channels=16, layers=12, length=8192, batch=1))], TRAIN_INFER),
    "mobilenet": ("mobilenet", "flax.linen", [
        ("xs", dict(width=8, blocks=3, hw=32, batch=4)),
        ("s", dict(width=16, blocks=3, hw=32, batch=4)),
        ("m", dict(width=16, blocks=6, hw=64, batch=2)),
        ("l", dict(width=32, blocks=6, hw=32, batch=4)),
        ("xl", dict(width=24, blocks=9, hw=64, batch=2))], TRAIN_INFER),
    "dcgan": ("dcgan", "flax.linen", [
        ("xs", dict(z=32, width=8, hw=16, batch=8)),
        ("s", dict(z=64, width=16, hw=16, batch=8)),
        ("m", dict(z=64, width=16, hw=32, batch=8)),
        ("l", dict(z=128, width=32, hw=32, batch=4)),
        ("xl", dict(z=100, width=16, hw=64, batch=2))], TRAIN_INFER),
    "vit": ("vit", "flax.nnx", [
        ("xs", dict(d=32, depth=2, heads=2, patch=4, hw=16, batch=8)),
        ("s", dict(d=64, depth=2, heads=4, patch=4, hw=32, batch=4)),
        ("m", dict(d=96, depth=4, heads=4, patch=4, hw=32, batch=4)),
        ("l", dict(d=192, depth=4, heads=6, patch=8, hw=64, batch=2)),
        ("deep", dict(d=64, depth=8, heads=4, patch=8, hw=32, batch=8))], TRAIN_INFER),
    "mixer": ("mixer", "flax.nnx", [
        ("xs", dict(d=32, depth=2, patch=4, hw=16, batch=8)),
        ("s", dict(d=64, depth=4, patch=4, hw=32, batch=4)),
        ("m", dict(d=128, depth=4, patch=4, hw=32, batch=4)),
        ("l", dict(d=256, depth=6, patch=8, hw=64, batch=2)),
        ("deep", dict(d=64, depth=12, patch=8, hw=32, batch=8))], TRAIN_INFER),
    "recsys": ("recsys", "flax.nnx", [
        ("xs", dict(tables=4, rows=1000, dim=16, batch=64)),
        ("s", dict(tables=8, rows=5000, dim=32, batch=128)),
        ("m", dict(tables=8, rows=20000, dim=64, batch=256, hot=8)),
        ("l", dict(tables=16, rows=10000, dim=32, batch=512)),
        ("wide", dict(tables=26, rows=4000, dim=16, batch=256, hot=2))], TRAIN_INFER),
    "norms": ("norms", "flax.nnx", [
        ("xs", dict(width=64, tokens=16, batch=8)),
        ("s", dict(width=128, tokens=64, batch=8)),
        ("m", dict(width=256, tokens=64, batch=16, groups=16)),
        ("l", dict(width=512, tokens=128, batch=8, groups=32)),
        ("long", dict(width=128, tokens=512, batch=8, groups=4))], TRAIN_INFER),
    "gpt_unrolled": ("gpt", "equinox", [
        ("xs", dict(d=32, layers=2, heads=2, seq=32, batch=4, vocab=256)),
        ("s", dict(d=64, layers=2, heads=4, seq=64, batch=4)),
        ("m", dict(d=128, layers=4, heads=4, seq=64, batch=2, vocab=1024)),
        ("l", dict(d=192, layers=4, heads=6, seq=128, batch=2, vocab=2048)),
        ("deep", dict(d=64, layers=8, heads=4, seq=64, batch=2))], TRAIN_INFER),
    "gpt_scan": ("gpt", "equinox", [
        ("xs", dict(d=32, layers=2, heads=2, seq=32, batch=4, vocab=256, scan=True)),
        ("s", dict(d=64, layers=4, heads=4, seq=64, batch=4, scan=True)),
        ("m", dict(d=128, layers=4, heads=4, seq=64, batch=2, vocab=1024, scan=True)),
        ("l", dict(d=192, layers=6, heads=6, seq=128, batch=2, vocab=2048, scan=True)),
        ("deep", dict(d=64, layers=12, heads=4, seq=64, batch=2, scan=True))], TRAIN_INFER),
    "gru_eqx": ("gru_eqx", "equinox", [
        ("xs", dict(hidden=32, inp=16, steps=16, batch=8)),
        ("s", dict(hidden=64, inp=32, steps=32, batch=16)),
        ("m", dict(hidden=128, inp=64, steps=32, batch=16)),
        ("l", dict(hidden=256, inp=128, steps=24, batch=32)),
        ("long", dict(hidden=64, inp=16, steps=128, batch=8))], TRAIN_INFER),
    "vae": ("vae", "equinox", [
        ("xs", dict(width=64, latent=8, depth=1, batch=32)),
        ("s", dict(width=256, latent=16, depth=2, batch=64)),
        ("m", dict(width=512, latent=32, depth=2, batch=128)),
        ("l", dict(width=1024, latent=64, depth=2, batch=128)),
        ("deep", dict(width=256, latent=32, depth=5, batch=64))], TRAIN_INFER),
    "diffusion": ("diffusion", "equinox", [
        ("xs", dict(width=8, hw=16, batch=4)),
        ("s", dict(width=16, hw=32, batch=4)),
        ("m", dict(width=32, hw=32, batch=4)),
        ("l", dict(width=32, hw=64, batch=2)),
        ("xl", dict(width=64, hw=32, batch=4))], TRAIN_INFER),
    "pointnet": ("pointnet", "equinox", [
        ("xs", dict(points=128, width=32, batch=8)),
        ("s", dict(points=256, width=64, batch=8)),
        ("m", dict(points=512, width=128, batch=8)),
        ("l", dict(points=1024, width=128, batch=16)),
        ("wide", dict(points=256, width=256, batch=8))], TRAIN_INFER),
    "gnn": ("gnn", "jax+optax", [
        ("xs", dict(nodes=256, edges=1024, feat=32, layers=2)),
        ("s", dict(nodes=1024, edges=4096, feat=64, layers=2)),
        ("m", dict(nodes=2048, edges=16384, feat=64, layers=3)),
        ("l", dict(nodes=4096, edges=24576, feat=96, layers=2)),
        ("batched", dict(nodes=128, edges=512, feat=64, layers=4, graphs=16))], TRAIN_INFER),
    "moe": ("moe", "jax+optax", [
        ("xs", dict(d=32, experts=4, tokens=128)),
        ("s", dict(d=64, experts=8, tokens=256)),
        ("m", dict(d=128, experts=8, tokens=512)),
        ("l", dict(d=128, experts=16, tokens=1024, k=1)),
        ("wide", dict(d=256, experts=4, tokens=512))], TRAIN_INFER),
    "gqa": ("gqa", "jax+optax", [
        ("xs", dict(d=64, heads=4, kv_heads=1, seq=32, batch=4)),
        ("s", dict(d=128, heads=8, kv_heads=2, seq=64, batch=2)),
        ("m", dict(d=256, heads=8, kv_heads=2, seq=128, batch=2)),
        ("local", dict(d=128, heads=4, kv_heads=4, seq=256, batch=2, window=32)),
        ("l", dict(d=384, heads=12, kv_heads=4, seq=128, batch=1))], TRAIN_INFER),
    "lm_head": ("lm_head", "jax+optax", [
        ("xs", dict(d=64, vocab=2048, tokens=128)),
        ("s", dict(d=128, vocab=8192, tokens=128)),
        ("m", dict(d=256, vocab=16384, tokens=128)),
        ("l", dict(d=256, vocab=32000, tokens=256)),
        ("wide", dict(d=512, vocab=8192, tokens=512))], TRAIN_INFER),
    "ssm": ("ssm", "jax+optax", [
        ("xs", dict(d=32, state=8, seq=64, batch=4)),
        ("s", dict(d=64, state=16, seq=128, batch=4)),
        ("m", dict(d=128, state=16, seq=256, batch=2)),
        ("l", dict(d=128, state=32, seq=512, batch=2)),
        ("wide", dict(d=256, state=8, seq=128, batch=4))], TRAIN_INFER),
    "fno": ("fno", "jax+optax", [
        ("xs", dict(width=8, modes=4, hw=16, batch=4)),
        ("s", dict(width=16, modes=8, hw=32, batch=4)),
        ("m", dict(width=32, modes=8, hw=32, batch=4)),
        ("l", dict(width=32, modes=12, hw=64, batch=2)),
        ("deep", dict(width=16, modes=8, hw=32, batch=4, layers=4))], TRAIN_INFER),
    "kmeans": ("kmeans", "jax", [
        ("xs", dict(points=1024, dim=8, clusters=8, iters=10)),
        ("s", dict(points=4096, dim=16, clusters=16, iters=10)),
        ("m", dict(points=8192, dim=32, clusters=32, iters=10)),
        ("l", dict(points=8192, dim=32, clusters=64, iters=6)),
        ("wide", dict(points=4096, dim=128, clusters=128, iters=5))], ONE_MODE),
    "cg": ("cg", "jax", [
        ("xs", dict(n=1024, iters=30)),
        ("s", dict(n=4096, iters=50)),
        ("m", dict(n=16384, iters=50)),
        ("l", dict(n=65536, iters=40)),
        ("batched", dict(n=4096, iters=40, batch=8))], ONE_MODE),
    "newton": ("newton", "jax", [
        ("xs", dict(n=16, iters=5, batch=8)),
        ("s", dict(n=32, iters=5, batch=16)),
        ("m", dict(n=64, iters=6, batch=16)),
        ("l", dict(n=128, iters=4, batch=8)),
        ("wide", dict(n=48, iters=8, batch=64))], ONE_MODE),
    "ode_rk4": ("ode_rk4", "jax", [
        ("nbody_s", dict(bodies=32, steps=50)),
        ("nbody_m", dict(bodies=128, steps=40)),
        ("nbody_l", dict(bodies=256, steps=20)),
        ("node_s", dict(bodies=16, steps=50, hidden=64)),
        ("node_m", dict(bodies=64, steps=40, hidden=256))], ONE_MODE),
    "hmc": ("hmc", "jax", [
        ("xs", dict(features=8, samples=256, leapfrog=10)),
        ("s", dict(features=32, samples=1024, leapfrog=20)),
        ("m", dict(features=64, samples=4096, leapfrog=20)),
        ("l", dict(features=128, samples=8192, leapfrog=10)),
        ("long", dict(features=16, samples=512, leapfrog=100))], ONE_MODE),
    "switch_net": ("switch_net", "jax+optax", [
        ("xs", dict(width=64, depth=2, batch=32)),
        ("s", dict(width=128, depth=4, batch=64)),
        ("m", dict(width=256, depth=4, batch=128)),
        ("l", dict(width=512, depth=3, batch=128)),
        ("deep", dict(width=128, depth=10, batch=64))], TRAIN_INFER),
    "vq": ("vq", "jax+optax", [
        ("xs", dict(codes=64, dim=16, tokens=256)),
        ("s", dict(codes=256, dim=32, tokens=1024)),
        ("m", dict(codes=512, dim=64, tokens=2048)),
        ("l", dict(codes=1024, dim=64, tokens=4096)),
        ("wide", dict(codes=4096, dim=32, tokens=1024))], TRAIN_INFER),
    "optax_update": ("optax_step", "optax", [
        ("adam_s", dict(opt="adam", n_params=16, scale=1)),
        ("adamw_m", dict(opt="adamw", n_params=32, scale=2)),
        ("lion_s", dict(opt="lion", n_params=24, scale=1)),
        ("lion_l", dict(opt="lion", n_params=32, scale=4)),
        ("adafactor_s", dict(opt="adafactor", n_params=16, scale=2)),
        ("adafactor_l", dict(opt="adafactor", n_params=32, scale=4)),
        ("sgd_m", dict(opt="sgd", n_params=48, scale=2)),
        ("adam_l", dict(opt="adam", n_params=64, scale=4))], (("float32", True),
                                                             ("bfloat16", True))),
}
_SHORT = {"float32": "f32", "bfloat16": "bf16"}


def _register() -> None:
    from bench.traced_families import FAMILY_BUILDERS
    for family, (builder, library, sizes, variants) in FAMILIES.items():
        doc = (FAMILY_BUILDERS[builder].__doc__ or "").split("\n\n")[0]
        doc = " ".join(doc.split())
        for i, (tag, kw) in enumerate(sizes):
            chosen = variants if len(variants) <= 2 else \
                (variants[i % len(variants)], variants[(i + 1) % len(variants)])
            for dtype, train in chosen:
                mode = "train" if train else "infer"
                name = f"{family}_{tag}_{_SHORT[dtype]}" + (
                    f"_{mode}" if variants is not ONE_MODE else "")
                size = ", ".join(f"{k}={v}" for k, v in kw.items())
                PROGRAMS[name] = Program(f"{doc} [{size}; {dtype}; {mode}]", family,
                                         dict(kw, dtype=dtype, train=train), builder, library,
                                         dtype, mode)


_register()

# configuration name -> XLA debug options (see the module docstring for what was checked)
CONFIGS: dict[str, dict] = {
    "nofusionemitters": {"xla_cpu_use_fusion_emitters": False},
    "nofusion": {"xla_disable_hlo_passes": "fusion"},
    "nodotlib": {"xla_disable_hlo_passes": "dot-library-rewriter"},
    "nocse": {"xla_disable_hlo_passes": "cse"},
    "noreshapemover": {"xla_disable_hlo_passes": "reshape-mover"},
    "noparalleltasks": {"xla_disable_hlo_passes": "cpu-parallel-task-assigner"},
    "colmajor": {"layout": "column-major"},

}
CONFIG_BASES = ("attn_m", "mlp_m", "cnn_m", "rnn_scan", "layout_m", "resnet_l_f32_train",
                "vit_xs_f32_train", "gpt_scan_xs_f32_train", "gpt_unrolled_m_f32_infer",
                "unet_xs_f32_train", "mixer_m_f32_infer", "gnn_l_f32_train")


def _register_configs() -> None:
    for base in CONFIG_BASES:
        p = PROGRAMS[base]
        for config, options in CONFIGS.items():
            opts = ", ".join(f"{k}={v}" for k, v in options.items())
            PROGRAMS[f"{base}@{config}"] = p._replace(
                description=f"{p.description} — compiled with {opts}", base=base,
                config=config)


_register_configs()


def build(name: str):
    """(step, args, feed) of a program (imports JAX: call in the child process)."""
    p = PROGRAMS[name]
    if p.builder in BUILDERS:
        return BUILDERS[p.builder](**p.kwargs)
    from bench.traced_families import FAMILY_BUILDERS
    return FAMILY_BUILDERS[p.builder](**p.kwargs)


def compile_program(name: str, dump_to: str | None = None):
    """The program's step compiled with its configuration's XLA options (and a dump into
    ``dump_to``), its arguments and feed; the step gets the program's family as its name so
    the module reads ``jit_<family>_<mode>``."""
    import jax
    p = PROGRAMS[name]
    fn, args, feed = build(name)
    options: dict = dict(CONFIGS.get(p.config, {}))
    if dump_to:
        options.update(xla_dump_to=dump_to, xla_dump_hlo_as_text=True)
    layout = options.pop("layout", None)
    named = _named(fn, f"{p.family}_{p.mode}")
    if layout is None:
        step = jax.jit(named)
    else:   # every array of rank >= 2 in and out in the given order of dimensions
        ins = _formats(args, layout)
        outs = _formats(jax.eval_shape(fn, *args), layout)
        step = jax.jit(named, in_shardings=ins, out_shardings=outs)
        args = tuple(jax.device_put(a, f) for a, f in zip(args, ins))
    compiled = step.lower(*args).compile(compiler_options=options or None)
    return compiled, args, feed


def _formats(tree, layout: str):
    """JAX layout API formats: ``column-major`` (dimensions reversed) for arrays of rank
    >= 2, None (XLA's default) for the rest."""
    import jax
    from jax.experimental.layout import Format, Layout
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert layout == "column-major", layout

    def one(a):
        rank = len(np.shape(a))
        return Format(Layout(major_to_minor=tuple(reversed(range(rank)))), device) \
            if rank >= 2 else None
    return jax.tree.map(one, tree)


def _named(fn, name: str):
    def step(*args):
        return fn(*args)
    step.__name__ = step.__qualname__ = name
    return step


def cost_analysis_of(compiled) -> dict:
    ca = compiled.cost_analysis()
    if isinstance(ca, list):
        ca = ca[0] if ca else {}
    return {k: float(v) for k, v in (ca or {}).items()}


# --------------------------------------------------------------------------- child

def _run_steps(compiled, args, feed, out, n: int):
    """``n`` steps, each fed the last one's output (a training step's new state) and
    waited for. Returns (args, output, seconds per step)."""
    import jax
    t0 = time.perf_counter()
    for _ in range(n):
        if feed is not None and out is not None:
            args = feed(out, args)
        out = jax.block_until_ready(compiled(*args))
    return args, out, (time.perf_counter() - t0) / n


def _session(name: str, folder: str, dump: bool) -> tuple[float, int]:
    """One profiling session of one program into ``folder`` (with ``dump``, also the dump,
    program.json and cost_analysis.json). Returns (seconds per step, steps traced)."""
    import tempfile

    import jax
    compiled, args, feed = compile_program(name, folder if dump else None)
    if dump:
        p = PROGRAMS[name]
        with open(os.path.join(folder, "cost_analysis.json"), "w") as f:
            json.dump(cost_analysis_of(compiled), f, indent=1, sort_keys=True)
        meta = dict(name=name, family=p.family, library=p.library, dtype=p.dtype,
                    mode=p.mode, description=p.description, builder=p.builder,
                    kwargs={k: v for k, v in p.kwargs.items()}, base=p.base or name,
                    config=p.config or "default",
                    compiler_options=CONFIGS.get(p.config, {}),
                    jax=jax.__version__)
        with open(os.path.join(folder, "program.json"), "w") as f:
            json.dump(meta, f, indent=1)
    # warm up (page in, thread pools): two steps, the second one timed
    args, out, _ = _run_steps(compiled, args, feed, None, 1)
    args, out, per_step = _run_steps(compiled, args, feed, out, 1)
    steps = int(min(12, max(3, round(0.5 / max(per_step, 1e-4)))))
    with tempfile.TemporaryDirectory(dir=folder, prefix=".session-") as tmp:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            args, out, _ = _run_steps(compiled, args, feed, out, steps)
        # <folder>/trace/plugins/profile/<session>: a new session beside earlier rounds'
        dest = os.path.join(folder, "trace", "plugins", "profile")
        os.makedirs(dest, exist_ok=True)
        for session in sorted(os.listdir(os.path.join(tmp, "plugins", "profile"))):
            target = os.path.join(dest, session)
            k = 1
            while os.path.exists(target):
                k += 1
                target = os.path.join(dest, f"{session}_{k}")
            shutil.move(os.path.join(tmp, "plugins", "profile", session), target)
    del compiled, args, out
    return per_step, steps


def _use_cache(jax) -> None:
    """Every compile in a child goes through JAX's persistent cache (CACHE)."""
    jax.config.update("jax_compilation_cache_dir", CACHE)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _child_env() -> dict[str, str]:
    """A child's environment: CPU only, no XLA_FLAGS of the caller's (each compile passes
    its own options)."""
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def child(names: list[str], dump: bool, deadline: float) -> None:
    """Runs inside the child process: one session of each program, in order, stopping
    before a program once past ``deadline`` (epoch seconds)."""
    import gc

    import jax
    _use_cache(jax)
    for name in names:
        if time.time() > deadline:
            print(json.dumps({"name": name, "skipped": "budget"}), flush=True)
            continue
        t0 = time.perf_counter()
        final = os.path.join(OUT, name)
        folder = os.path.join(OUT, f".tmp-{name}-{os.getpid()}") if dump else final
        try:
            if dump:
                shutil.rmtree(folder, ignore_errors=True)
                os.makedirs(folder)
            per_step, steps = _session(name, folder, dump)
            if dump and not _dumped(folder):
                # loaded from the persistent cache (an earlier run): compile for the dump
                shutil.rmtree(folder)
                os.makedirs(folder)
                jax.config.update("jax_enable_compilation_cache", False)
                try:
                    per_step, steps = _session(name, folder, dump)
                finally:
                    jax.config.update("jax_enable_compilation_cache", True)
            if dump:
                prune(folder)
                modules = _dumped(folder)
                if len(modules) != 1:
                    raise RuntimeError(f"{len(modules)} optimized modules in the dump")
                os.rename(folder, final)
            # the 1-minute load average: a session under contention times other kernels
            print(json.dumps({"name": name, "secs": time.perf_counter() - t0,
                              "step_ms": per_step * 1e3, "steps": steps,
                              "load": os.getloadavg()[0]}), flush=True)
        except Exception as e:   # one broken program never stops the rest
            if dump:
                shutil.rmtree(folder, ignore_errors=True)
            print(json.dumps({"name": name, "error": f"{type(e).__name__}: {e}"[:2000]}),
                  flush=True)
        jax.clear_caches()
        gc.collect()


# --------------------------------------------------------------------------- step times

STEP_ROUNDS = 15         # rounds of the interleaved step-time measurement
STEP_RUNS = 2            # such measurements per group, a pass over all groups apart
ROUND_SECONDS = 0.03     # each configuration runs this long (at least 3 steps) per round
STEP_TIMES = "step_times.json"


def step_record(runs: list[dict]) -> dict:
    """``step_times.json`` from its measurement runs: the median over every round of every
    run, and two halves for the noise floor. With two runs or more the halves are whole
    runs (even and odd runs): two runs minutes or hours apart disagree more than the rounds
    of one run do (a machine's speed drifts), and that is the noise a ranking must beat;
    with one run, its even and odd rounds."""
    every = [t for r in runs for t in r["rounds_us"]]
    if len(runs) >= 2:
        halves = [[t for r in runs[0::2] for t in r["rounds_us"]],
                  [t for r in runs[1::2] for t in r["rounds_us"]]]
    else:
        halves = [every[0::2], every[1::2]]
    return {"median_us": float(np.median(every)),
            "halves_us": [float(np.median(h)) for h in halves],
            "halves_by": "runs" if len(runs) >= 2 else "rounds",
            "runs": runs}


def _earlier_runs(name: str) -> list[dict]:
    """The runs already in ``step_times.json`` (a record of the first format, one run's
    rounds at its top level, counts as one run)."""
    try:
        with open(os.path.join(OUT, name, STEP_TIMES), encoding="utf-8") as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return []
    if not isinstance(rec, dict):
        return []
    if "runs" in rec:
        return list(rec["runs"])
    if "rounds_us" in rec:
        return [{k: rec[k] for k in ("rounds_us", "steps_per_round", "measured_with")
                 if k in rec}]
    return []


def step_runs_of(name: str) -> int:
    """Step-time measurement runs in a program's ``step_times.json`` (0: none)."""
    return len(_earlier_runs(name))


def step_times_child(members: list[str], rounds: int) -> None:
    """Runs inside the child process: the wall time per step of every program of one group
    (a base program's configurations, or programs of several families), measured
    together. Profiling sessions taken minutes apart disagree by up to 3x on a step's time
    (on a quiet machine too), far more than most configurations differ, so the members
    here run in turn, round after round (a rotated order each round), and each one's time
    is its median over the rounds. Adds this run to ``step_times.json`` in each member's
    folder."""
    import jax
    _use_cache(jax)
    state: dict[str, list] = {}
    for name in members:
        try:
            compiled, args, feed = compile_program(name)
            # warm up as a session does: two steps, the second one timed
            args, out, _ = _run_steps(compiled, args, feed, None, 1)
            args, out, per_step = _run_steps(compiled, args, feed, out, 1)
        except Exception as e:   # one broken program never stops the rest of its group
            print(json.dumps({"name": name, "error": f"{type(e).__name__}: {e}"[:2000]}),
                  flush=True)
            continue
        reps = int(min(50, max(3, round(ROUND_SECONDS / max(per_step, 1e-6)))))
        state[name] = [compiled, args, feed, out, reps]
    members = [m for m in members if m in state]
    per_round: dict[str, list[float]] = {n: [] for n in members}
    for r in range(rounds):
        shift = r % len(members)
        for name in members[shift:] + members[:shift]:
            compiled, args, feed, out, reps = state[name]
            args, out, per_step = _run_steps(compiled, args, feed, out, reps)
            per_round[name].append(per_step * 1e6)
            state[name][1], state[name][3] = args, out
    finished = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for name in members:
        run = {"rounds_us": per_round[name], "steps_per_round": state[name][4],
               "measured_with": [m for m in members if m != name],
               "finished": finished, "load": os.getloadavg()[0]}
        record = step_record(_earlier_runs(name) + [run])
        record.update(method="wall time per step (after block_until_ready), no profiler; "
                             "the programs of one group run in turn, in a rotated "
                             f"order, {rounds} rounds per run; median over every round of "
                             "every run; halves = even/odd runs (one run: even/odd rounds)",
                      jax=jax.__version__)
        with open(os.path.join(OUT, name, STEP_TIMES), "w") as f:
            json.dump(record, f, indent=1)
        print(json.dumps({"name": name, "step_us": float(np.median(per_round[name])),
                          "runs": len(record["runs"]),
                          "halves_us": record["halves_us"]}), flush=True)


STEP_GROUP = 8           # programs run in turn in one step-time measurement


def step_groups(names: list[str], runs: int = 1) -> dict[str, list[str]]:
    """Groups of programs among ``names`` whose step times are measured together, each
    whose members all have a finished folder and not all ``runs`` step-time runs yet:
    a base program and its configurations (key: the base), then the other programs in
    groups of STEP_GROUP in ``names``' order, which interleaves families (key:
    ``group-<i>``)."""
    groups: dict[str, list[str]] = {}
    chosen = set(names)
    taken: set[str] = set()
    for base in CONFIG_BASES:
        members = [base] + [f"{base}@{c}" for c in CONFIGS]
        taken.update(members)
        if all(m in chosen and sessions_of(m) >= 1 for m in members):
            groups[base] = members
    rest = [n for n in names if n not in taken and sessions_of(n) >= 1]
    for i in range(0, len(rest), STEP_GROUP):
        groups[f"group-{i // STEP_GROUP + 1}"] = rest[i:i + STEP_GROUP]
    return {k: ms for k, ms in groups.items() if not all(step_runs_of(m) >= runs for m in ms)}


def _run_step_times(members: list[str], rounds: int) -> list[dict]:
    env = _child_env()
    cmd = [sys.executable, os.path.abspath(__file__), "--step-child",
           json.dumps({"members": members, "rounds": rounds})]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    for r in results:
        if "error" in r:
            print(f"  [{r['name']}] step times FAILED: {r['error']}", flush=True)
    results = [r for r in results if "error" not in r]
    if proc.returncode != 0:
        print(f"  step times of {members[0]} failed (exit code {proc.returncode}): "
              f"{proc.stdout[-2000:]}", flush=True)
    return results


# --------------------------------------------------------------------------- driver

def _dumped(folder: str) -> list[str]:
    return [f for f in os.listdir(folder) if f.endswith(".cpu_after_optimizations.txt")]


def prune(folder: str) -> None:
    for f in os.listdir(folder):
        if f.endswith((".o", ".ll")):
            os.remove(os.path.join(folder, f))


def clean_leftovers(names: list[str]) -> None:
    """Temporary folders of runs that were killed (a finished run leaves none): a dump
    folder ``.tmp-<name>-<pid>`` whose process is gone, a ``.session-*`` in a program."""
    if not os.path.isdir(OUT):
        return
    for entry in os.listdir(OUT):
        if entry.startswith(".tmp-"):
            pid = entry.rsplit("-", 1)[-1]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                shutil.rmtree(os.path.join(OUT, entry), ignore_errors=True)
    for name in names:
        folder = os.path.join(OUT, name)
        if os.path.isdir(folder):
            for entry in os.listdir(folder):
                path = os.path.join(folder, entry)
                # a session takes seconds: one this old belongs to no live run
                if entry.startswith(".session-") and time.time() - os.path.getmtime(path) > 600:
                    shutil.rmtree(path, ignore_errors=True)


def sessions_of(name: str) -> int:
    """Profiling sessions held by a program's finished folder (-1: no finished folder)."""
    folder = os.path.join(OUT, name)
    if not os.path.isfile(os.path.join(folder, "program.json")):
        return -1
    prof = os.path.join(folder, "trace", "plugins", "profile")
    return len(os.listdir(prof)) if os.path.isdir(prof) else 0


def _run_batch(names: list[str], dump: bool, deadline: float) -> list[dict]:
    """One child process for a batch of programs; its JSON lines are the results (its other
    output, merged so that neither pipe can fill and block it, is kept for errors)."""
    env = _child_env()
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(
        {"names": names, "dump": dump, "deadline": deadline})]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    results: list[dict] = []
    other: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("{"):
            results.append(json.loads(line))
            _report(results[-1], dump)
        else:
            other = (other + [line])[-40:]
    if proc.wait() != 0:
        print(f"child failed with exit code {proc.returncode}: {''.join(other)[-2000:]}",
              flush=True)
    return results


def _report(r: dict, dump: bool) -> None:
    what = "dump+trace" if dump else "trace"
    if "error" in r:
        print(f"  [{r['name']}] FAILED: {r['error']}", flush=True)
    elif "skipped" not in r:
        print(f"  [{r['name']}] {what} {r['secs']:5.1f} s (step {r['step_ms']:.1f} ms x "
              f"{r['steps']}, load {r.get('load', float('nan')):.1f})", flush=True)


def select(args) -> list[str]:
    names = args.names or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        raise SystemExit(f"unknown programs: {', '.join(unknown)} (see --list)")
    if args.family:
        fams = set(args.family.split(","))
        bad = fams - {p.family for p in PROGRAMS.values()}
        if bad:
            raise SystemExit(f"unknown families: {', '.join(sorted(bad))} (see --list)")
        names = [n for n in names if PROGRAMS[n].family in fams]
    if not args.configs:
        names = [n for n in names if not PROGRAMS[n].config]
    # families interleaved (each family's first program, then each one's second, ...): a
    # partial run covers every family; chunk i/n takes the family's programs whose rank,
    # shifted by the family's index, is i - 1 modulo n (a family of >= n programs is in
    # every chunk)
    rank: dict[str, int] = {}
    seen: dict[str, int] = {}
    for n in names:
        fam = PROGRAMS[n].family
        rank[n] = seen.get(fam, 0)
        seen[fam] = rank[n] + 1
    names = sorted(names, key=lambda n: rank[n])
    if args.chunk:
        parts = args.chunk.split("/")
        if len(parts) != 2 or not all(x.isdigit() for x in parts) \
                or not 1 <= int(parts[0]) <= int(parts[1]):
            raise SystemExit(f"--chunk {args.chunk}: expected i/n with 1 <= i <= n")
        i, k = int(parts[0]), int(parts[1])
        index = {f: j for j, f in enumerate(seen)}
        names = [n for n in names if (rank[n] + index[PROGRAMS[n].family]) % k == i - 1]
    return names


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="programs to make (default: all)")
    p.add_argument("--rounds", type=int, default=7,
                   help="profiling sessions per program, taken in rounds over all programs")
    p.add_argument("--family", help="only these families (comma-separated)")
    p.add_argument("--chunk", help="i/n: every n-th program starting at the i-th")
    p.add_argument("--no-configs", dest="configs", action="store_false",
                   help="leave out the configuration variants (<base>@<config>)")
    p.add_argument("--budget-min", type=float, default=None,
                   help="stop cleanly between programs after this many minutes")
    p.add_argument("--batch", type=int, default=16, help="programs per child process")
    p.add_argument("--list", action="store_true")
    p.add_argument("--step-rounds", type=int, default=STEP_ROUNDS,
                   help="rounds of the interleaved step-time measurement of each group "
                        "of programs (0: none)")
    p.add_argument("--step-runs", type=int, default=STEP_RUNS,
                   help="such measurements per group, each a pass over all groups after "
                        "the last")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--step-child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        job = json.loads(args.child)
        child(job["names"], job["dump"], job["deadline"])
        return 0
    if args.step_child:
        job = json.loads(args.step_child)
        step_times_child(job["members"], job["rounds"])
        return 0
    if args.list:
        fams: dict[str, int] = {}
        for name, prog in PROGRAMS.items():
            fams[prog.family] = fams.get(prog.family, 0) + 1
            print(f"{name:34s} {prog.family:14s} {prog.library:11s} {prog.description}")
        print(f"{len(PROGRAMS)} programs, {len(fams)} families")
        return 0
    names = select(args)
    clean_leftovers(names)
    start = time.time()
    deadline = start + 60 * args.budget_min if args.budget_min else float("inf")
    made = failed = 0
    for r in range(max(args.rounds, 1)):
        shift = (r * 7) % max(len(names), 1)
        order = names[shift:] + names[:shift]
        todo = [n for n in order if sessions_of(n) < r + 1]
        dump = [n for n in todo if sessions_of(n) < 0]
        more = [n for n in todo if n not in dump]
        print(f"round {r + 1}/{args.rounds}: {len(dump)} to dump, {len(more)} to trace again",
              flush=True)
        for group, is_dump in ((dump, True), (more, False)):
            for i in range(0, len(group), args.batch):
                if time.time() > deadline:
                    break
                for res in _run_batch(group[i:i + args.batch], is_dump, deadline):
                    made += "secs" in res
                    failed += "error" in res
        if time.time() > deadline:
            print(f"budget of {args.budget_min} min spent: stopping (run again to continue)")
            break
    timed = 0
    # each pass adds one run to every group short of --step-runs: a group's runs are a pass
    # over all groups apart
    for run in range(args.step_runs if args.step_rounds > 0 and time.time() <= deadline
                     else 0):
        for base, members in step_groups(names, run + 1).items():
            if time.time() > deadline:
                break
            t0 = time.time()
            got = _run_step_times(members, args.step_rounds)
            timed += len(got) == len(members)
            print(f"  [{base}] step times of {len(got)} programs, interleaved "
                  f"(run {run + 1}, {args.step_rounds} rounds) in {time.time() - t0:.0f} s: "
                  + ", ".join(f"{r['name'].split('@')[-1]} {r['step_us'] / 1e3:.2f} ms"
                              for r in got), flush=True)
        if time.time() > deadline:
            print(f"budget of {args.budget_min} min spent: stopping (run again to continue)")
            break
    done = sum(1 for n in names if sessions_of(n) >= args.rounds)
    print(f"{made} sessions made, {failed} failed, {done}/{len(names)} programs complete "
          f"({args.rounds} sessions), {timed} groups' step-time runs "
          f"in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
