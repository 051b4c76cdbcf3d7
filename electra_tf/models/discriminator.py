"""The ELECTRA discriminator: a backbone with the replaced-token-detection head."""

import keras

from electra_tf.config import as_config
from electra_tf.layers import DiscriminatorHead
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.electra_task import ElectraTask


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDiscriminator(ElectraTask):
    """`backbone` -> `replaced_token_head` (the reference's `discriminator_predictions`: dense(H, gelu) -> dense(1)):
    one float logit per token, [batch, length], positive for "replaced".

    Inputs are the backbone's (`token_ids`, `segment_ids`, `padding_mask`). The pre-training model builds one on a
    backbone whose embedding block it shares with the generator; fine-tuning starts from `backbone`. See
    `ElectraTask` for `electra_config`.
    """

    def __init__(self, backbone, preprocessor=None, electra_config=None, **kwargs):
        self.replaced_token_head = DiscriminatorHead(
            backbone.hidden_size,
            backbone.initializer_range,
            backbone.hidden_activation,
            dtype=backbone.dtype_policy,
            name="discriminator_predictions",
        )
        kwargs.setdefault("name", "discriminator")
        super().__init__(backbone, preprocessor, electra_config, **kwargs)

    def task_graph(self, backbone):
        return backbone.input, self.replaced_token_head(backbone(backbone.input))


def build_discriminator(config, dtype=None):
    """A new discriminator (own backbone and embeddings) with the architecture of `config` (an `ElectraConfig`)."""
    config = as_config(config)
    return ElectraDiscriminator(ElectraBackbone(**config.architecture(), dtype=dtype), electra_config=config)
