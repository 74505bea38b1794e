"""TF2 auto-clustering of two step functions in one program: a training step and an
evaluation step, each a tf.function that XLA auto-clustering cuts into clusters of its
own (cluster names count up across the program, so each graph's clusters are named
apart). Run with ``--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit`` (set by
``sample_dumps/make_tf_samples.py``).

Usage (normally via ``make_tf_samples.py``):
    python tf_two_steps.py
"""
import numpy as np
import tensorflow as tf

tf.config.optimizer.set_experimental_options({"remapper": False})
rng = np.random.default_rng(4)
x = rng.standard_normal((8, 6)).astype(np.float32)
y = rng.standard_normal((8, 1)).astype(np.float32)
w = tf.Variable(rng.standard_normal((6, 1)).astype(np.float32) * 0.5, name="w")


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.tanh(tf.matmul(x, w)) - y))
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss


@tf.function
def eval_step(x, y):
    err = tf.abs(tf.sigmoid(tf.matmul(x, w)) * 2.0 - 1.0 - y)
    return tf.reduce_max(err) + tf.reduce_mean(err)


for _ in range(2):
    loss = train_step(tf.constant(x), tf.constant(y))
print("loss", float(loss), "eval", float(eval_step(tf.constant(x), tf.constant(y))))
