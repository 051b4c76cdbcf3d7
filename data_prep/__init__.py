"""Vocabulary and pre-training data builders."""

# First: importing electra_tf quiets TensorFlow before anything here loads it (electra_tf.native_logs).
import electra_tf  # noqa: F401
