"""TF2 auto-clustering around a call of a ``tf.function(jit_compile=True)``: the call node
(``PartitionedCall`` with ``_XlaMustCompile``) joins the step's cluster, and XLA compiles
the called function's body into the cluster's module, whose HLO metadata names the body's
nodes, not the call. Run with ``--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit`` (set by
``sample_dumps/make_tf_samples.py``).

Usage (normally via ``make_tf_samples.py``):
    python tf_jit_in_cluster.py
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(5)
x = rng.standard_normal((4, 6)).astype(np.float32)


@tf.function(jit_compile=True)
def normalize(x):
    return x / (tf.norm(x, axis=-1, keepdims=True) + 1e-6)


@tf.function
def step(x):
    y = tf.nn.relu(x) * 2.0 - 0.5
    z = normalize(y) + tf.reduce_mean(y)
    return tf.reduce_sum(z * z)


for _ in range(2):
    out = step(tf.constant(x))
print("out", float(out))
