"""What the generator and discriminator have in common: a config, the (possibly shared) embeddings and an encoder."""

import keras
from keras import ops

from electra_tf.config import ElectraConfig
from electra_tf.layers import ElectraEmbeddings, ElectraEncoder


def as_config(config):
    """An `ElectraConfig` from a config or its dict (as found in `get_config()`)."""
    return config if isinstance(config, ElectraConfig) else ElectraConfig.from_dict(dict(config))


def make_embeddings(config, dtype=None):
    """The embedding block for `config`, named `embeddings` as the reference's `electra/embeddings`."""
    return ElectraEmbeddings(
        vocab_size=config.vocab_size, embedding_size=config.embedding_size,
        max_position_embeddings=config.max_position_embeddings, type_vocab_size=config.type_vocab_size,
        dropout=config.hidden_dropout, layer_norm_epsilon=config.layer_norm_epsilon,
        initializer_range=config.initializer_range, dtype=dtype, name="embeddings")


def make_encoder(sizes, dtype=None):
    """The encoder stack with the sizes of `sizes` (the discriminator's config or `generator_config()`)."""
    return ElectraEncoder(
        embedding_size=sizes.embedding_size, hidden_size=sizes.hidden_size, num_layers=sizes.num_layers,
        num_heads=sizes.num_heads, intermediate_size=sizes.intermediate_size, hidden_dropout=sizes.hidden_dropout,
        attention_dropout=sizes.attention_dropout, layer_norm_epsilon=sizes.layer_norm_epsilon,
        initializer_range=sizes.initializer_range, dtype=dtype, name="encoder")


class ElectraNetwork(keras.Model):
    """Base of the generator and the discriminator: embeddings (owned, or shared when passed in) + encoder.

    Inputs are dicts with int tensors `input_ids`, `input_mask` (1 for real tokens) and `segment_ids`, [batch, seq].
    """

    def __init__(self, config, sizes, embeddings=None, **kwargs):
        super().__init__(**kwargs)
        self.electra_config = config
        self.embeddings = embeddings if embeddings is not None else make_embeddings(config, dtype=self.dtype_policy)
        self.encoder = make_encoder(sizes, dtype=self.dtype_policy)

    def build(self, input_shape=None):
        if not self.embeddings.built:
            self.embeddings.build()
        self.encoder.build()
        self._build_head()
        self.built = True

    def _build_head(self):
        raise NotImplementedError

    def encode(self, inputs, training=None):
        """The final hidden states, [batch, seq, hidden] (ELECTRA has no pooler: use `[:, 0]` for [CLS])."""
        embedded = self.embeddings(inputs["input_ids"], inputs["segment_ids"], training=training)
        padding_mask = ops.cast(inputs["input_mask"], "bool")
        return self.encoder(embedded, padding_mask=padding_mask, training=training)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "config": self.electra_config.to_dict()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(config=config.pop("config"), **config)
