"""TF2 auto-clustering of a training step fed by a tf.data pipeline whose map function
XLA clusters too: the map's graph has more clustered nodes than the step's, and the step
graph is still the training step's (the map's cluster is listed among the clusters TF
built in other graphs). Run with ``--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit`` (set by
``sample_dumps/make_tf_samples.py``).

Usage (normally via ``make_tf_samples.py``):
    python tf_data.py
"""
import numpy as np
import tensorflow as tf

tf.config.optimizer.set_experimental_options({"remapper": False})
rng = np.random.default_rng(5)
xs = rng.standard_normal((32, 8)).astype(np.float32)
ys = rng.standard_normal((32, 1)).astype(np.float32)
w = tf.Variable(rng.standard_normal((8, 1)).astype(np.float32) * 0.1, name="w")


def augment(x, y):
    """Preprocessing: a few elementwise rounds, all of them clusterable."""
    for i in range(2):
        x = tf.tanh(x * 1.01 + tf.sin(x) * 0.1 - tf.reduce_mean(x) * 0.01 + float(i) * 0.001)
    return x, y


dataset = tf.data.Dataset.from_tensor_slices((xs, ys)).map(augment).batch(16)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss


for x, y in dataset:
    loss = train_step(x, y)
print("loss", float(loss))
