"""The reference's initialisers."""

import keras


def truncated_normal(stddev=0.02):
    """BERT's `create_initializer`: truncated normal, stddev 0.02, for embeddings and encoder kernels."""
    return keras.initializers.TruncatedNormal(stddev=stddev)
