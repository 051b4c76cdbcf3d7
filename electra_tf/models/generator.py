"""The ELECTRA generator: a small masked language model whose samples corrupt the discriminator's input."""

import keras
import keras_hub

from electra_tf.config import ElectraConfig, as_config
from electra_tf.layers import ElectraMaskedLMHead
from electra_tf.models.backbone import ElectraBackbone


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraGenerator(keras_hub.models.Task):
    """`backbone` -> `lm_head` (the reference's `generator_predictions`, output layer tied to the backbone's word
    table): float logits [batch, predictions, vocab] at `mask_positions` only (the vocabulary projection of unmasked
    tokens is never computed).

    Inputs are the backbone's plus `mask_positions` [batch, predictions] (int). The pre-training model builds one on a
    narrower backbone (the sizing rule of `ElectraConfig.generator_architecture()`) that shares the discriminator's
    embedding block.

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
        self.lm_head = ElectraMaskedLMHead(
            backbone.token_embedding, backbone.layer_norm_epsilon, backbone.initializer_range,
            backbone.hidden_activation, dtype=backbone.dtype_policy, name="generator_predictions")
        inputs = {**backbone.input, "mask_positions": keras.Input(shape=(None,), dtype="int32", name="mask_positions")}
        sequence_output = backbone({name: inputs[name] for name in backbone.input})
        outputs = self.lm_head(sequence_output, inputs["mask_positions"])
        kwargs.setdefault("name", "generator")
        kwargs.setdefault("compile", False)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        if self.electra_config is None:
            self.electra_config = ElectraConfig(**backbone.architecture(), generator_hidden_fraction=1.0)

    def get_config(self):
        config = super().get_config()
        config["electra_config"] = self.electra_config.to_dict()
        return config


def build_generator(config, dtype=None):
    """A new stand-alone generator (own backbone and embeddings) sized from the discriminator's `config` by the
    reference's rule."""
    config = as_config(config)
    return ElectraGenerator(ElectraBackbone(**config.generator_architecture(), dtype=dtype), electra_config=config)
