"""Helpers the TensorFlow benchmarks share (`bench_utils` holds those the peer's interpreter shares too)."""

import time


def cpu_threads():
    """The threads TensorFlow computes with: its intra-op setting, else the CPUs this process may run on."""
    import tensorflow as tf

    from electra_tf.training.distribution import usable_cpus

    return tf.config.threading.get_intra_op_parallelism_threads() or usable_cpus()


def matmul_peak(dtype, size=2048, repeats=20):
    """Dense matmul FLOP/s that TensorFlow reaches on this machine for `dtype` (best of 3 after one warm-up)."""
    import tensorflow as tf

    a = tf.random.normal((size, size), dtype=tf.float32)
    a = tf.cast(a, dtype)

    @tf.function
    def chain(x):
        for _ in range(repeats):
            x = tf.matmul(x, a) * tf.cast(1e-3, dtype)
        return x

    chain(a).numpy()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        chain(a).numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 * repeats / best


def batch_end_clock():
    import keras

    class BatchEndClock(keras.callbacks.Callback):
        """The time at the end of every training batch (Keras runs each step synchronously before calling it)."""

        def __init__(self):
            super().__init__()
            self.times = []

        def on_train_batch_end(self, batch, logs=None):
            self.times.append(time.perf_counter())

    return BatchEndClock()
