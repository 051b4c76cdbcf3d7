"""What the generator and discriminator have in common: a config, the (possibly shared) embeddings and an encoder."""

import keras
from keras import ops

from electra_tf.config import ElectraConfig
from electra_tf.layers import ElectraEmbeddings, ElectraEncoder


def as_config(config):
    """An `ElectraConfig` from a config or its dict (as found in `get_config()`)."""
    return config if isinstance(config, ElectraConfig) else ElectraConfig.from_dict(dict(config))


def make_embeddings(config, dtype=None, name="embeddings"):
    """The embedding block for `config`, named `embeddings` as the reference's `electra/embeddings`."""
    return ElectraEmbeddings(
        vocab_size=config.vocab_size, embedding_size=config.embedding_size,
        max_position_embeddings=config.max_position_embeddings, type_vocab_size=config.type_vocab_size,
        dropout=config.hidden_dropout, layer_norm_epsilon=config.layer_norm_epsilon,
        initializer_range=config.initializer_range, dtype=dtype, name=name)


def make_encoder(sizes, dtype=None):
    """The encoder stack with the sizes of `sizes` (the discriminator's config or `generator_config()`)."""
    return ElectraEncoder(
        embedding_size=sizes.embedding_size, hidden_size=sizes.hidden_size, num_layers=sizes.num_layers,
        num_heads=sizes.num_heads, intermediate_size=sizes.intermediate_size, hidden_dropout=sizes.hidden_dropout,
        attention_dropout=sizes.attention_dropout, layer_norm_epsilon=sizes.layer_norm_epsilon,
        initializer_range=sizes.initializer_range, dtype=dtype, name="encoder")


class ElectraNetwork(keras.Model):
    """Base of the generator and the discriminator: embeddings (owned, or shared when passed in) + encoder.

    Inputs are dicts with int tensors `input_ids`, `input_mask` (1 for real tokens) and `segment_ids`, [batch, seq];
    pre-training may add `word_vector_offsets` [batch, seq, E], added to the looked-up word vectors.

    Args:
        config: the `ElectraConfig`. sizes: the config whose sizes the encoder takes.
        embeddings: an `ElectraEmbeddings` to share; by default the network owns one.
        encoder: an `ElectraEncoder` to share (a generator tied to the discriminator); by default the network owns one.
        word_embedding_delta: an embedding layer added to the stop-gradient word vectors of the (shared) table:
            DeBERTaV3's gradient-disentangled embedding sharing.
    """

    def __init__(self, config, sizes, embeddings=None, encoder=None, word_embedding_delta=None, **kwargs):
        super().__init__(**kwargs)
        self.electra_config = config
        self.embeddings = embeddings if embeddings is not None else make_embeddings(config, dtype=self.dtype_policy)
        self.encoder = encoder if encoder is not None else make_encoder(sizes, dtype=self.dtype_policy)
        self.word_embedding_delta = word_embedding_delta

    def build(self, input_shape=None):
        if not self.embeddings.built:
            self.embeddings.build()
        if not self.encoder.built:
            self.encoder.build()
        if self.word_embedding_delta is not None and not self.word_embedding_delta.built:
            self.word_embedding_delta.build()
        self._build_head()
        self.built = True

    def _build_head(self):
        raise NotImplementedError

    def encode(self, inputs, training=None):
        """The final hidden states, [batch, seq, hidden] (ELECTRA has no pooler: use `[:, 0]` for [CLS])."""
        embedded = self.embeddings(inputs["input_ids"], inputs["segment_ids"], training=training,
                                   word_vectors=self._word_vectors(inputs))
        padding_mask = ops.cast(inputs["input_mask"], "bool")
        return self.encoder(embedded, padding_mask=padding_mask, training=training)

    def _word_vectors(self, inputs):
        """The word vectors when a pre-training variant modifies them, else None (the embeddings look them up)."""
        offsets = inputs.get("word_vector_offsets")
        if self.word_embedding_delta is None and offsets is None:
            return None
        input_ids = inputs["input_ids"]
        vectors = self.embeddings.word_embeddings(input_ids)
        if self.word_embedding_delta is not None:
            vectors = ops.stop_gradient(vectors) + self.word_embedding_delta(input_ids)
        if offsets is not None:
            vectors = vectors + ops.cast(offsets, vectors.dtype)
        return vectors

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "config": self.electra_config.to_dict()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(config=config.pop("config"), **config)
