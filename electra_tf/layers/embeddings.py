"""The embedding block shared by the generator and the discriminator."""

import keras
import keras_hub

from electra_tf.layers.dropout import ElectraDropout
from electra_tf.layers.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraEmbeddings(keras.layers.Layer):
    """word [V, E] + position [P, E] + token type [T, E], summed, then LayerNorm and dropout; with
    `type_vocab_size=0` there is no token-type table (`token_type_embeddings` is None) and `segment_ids` are ignored.

    ELECTRA shares this whole block (all three tables and the LayerNorm) between generator and discriminator: one
    instance is created by the pre-training model and passed to both networks. The word table is a keras-hub
    `ReversibleEmbedding` so the generator's output layer can reuse it transposed.
    """

    def __init__(
        self,
        vocab_size,
        embedding_size,
        max_position_embeddings=512,
        type_vocab_size=2,
        dropout=0.1,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

        self.word_embeddings = keras_hub.layers.ReversibleEmbedding(
            vocab_size,
            embedding_size,
            tie_weights=True,
            embeddings_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="word_embeddings",
        )
        self.position_embeddings = keras_hub.layers.PositionEmbedding(
            sequence_length=max_position_embeddings,
            initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="position_embeddings",
        )
        self.token_type_embeddings = (
            keras.layers.Embedding(
                type_vocab_size,
                embedding_size,
                embeddings_initializer=truncated_normal(initializer_range),
                dtype=self.dtype_policy,
                name="token_type_embeddings",
            )
            if type_vocab_size
            else None
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = ElectraDropout(dropout, dtype=self.dtype_policy, name="dropout")

    @classmethod
    def for_architecture(cls, architecture, dtype=None, name="embeddings"):
        """The embedding block of `architecture` (an `ElectraArchitecture`, or an `ElectraConfig`), named `embeddings`
        as the reference's `electra/embeddings` scope: what a backbone owns and what the pre-training model shares."""
        return cls(
            vocab_size=architecture.vocab_size,
            embedding_size=architecture.embedding_size,
            max_position_embeddings=architecture.max_position_embeddings,
            type_vocab_size=architecture.type_vocab_size,
            dropout=architecture.hidden_dropout,
            layer_norm_epsilon=architecture.layer_norm_epsilon,
            initializer_range=architecture.initializer_range,
            dtype=dtype,
            name=name,
        )

    def build(self, input_shape=None):
        feature_shape = (None, None, self.embedding_size)
        self.word_embeddings.build()
        self.position_embeddings.build(feature_shape)
        if self.token_type_embeddings is not None:
            self.token_type_embeddings.build()
        self.layer_norm.build(feature_shape)
        self.built = True

    def call(self, input_ids, segment_ids, training=None, word_vectors=None):
        """`word_vectors` [batch, seq, E], when given, replace the word-table lookup of `input_ids` (pre-training
        variants that modify the looked-up vectors: gradient-disentangled sharing, adversarial training)."""
        word = self.word_embeddings(input_ids) if word_vectors is None else word_vectors
        embedded = word + self.position_embeddings(word)
        if self.token_type_embeddings is not None:
            embedded = embedded + self.token_type_embeddings(segment_ids)
        return self.dropout_layer(self.layer_norm(embedded), training=training)

    def compute_output_shape(self, input_ids_shape, segment_ids_shape=None):
        return tuple(input_ids_shape) + (self.embedding_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size,
            embedding_size=self.embedding_size,
            max_position_embeddings=self.max_position_embeddings,
            type_vocab_size=self.type_vocab_size,
            dropout=self.dropout,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
        )
        return config
