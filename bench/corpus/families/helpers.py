"""What the family builders share: seeded NumPy parameters from abstract shapes, data, a
loss, an Optax training step around a loss, and the libraries' ways to split a model into
parameters and a call."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

Built = tuple[Callable, tuple, Any]


def np_dtype(dtype: str):
    import jax.numpy as jnp
    return jnp.bfloat16 if dtype == "bfloat16" else np.float32


def fill(tree, dtype: str = "float32", seed: int = 0):
    """Abstract leaves (ShapeDtypeStruct) -> seeded NumPy arrays; floating leaves in ``dtype``
    scaled by 1/sqrt(fan), integer leaves zero (optimizer counts, indices)."""
    import jax
    import jax.numpy as jnp
    rng = np.random.RandomState(seed)
    want = np_dtype(dtype)

    def leaf(s):
        if not isinstance(s, jax.ShapeDtypeStruct):
            return s
        if jnp.issubdtype(s.dtype, jnp.floating):
            shape = tuple(s.shape)
            fan = max(int(np.prod(shape[:-1])), shape[-1]) if len(shape) >= 2 else 1
            a = rng.standard_normal(shape).astype(np.float32) / math.sqrt(fan)
            if len(shape) < 2:
                a = 1.0 + 0.1 * a
            return a.astype(want)
        return np.zeros(s.shape, s.dtype)
    return jax.tree.map(leaf, tree)


def zeros_like_abstract(tree):
    import jax
    return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype)
                        if isinstance(s, jax.ShapeDtypeStruct) else s, tree)


def data(shape, dtype: str = "float32", seed: int = 1):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32).astype(
        np_dtype(dtype))


def labels(n, classes, seed: int = 2):
    return np.random.RandomState(seed).randint(0, classes, size=n).astype(np.int32)


def xent(logits, y):
    import jax.numpy as jnp
    import optax
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(
        logits.astype(jnp.float32), y))


def trainer(loss: Callable, params, batch: tuple, train: bool, opt=None,
            infer: Callable | None = None) -> Built:
    """A training step (``loss(params, *batch)`` minimized by ``opt``, AdamW by default) or,
    without ``train``, inference (``infer(params, *batch)``, default the loss itself)."""
    import jax
    import optax
    if not train:
        return (infer or loss), (params,) + tuple(batch), None
    opt = opt or optax.adamw(1e-3)
    abstract = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), a.dtype), params)
    state = zeros_like_abstract(jax.eval_shape(opt.init, abstract))

    def train_step(params, state, *batch):
        value, g = jax.value_and_grad(loss)(params, *batch)
        updates, new_state = opt.update(g, state, params)
        return (same_dtypes(optax.apply_updates(params, updates), params),
                same_dtypes(new_state, state), value)

    return train_step, (params, state) + tuple(batch), \
        lambda out, args: (out[0], out[1]) + args[2:]


def same_dtypes(new, old):
    """``new`` cast leaf by leaf to ``old``'s dtypes: a step's outputs must be fed back as
    the next step's inputs unchanged (bf16 state updated in float32 stays bf16)."""
    import jax
    return jax.tree.map(lambda n, o: n.astype(o.dtype), new, old)


def linen_params(model, *inputs, dtype="float32", **kw):
    import jax
    return fill(jax.eval_shape(lambda *xs: model.init(jax.random.PRNGKey(0), *xs, **kw),
                               *inputs), dtype)


def nnx_split(make, dtype="float32"):
    """The module's state (NumPy-filled) and ``apply(state, *inputs)``, its call."""
    from flax import nnx
    graphdef, state = nnx.split(nnx.eval_shape(make))

    def apply(s, *inputs):
        return nnx.merge(graphdef, s)(*inputs)
    return fill(state, dtype), apply


def eqx_split(make, dtype="float32"):
    import equinox as eqx
    import jax
    abstract = eqx.filter_eval_shape(make)
    params, static = eqx.partition(abstract, lambda x: isinstance(x, jax.ShapeDtypeStruct))
    return fill(params, dtype), static
