"""The ELECTRA discriminator: the pre-trained model that fine-tuning starts from."""

import keras

from electra_tf.layers import DiscriminatorHead
from electra_tf.models.network import ElectraNetwork, as_config


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDiscriminator(ElectraNetwork):
    """Embeddings + encoder + replaced-token-detection head; `call` returns one logit per token, [batch, seq].

    Args:
        config: `ElectraConfig` (or its dict) with the discriminator's sizes.
        embeddings: an `ElectraEmbeddings` to share (the pre-training model passes the generator's); by default the
            discriminator owns its own.
        word_embedding_delta: see `ElectraNetwork` (gradient-disentangled sharing during pre-training only; the
            pre-training model saves a plain discriminator with the merged table).
    """

    def __init__(self, config, embeddings=None, word_embedding_delta=None, **kwargs):
        kwargs.setdefault("name", "discriminator")
        config = as_config(config)
        super().__init__(config, config, embeddings, word_embedding_delta=word_embedding_delta, **kwargs)
        self.head = DiscriminatorHead(config.hidden_size, config.initializer_range, dtype=self.dtype_policy,
                                      name="discriminator_predictions")
        self.build()

    def _build_head(self):
        self.head.build()

    def call(self, inputs, training=None):
        return self.head(self.encode(inputs, training=training))
