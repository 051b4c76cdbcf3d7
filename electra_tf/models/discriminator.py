"""The ELECTRA discriminator: a backbone with the replaced-token-detection head."""

import keras
import keras_hub

from electra_tf.config import ElectraConfig, as_config
from electra_tf.layers import DiscriminatorHead
from electra_tf.models.backbone import ElectraBackbone


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraDiscriminator(keras_hub.models.Task):
    """`backbone` -> `replaced_token_head` (the reference's `discriminator_predictions`: dense(H, gelu) -> dense(1)):
    one float logit per token, [batch, length], positive for "replaced".

    Inputs are the backbone's (`token_ids`, `segment_ids`, `padding_mask`). The pre-training model builds one on a
    backbone whose embedding block it shares with the generator; fine-tuning starts from `backbone`.

    `electra_config` is the `ElectraConfig` the model was built from (with the pre-training settings and the sizing
    rule that conversions to other formats need), serialised with the model; by default the backbone's architecture.
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = None

    def __init__(self, backbone, preprocessor=None, electra_config=None, **kwargs):
        # keras-hub's order: layers as attributes first, then the functional graph.
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.electra_config = None if electra_config is None else as_config(electra_config)
        self.replaced_token_head = DiscriminatorHead(
            backbone.hidden_size, backbone.initializer_range, backbone.hidden_activation, dtype=backbone.dtype_policy,
            name="discriminator_predictions")
        inputs = backbone.input
        outputs = self.replaced_token_head(backbone(inputs))
        kwargs.setdefault("name", "discriminator")
        # A sub-model of pre-training, scoring or export: nothing to compile by default.
        kwargs.setdefault("compile", False)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        if self.electra_config is None:
            self.electra_config = ElectraConfig(**backbone.architecture())

    def get_config(self):
        config = super().get_config()
        config["electra_config"] = self.electra_config.to_dict()
        return config


def build_discriminator(config, dtype=None):
    """A new discriminator (own backbone and embeddings) with the architecture of `config` (an `ElectraConfig`)."""
    config = as_config(config)
    return ElectraDiscriminator(ElectraBackbone(**config.architecture(), dtype=dtype), electra_config=config)
