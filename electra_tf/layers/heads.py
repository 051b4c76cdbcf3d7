"""Output heads: the generator's masked-LM head and the discriminator's replaced-token-detection head."""

import keras
import tensorflow as tf
from keras import ops

from electra_tf.layers.activations import get_activation
from electra_tf.layers.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraMaskedLMHead(keras.layers.Layer):
    """The generator's MLM head, computed only at the masked positions (the reference's `generator_predictions`).

    gather -> `dense` (E, exact GELU) -> `layer_norm` -> h @ word_table^T + `output_bias` [V]. The output projection is
    the shared word table (`word_embeddings`, a keras-hub `ReversibleEmbedding` called with `reverse=True`), so the
    head owns only the dense layer, the LayerNorm and the bias. Keras computes the dense layer and the vocabulary
    projection of the [batch, predictions, E] rows as 2-D GEMMs (see `ElectraTransformerLayer`).

    Call with `sequence_output` [batch, length, hidden] and `mask_positions` [batch, predictions] (int); returns logits
    [batch, predictions, vocab] in the compute dtype.
    """

    def __init__(
        self, word_embeddings, layer_norm_epsilon=1e-12, initializer_range=0.02, hidden_activation="gelu", **kwargs
    ):
        super().__init__(**kwargs)
        self.word_embeddings = word_embeddings
        self.hidden_activation = hidden_activation
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.initializer_range = float(initializer_range)
        self.embedding_size = int(word_embeddings.output_dim)
        self.vocab_size = int(word_embeddings.input_dim)
        self.dense = keras.layers.Dense(
            self.embedding_size,
            activation=get_activation(hidden_activation),
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )

    def build(self, sequence_output_shape=None, mask_positions_shape=None):
        hidden_size = sequence_output_shape[-1] if sequence_output_shape is not None else self.embedding_size
        self.dense.build((None, hidden_size))
        self.layer_norm.build((None, self.embedding_size))
        self.output_bias = self.add_weight(name="output_bias", shape=(self.vocab_size,), initializer="zeros")
        self.built = True

    def call(self, sequence_output, mask_positions):
        gathered = tf.gather(sequence_output, tf.cast(mask_positions, tf.int32), batch_dims=1)
        logits = self.word_embeddings(self.layer_norm(self.dense(gathered)), reverse=True)
        return logits + ops.cast(self.output_bias, logits.dtype)

    def compute_output_shape(self, sequence_output_shape, mask_positions_shape):
        return tuple(mask_positions_shape) + (self.vocab_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            word_embeddings=keras.layers.serialize(self.word_embeddings),
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
            hidden_activation=self.hidden_activation,
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["word_embeddings"] = keras.layers.deserialize(config["word_embeddings"])
        return cls(**config)


@keras.saving.register_keras_serializable(package="electra_tf")
class DiscriminatorHead(keras.layers.Layer):
    """dense(H, gelu) -> dense(1): one logit per token, positive for "replaced"."""

    def __init__(self, hidden_size, initializer_range=0.02, hidden_activation="gelu", **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range
        self.hidden_activation = hidden_activation
        self.dense = keras.layers.Dense(
            hidden_size,
            activation=get_activation(hidden_activation),
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )
        # Glorot-uniform, as tf.layers.dense's default in the reference.
        self.dense_prediction = keras.layers.Dense(1, dtype=self.dtype_policy, name="dense_prediction")

    def build(self, sequence_shape=None):
        self.dense.build((None, self.hidden_size))
        self.dense_prediction.build((None, self.hidden_size))
        self.built = True

    def call(self, sequence_output):
        return tf.squeeze(self.dense_prediction(self.dense(sequence_output)), -1)

    def compute_output_shape(self, sequence_shape):
        return tuple(sequence_shape[:-1])

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_size=self.hidden_size,
            initializer_range=self.initializer_range,
            hidden_activation=self.hidden_activation,
        )
        return config
