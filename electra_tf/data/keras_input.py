"""tf.data options for the datasets this project hands to Keras' `fit`."""

import tensorflow as tf


def keras_input_options(deterministic=True):
    """Options with tf.data's autotuning model turned off.

    With autotuning on, TensorFlow 2.21 often does not wake the autotuning thread when Keras deletes the iterator at
    the end of `fit`, so `fit` returns only once that thread's current optimisation period has run out (the periods
    start at 10 ms and double up to 60 s): measured 2-8 s of idle waiting after 3-13 s of pre-training steps, and
    6.6 s after a 70 s fine-tuning run (docs/PERFORMANCE.md). With it off, `tf.data.AUTOTUNE` parallelism falls back
    to the number of cores and prefetch buffers to tf.data's own buffer tuner; reading pre-training records stays at
    over 100k examples/s on two cores, far above what training consumes.
    """
    options = tf.data.Options()
    options.deterministic = deterministic
    options.autotune.enabled = False
    return options
