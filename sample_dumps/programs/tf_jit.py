"""TF2 ``tf.function(jit_compile=True)``: a layer-norm + gelu block compiled as one XLA
program, called directly (a top-level jit function: it never shows in the graph dumps)
and from a plain ``tf.function`` (the call node carries ``_XlaMustCompile``). No
auto-clustering: ``make_tf_samples.py`` runs it without ``--tf_xla_auto_jit``.

Usage (normally via ``make_tf_samples.py``):
    python tf_jit.py
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
x = rng.standard_normal((4, 32)).astype(np.float32)
scale = tf.Variable(np.ones((32,), np.float32), name="scale")


@tf.function(jit_compile=True)
def norm_gelu(x):
    mean = tf.reduce_mean(x, axis=-1, keepdims=True)
    var = tf.reduce_mean(tf.square(x - mean), axis=-1, keepdims=True)
    y = (x - mean) * tf.math.rsqrt(var + 1e-5) * scale
    return tf.nn.gelu(y)


@tf.function
def outer(x):
    return tf.reduce_sum(norm_gelu(x) * 2.0)


print("direct", float(tf.reduce_sum(norm_gelu(tf.constant(x)))))
print("outer", float(outer(tf.constant(x))))
