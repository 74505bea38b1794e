"""Generate large real XLA dumps for scale benchmarks into generated/ (git-ignored).

The program is a decoder-only transformer written with a Python loop over its
layers (unrolled: no lax.scan), so the optimized module grows linearly with
the layer count: token embedding, N pre-LayerNorm blocks (causal multi-head
self-attention with softmax, gelu MLP, residuals), final LayerNorm, tied
output projection, softmax cross-entropy, value_and_grad and a hand-written
Adam update, all in one jitted ``train_step(params, opt_state, batch)``
(XLA module ``jit_train_step``). d_model 64, 4 heads, MLP 256, sequence 32,
batch 2, vocabulary 128 (the sizes hardly change the instruction count; they
keep compile and run time small). Inputs are NumPy arrays with a fixed seed.

    .venv/bin/python -m bench.corpus.make_scale                # generated/scale_20k/  (>= 20k instr.)
    .venv/bin/python -m bench.corpus.make_scale --layers 12    # generated/scale_12layers/
    .venv/bin/python -m bench.corpus.make_scale --variant 460k # generated/scale_460k/ (~4.5 min)
    .venv/bin/python -m bench.corpus.make_scale --count 1 2 4  # only print counts (no dump kept)
    .venv/bin/python -m bench.corpus.make_scale --layers 3 --pass-re 'fusion|layout-assignment'
                                     # generated/scale_3layers_passes/: also per-pass files

Each dump runs in a child process with JAX_PLATFORMS=cpu and
XLA_FLAGS="--xla_dump_to=<out> --xla_dump_hlo_as_text" (no per-pass dumps);
afterwards LLVM IR (*.ll) and object files (*.o) are deleted, leaving the
HLO text files (before/after optimizations, buffer assignment, ...).
The instruction count is the number of lines in the after-optimizations file
that look like `[ROOT ]%name = shape opcode(...)`, fused computations included.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT

REPO = Path(ROOT)
GENERATED = REPO / "generated"

D_MODEL, HEADS, D_MLP, SEQ, BATCH, VOCAB = 64, 4, 256, 32, 2, 128
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8

# Layer counts measured with JAX 0.10.2 on CPU (see --count). The optimized
# module grows quadratically, about 160*N^2 + 1160*N + 500 instructions
# (8 layers: 20,030; 9: 23,909; 16: 60,022; 32: 201,446; 50: 458,468;
# 51: 475,787): wide backward fusions take operands from every layer. Compile
# time grows about as N^2.2: 8 layers 3.4 s, 32 layers 58 s, 51 layers 260 s
# (4.4 min with dumping; 64 MB after-optimizations file) on 2 CPU cores.
VARIANTS = {"20k": 9, "460k": 51}

INSTRUCTION_RE = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*\S")


# ----------------------------------------------------------------------------
# The program (imported lazily so that the parent process never loads JAX).
# ----------------------------------------------------------------------------

def build(n_layers: int):
    import numpy as np
    import jax
    import jax.numpy as jnp

    def layer_norm(p, x, eps=1e-5):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + eps) * p["scale"] + p["bias"]

    def self_attention(p, x):
        b, s, d = x.shape
        dh = d // HEADS
        qkv = (x @ p["wqkv"]).reshape(b, s, 3, HEADS, dh)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.float32(np.sqrt(dh))
        causal = jnp.tril(jnp.ones((s, s), bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, s, d)
        return out @ p["wo"]

    def mlp(p, x):
        return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    def block(p, x):
        x = x + self_attention(p["attn"], layer_norm(p["ln1"], x))
        return x + mlp(p["mlp"], layer_norm(p["ln2"], x))

    def model(params, tokens):
        x = params["embed"][tokens]
        for layer in params["layers"]:  # unrolled on purpose
            x = block(layer, x)
        x = layer_norm(params["ln_f"], x)
        return x @ params["embed"].T

    def loss_fn(params, batch):
        tokens, targets = batch
        logp = jax.nn.log_softmax(model(params, tokens))
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def adam_update(params, grads, opt_state):
        t = opt_state["t"] + 1
        m = jax.tree_util.tree_map(lambda m, g: B1 * m + (1 - B1) * g, opt_state["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, opt_state["v"], grads)
        tf = t.astype(jnp.float32)
        scale = LR * jnp.sqrt(1 - B2 ** tf) / (1 - B1 ** tf)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - scale * m / (jnp.sqrt(v) + EPS), params, m, v)
        return params, {"m": m, "v": v, "t": t}

    @jax.jit
    def train_step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        params, opt_state = adam_update(params, grads, opt_state)
        return params, opt_state, loss

    rng = np.random.RandomState(0)

    def dense(n_in, n_out):
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    def ln():
        return {"scale": np.ones(D_MODEL, np.float32), "bias": np.zeros(D_MODEL, np.float32)}

    params = {
        "embed": dense(VOCAB, D_MODEL),
        "layers": [{"ln1": ln(), "ln2": ln(),
                    "attn": {"wqkv": dense(D_MODEL, 3 * D_MODEL), "wo": dense(D_MODEL, D_MODEL)},
                    "mlp": {"w1": dense(D_MODEL, D_MLP), "b1": np.zeros(D_MLP, np.float32),
                            "w2": dense(D_MLP, D_MODEL), "b2": np.zeros(D_MODEL, np.float32)}}
                   for _ in range(n_layers)],
        "ln_f": ln(),
    }
    zeros = lambda: jax.tree_util.tree_map(np.zeros_like, params)  # noqa: E731
    opt_state = {"m": zeros(), "v": zeros(), "t": np.zeros((), np.int32)}
    tokens = rng.randint(0, VOCAB, size=(BATCH, SEQ + 1)).astype(np.int32)
    batch = (tokens[:, :-1], tokens[:, 1:])
    return train_step, (params, opt_state, batch)


def child_main(n_layers: int, run: bool) -> None:
    """Compile (and optionally run one step of) the model; XLA_FLAGS come from the parent."""
    import jax

    train_step, args = build(n_layers)
    t0 = time.perf_counter()
    compiled = train_step.lower(*args).compile()
    t1 = time.perf_counter()
    print(f"compile_s {t1 - t0:.1f}", flush=True)
    if os.environ.get("MAKE_SCALE_PRINT_COUNT"):
        n = sum(1 for line in compiled.as_text().splitlines() if INSTRUCTION_RE.match(line))
        print(f"instructions {n}", flush=True)
    if run:
        out = jax.block_until_ready(compiled(*args))
        print(f"run_s {time.perf_counter() - t1:.1f} loss {float(out[2]):.4f}", flush=True)


# ----------------------------------------------------------------------------
# Parent: child processes, pruning, counting.
# ----------------------------------------------------------------------------

def run_child(n_layers: int, xla_flags: str | None, run: bool, count: bool,
              timeout: float | None = None) -> dict:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    env.pop("XLA_FLAGS", None)
    if xla_flags:
        env["XLA_FLAGS"] = xla_flags
    if count:
        env["MAKE_SCALE_PRINT_COUNT"] = "1"
    cmd = [sys.executable, "-m", "bench.corpus.make_scale", "--child", str(n_layers)]
    if run:
        cmd.append("--run")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, text=True, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout)
        raise SystemExit(f"child for {n_layers} layers failed ({proc.returncode})")
    info = {"wall_s": wall}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in ("compile_s", "instructions", "run_s"):
            info[parts[0]] = float(parts[1]) if "." in parts[1] else int(parts[1])
    return info


def count_instructions(path: Path) -> int:
    with path.open(encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if INSTRUCTION_RE.match(line))


def make_dump(n_layers: int, out: Path, run: bool, pass_re: str | None = None,
              extra_flags: tuple[str, ...] = ()) -> None:
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rel = out.relative_to(REPO) if out.is_relative_to(REPO) else out
    flags = f"--xla_dump_to={rel} --xla_dump_hlo_as_text"
    if pass_re:
        # one snapshot per matching pass that changed the module (see compiler_bridge.passes)
        flags += f" --xla_dump_hlo_pass_re={pass_re}"
    for flag in extra_flags:                   # a variant compiled with other flags
        flags += f" {flag}"
    print(f"{n_layers} layers -> {rel}  (XLA_FLAGS={flags!r})", flush=True)
    info = run_child(n_layers, flags, run=run, count=False)
    removed = 0
    for p in list(out.iterdir()):
        if p.is_file() and p.suffix in (".ll", ".o"):
            p.unlink()
            removed += 1
        elif not re.match(r"^module_\d+\.jit_train_step(\.|$)", p.name):
            shutil.rmtree(p) if p.is_dir() else p.unlink()  # other (eager) modules
            removed += 1
    after = sorted(out.glob("*after_optimizations.txt"))
    before = sorted(out.glob("*before_optimizations.txt"))
    print(f"  compile {info.get('compile_s')} s, child wall {info['wall_s']:.1f} s"
          + (f", one step {info.get('run_s')} s" if run else "")
          + f"; removed {removed} .ll/.o/other files")
    for p in before + after:
        print(f"  {p.name}: {count_instructions(p):,} instructions, {p.stat().st_size:,} bytes")
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"  folder total {total:,} bytes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--run", action="store_true",
                        help="also execute one train step after compiling (default for 20k)")
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--layers", type=int, help="layer count; output generated/scale_<N>layers/")
    g.add_argument("--variant", choices=sorted(VARIANTS), default=None,
                   help="named size: 20k (default) or 460k; output generated/scale_<variant>/")
    g.add_argument("--count", type=int, nargs="+", metavar="N",
                   help="compile these layer counts without dumping and print instruction "
                        "counts and compile times")
    parser.add_argument("--out", type=Path, help="override the output folder")
    parser.add_argument("--pass-re", metavar="REGEX",
                        help="also dump one HLO snapshot per matching pass "
                             "(--xla_dump_hlo_pass_re; '.*' = every pass); the default "
                             "folder name gets a _passes suffix")
    parser.add_argument("--xla-flag", action="append", default=[], metavar="FLAG",
                        help="one more XLA flag (repeatable), e.g. "
                             "--xla-flag=--xla_cpu_use_fusion_emitters=false --out DIR: "
                             "the same program compiled another way (bench/speed/compare_bench.py)")
    args = parser.parse_args(argv)

    if args.child is not None:
        child_main(args.child, args.run)
        return 0

    if args.count:
        print(f"{'layers':>6} {'instructions':>12} {'compile_s':>9}")
        for n in args.count:
            info = run_child(n, None, run=False, count=True)
            print(f"{n:6} {info['instructions']:12,} {info['compile_s']:9.1f}", flush=True)
        return 0

    if args.layers is not None:
        n, out = args.layers, GENERATED / f"scale_{args.layers}layers"
        run = args.run
    else:
        variant = args.variant or "20k"
        n, out = VARIANTS[variant], GENERATED / f"scale_{variant}"
        run = args.run or variant == "20k"
    if args.pass_re and args.out is None:
        out = out.with_name(out.name + "_passes")
    make_dump(n, (args.out or out).resolve(), run, args.pass_re, tuple(args.xla_flag))
    return 0


if __name__ == "__main__":
    sys.exit(main())
