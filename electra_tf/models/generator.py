"""The ELECTRA generator: a small masked language model whose samples corrupt the discriminator's input."""

import keras

from electra_tf.layers import generator_head
from electra_tf.models.network import ElectraNetwork, as_config


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraGenerator(ElectraNetwork):
    """Embeddings + a narrower encoder + MLM head tied to the word table.

    `call` takes the usual inputs plus `masked_lm_positions` [batch, N] and returns float logits [batch, N, vocab] at
    those positions only (the head never computes the vocabulary projection of unmasked tokens).

    Args:
        config: `ElectraConfig` (or its dict) of the *discriminator*; the generator's sizes follow from
            `config.generator_config()` (the reference's sizing rule).
        embeddings: an `ElectraEmbeddings` to share (the pre-training model passes the discriminator's).
        encoder: an encoder to share (`tie_all_weights`: the generator is the discriminator's encoder with an MLM head).
    """

    def __init__(self, config, embeddings=None, encoder=None, **kwargs):
        kwargs.setdefault("name", "generator")
        config = as_config(config)
        self.generator_sizes = config.generator_config()
        super().__init__(config, self.generator_sizes, embeddings, encoder=encoder, **kwargs)
        self.lm_head = generator_head(self.embeddings.word_embeddings, config.layer_norm_epsilon,
                                      config.initializer_range, dtype=self.dtype_policy)
        self.build()

    def _build_head(self):
        self.lm_head.build((None, None, self.generator_sizes.hidden_size))

    def call(self, inputs, training=None):
        return self.lm_head(self.encode(inputs, training=training), mask_positions=inputs["masked_lm_positions"])
