"""TF2 auto-clustering: a 2-layer MLP train step (tanh, softmax cross-entropy, SGD) in a
``tf.function``, clustered by XLA's auto-clustering (``--tf_xla_auto_jit=2
--tf_xla_cpu_global_jit``, set by ``sample_dumps/make_tf_samples.py``). Batch 16,
16 -> 32 -> 4, float32; inputs are NumPy arrays with a fixed seed; 2 steps run.

With a folder argument the steps run under TF's profiler, which writes its trace there
(``<dir>/plugins/profile/<session>/<host>.xplane.pb``, with one event per XLA kernel).

Usage (normally via ``make_tf_samples.py``, which sets TF_XLA_FLAGS, XLA_FLAGS,
TF_DUMP_GRAPH_PREFIX and TF_CPP_VMODULE):
    python tf_autocluster.py [trace_dir]
"""
import sys

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.standard_normal((16, 16)).astype(np.float32)
y = rng.integers(0, 4, size=(16,)).astype(np.int32)

w1 = tf.Variable(rng.standard_normal((16, 32)).astype(np.float32) * 0.25, name="w1")
b1 = tf.Variable(np.zeros((32,), np.float32), name="b1")
w2 = tf.Variable(rng.standard_normal((32, 4)).astype(np.float32) * 0.25, name="w2")
b2 = tf.Variable(np.zeros((4,), np.float32), name="b2")
params = [w1, b1, w2, b2]


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        with tf.name_scope("dense1"):
            h = tf.tanh(tf.matmul(x, w1) + b1)
        with tf.name_scope("dense2"):
            logits = tf.matmul(h, w2) + b2
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tape.gradient(loss, params)
    for p, g in zip(params, grads):
        p.assign_sub(0.1 * g)
    return loss


STEPS = 5
if len(sys.argv) > 1:
    tf.profiler.experimental.start(sys.argv[1])
for _ in range(STEPS):
    loss = train_step(tf.constant(x), tf.constant(y))
print("loss", float(loss))
if len(sys.argv) > 1:
    tf.profiler.experimental.stop()
