"""The model families of the traced corpus written with the libraries people train with
(Flax Linen and NNX, Equinox, Optax) or plain JAX: each builder returns ``(step, args, feed)``
like the plain-JAX builders of ``bench/corpus/make_traced_programs.py`` — a function to jit, its
arguments (NumPy arrays, so building a program compiles nothing), and how to feed a step's
outputs back as the next step's arguments (None: the same arguments again).

Parameters come from ``jax.eval_shape`` (the libraries' own initializers, traced, never run)
filled with seeded NumPy random values: random weights only, nothing downloaded.
Every builder takes ``dtype`` ('float32' or 'bfloat16': parameters and inputs) and ``train``
(a training step with an Optax optimizer, or inference).

One module per library: ``with_linen``, ``with_nnx``, ``with_equinox``, ``plain_jax``; their
shared pieces in ``helpers``."""

from __future__ import annotations

from typing import Callable

from bench.corpus.families.helpers import Built
from bench.corpus.families.plain_jax import (
                                             cg,
                                             fno,
                                             gnn,
                                             gqa,
                                             hmc,
                                             kmeans,
                                             lm_head,
                                             moe,
                                             newton,
                                             ode_rk4,
                                             optax_step,
                                             ssm,
                                             switch_net,
                                             vq,
)
from bench.corpus.families.with_equinox import diffusion, gpt, gru_eqx, pointnet, vae
from bench.corpus.families.with_linen import (
                                             dcgan,
                                             lstm,
                                             mha_linen,
                                             mobilenet,
                                             resnet,
                                             unet,
                                             wavenet,
)
from bench.corpus.families.with_nnx import mixer, norms, recsys, vit

__all__ = ["Built", "FAMILY_BUILDERS"]

FAMILY_BUILDERS: dict[str, Callable[..., Built]] = {
    f.__name__: f for f in (resnet, unet, lstm, mha_linen, wavenet, mobilenet, dcgan, vit,
                            mixer, recsys, norms, gpt, gru_eqx, vae, diffusion, pointnet,
                            gnn, moe, gqa, lm_head, ssm, fno, kmeans, cg, newton, ode_rk4, hmc,
                            switch_net, vq, optax_step)}
