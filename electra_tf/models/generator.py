"""The ELECTRA generator: a small masked language model whose samples corrupt the discriminator's input."""

import keras

from electra_tf.config import ElectraConfig, as_config
from electra_tf.layers import ElectraMaskedLMHead
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.electra_task import ElectraTask


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraGenerator(ElectraTask):
    """`backbone` -> `lm_head` (the reference's `generator_predictions`, output layer tied to the backbone's word
    table): float logits [batch, predictions, vocab] at `mask_positions` only (the vocabulary projection of unmasked
    tokens is never computed).

    Inputs are the backbone's plus `mask_positions` [batch, predictions] (int). The pre-training model builds one on a
    narrower backbone (the sizing rule of `ElectraConfig.generator_architecture()`) that shares the discriminator's
    embedding block. See `ElectraTask` for `electra_config`.
    """

    def __init__(self, backbone, preprocessor=None, electra_config=None, **kwargs):
        self.lm_head = ElectraMaskedLMHead(
            backbone.token_embedding,
            backbone.layer_norm_epsilon,
            backbone.initializer_range,
            backbone.hidden_activation,
            dtype=backbone.dtype_policy,
            name="generator_predictions",
        )
        kwargs.setdefault("name", "generator")
        super().__init__(backbone, preprocessor, electra_config, **kwargs)

    def task_graph(self, backbone):
        inputs = {**backbone.input, "mask_positions": keras.Input(shape=(None,), dtype="int32", name="mask_positions")}
        sequence_output = backbone({name: inputs[name] for name in backbone.input})
        return inputs, self.lm_head(sequence_output, inputs["mask_positions"])

    @staticmethod
    def default_electra_config(backbone):
        # A lone generator's own sizes, as a config whose sizing rule keeps them.
        return ElectraConfig(**backbone.architecture(), generator_hidden_fraction=1.0)


def build_generator(config, dtype=None):
    """A new stand-alone generator (own backbone and embeddings) sized from the discriminator's `config` by the
    reference's rule."""
    config = as_config(config)
    return ElectraGenerator(
        ElectraBackbone(**config.generator_architecture().architecture(), dtype=dtype), electra_config=config
    )
