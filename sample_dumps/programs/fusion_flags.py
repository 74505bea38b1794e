"""The MLP train step of ``mlp_train.py``, compiled for two batch sizes (32, then 8).

``make_samples.py`` runs it twice, with default XLA flags (``flags_default``) and with
``--xla_cpu_use_fusion_emitters=false`` (``flags_no_fusion_emitters``): a pair of dumps
of one program whose fusions differ. Each dump holds two compiles of ``jit_train_step``
(batch 32 and batch 8: a recompilation, other shapes).

Usage (normally via ``sample_dumps/make_samples.py``, which sets XLA_FLAGS):
    python fusion_flags.py [dump_dir] [--trace]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402

from mlp_train import SIZES, init_adam, init_params, train_step  # noqa: E402


def batch_of(rng, n):
    x = rng.standard_normal((n, SIZES[0])).astype(np.float32)
    labels = rng.randint(0, SIZES[-1], size=(n,)).astype(np.int32)
    return x, labels


def main():
    rng = np.random.RandomState(0)
    params = init_params(rng)
    opt_state = init_adam(params)
    batch = batch_of(rng, 32)
    for step in range(3):
        params, opt_state, loss = train_step(params, opt_state, batch)
        print(f"step {step}: loss {float(jax.block_until_ready(loss)):.4f}")
    # another batch size: jax compiles train_step again (a second jit_train_step module)
    _, _, small = train_step(params, opt_state, batch_of(rng, 8))
    print(f"batch 8: loss {float(jax.block_until_ready(small)):.4f}")
    if "--trace" in sys.argv[2:]:
        with jax.profiler.trace(os.path.join(sys.argv[1], "trace"), create_perfetto_trace=True):
            for step in range(5):
                params, opt_state, loss = train_step(params, opt_state, batch)
                jax.block_until_ready(loss)


if __name__ == "__main__":
    main()
