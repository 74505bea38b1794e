"""TF2 auto-clustering around ops XLA cannot compile: a step whose numeric work is cut
by string ops (``tf.strings.as_string``/``tf.strings.length``: XLA has no string types)
and by Grappler's remapper, which fuses ``MatMul+BiasAdd+Relu`` into ``_FusedMatMul``
before clustering (XLA has no kernel for it). Run with ``--tf_xla_auto_jit=2
--tf_xla_cpu_global_jit`` (set by ``sample_dumps/make_tf_samples.py``); the log's
``Found uncompilable node`` lines say why each node stayed out.

Usage (normally via ``make_tf_samples.py``):
    python tf_uncompilable.py
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
x = rng.standard_normal((8, 16)).astype(np.float32)
w = tf.Variable(rng.standard_normal((16, 16)).astype(np.float32) * 0.25, name="w")
b = tf.Variable(np.zeros((16,), np.float32), name="b")


@tf.function
def step(x):
    with tf.name_scope("fused"):
        h = tf.nn.relu(tf.matmul(x, w) + b)       # remapper: _FusedMatMul
    with tf.name_scope("pre"):
        a = tf.reduce_sum(tf.square(h) * 0.5 + tf.sin(h), axis=1) * 2.0 - 1.0
    with tf.name_scope("text"):
        s = tf.strings.as_string(a, precision=2)  # string dtype: no XLA kernel
        n = tf.cast(tf.strings.length(s), tf.float32)
    with tf.name_scope("post"):
        # uses both the string path and `a`: merging the clusters of `pre` and `post` would
        # close a cycle through the unclustered string ops, so they stay two clusters
        out = tf.reduce_mean(n * a + tf.exp(-a))
    return out


for _ in range(2):
    out = step(tf.constant(x))
print("out", float(out))
