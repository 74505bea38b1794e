"""TF2 auto-clustering of a Keras model trained with ``model.fit``: a small conv net
(Conv2D + ReLU, then a 2-layer MLP head: Dense + ReLU, Dense, softmax cross-entropy, SGD),
clustered by XLA's auto-clustering (``--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit``, set
by ``sample_dumps/make_tf_samples.py``) with Keras's own XLA off (``jit_compile=False``).
Keras's ``fit`` builds many small ``tf.function`` graphs (variable creation, metrics,
callbacks) beside the train step, so the run dumps many rounds of each TF pass; Grappler's
remapper fuses the Conv2D and the Dense layers with their bias and ReLU (``_FusedConv2D``,
``_FusedMatMul``), which XLA has no kernel for. Batch 8, 8x8x1 inputs, 4 classes, float32;
inputs are NumPy arrays with a fixed seed; 2 steps of one epoch. Then a ``tf.function`` of
100 string ops formats the loss: a larger graph than the train step, with nothing clustered.

Usage (normally via ``make_tf_samples.py``, which sets TF_XLA_FLAGS, XLA_FLAGS,
TF_DUMP_GRAPH_PREFIX and TF_CPP_VMODULE):
    python tf_keras.py
"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.standard_normal((16, 8, 8, 1)).astype(np.float32)
y = rng.integers(0, 4, size=(16,)).astype(np.int32)

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([
    tf.keras.Input((8, 8, 1)),
    tf.keras.layers.Conv2D(4, 3, activation="relu"),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(4),
])
model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              jit_compile=False)
history = model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)


@tf.function
def describe(loss):
    """A log line built with string ops, which XLA cannot compile: a graph larger than the
    train step that TF looks at but clusters nothing of (its one compilable op, the Add,
    is below the minimum cluster size)."""
    text = tf.strings.as_string(loss, precision=4)
    for i in range(100):
        text = tf.strings.regex_replace(text, f"^{i % 10}", f"{i % 10}")
    return text, tf.strings.length(text) + 1


line, width = describe(tf.constant(history.history["loss"][-1]))
print("loss", line.numpy().decode(), int(width))
