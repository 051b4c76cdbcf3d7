"""Output heads: the generator's masked-LM head and the discriminator's replaced-token-detection head."""

import keras
import keras_hub
from keras import ops

from electra_tf.layers.activations import gelu
from electra_tf.layers.initializers import truncated_normal


def generator_head(word_embeddings, layer_norm_epsilon=1e-12, initializer_range=0.02, dtype=None,
                   name="generator_predictions"):
    """The generator's MLM head, computed only at the masked positions.

    gather -> dense(E, gelu) -> LayerNorm -> h @ word_embeddings^T + output_bias[V]: keras-hub's `MaskedLMHead` with the
    output layer tied to the shared word table.
    """
    return keras_hub.layers.MaskedLMHead(
        token_embedding=word_embeddings, intermediate_activation=gelu,
        layer_norm_epsilon=layer_norm_epsilon, kernel_initializer=truncated_normal(initializer_range),
        dtype=dtype, name=name)


@keras.saving.register_keras_serializable(package="electra_tf")
class DiscriminatorHead(keras.layers.Layer):
    """dense(H, gelu) -> dense(1): one logit per token, positive for "replaced"."""

    def __init__(self, hidden_size, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range
        self.dense = keras.layers.Dense(
            hidden_size, activation=gelu, kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy, name="dense")
        # Glorot-uniform, as tf.layers.dense's default in the reference.
        self.dense_prediction = keras.layers.Dense(1, dtype=self.dtype_policy, name="dense_prediction")

    def build(self, sequence_shape=None):
        self.dense.build((None, None, self.hidden_size))
        self.dense_prediction.build((None, None, self.hidden_size))
        self.built = True

    def call(self, sequence_output):
        return ops.squeeze(self.dense_prediction(self.dense(sequence_output)), axis=-1)

    def compute_output_shape(self, sequence_shape):
        return tuple(sequence_shape[:-1])

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, initializer_range=self.initializer_range)
        return config
