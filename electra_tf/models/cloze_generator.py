"""Electric's generator: a two-tower cloze model giving p(x_t | every other token) at every position in one pass."""

import keras
import tensorflow as tf

from electra_tf.architecture import ElectraArchitecture
from electra_tf.layers import ElectraEmbeddings, ElectraMaskedLMHead
from electra_tf.models.backbone import ElectraBackbone, backbone_inputs

TOWER_NAMES = ("generator_ltr", "generator_rtl")
CLOZE_HEAD_NAME = "cloze_predictions"


@keras.saving.register_keras_serializable(package="electra_tf")
class TwoTowerClozeGenerator(keras.layers.Layer):
    """A left-to-right and a right-to-left `ElectraBackbone` (causal attention) on one embedding block, and the
    `cloze_head` on their states shifted by one position and concatenated: position t reads the left-to-right state
    of t - 1 (the tokens before t) and the right-to-left state of t + 1 (the tokens after it), so its logits depend on
    every token but x_t. The shifts wrap around, as the reference's: position 0 and the last position read the other
    end of the sequence (they hold [CLS] or padding, which the cloze loss leaves out).

    Names are the reference's (Clark et al. 2020, Electric): towers `generator_ltr` and `generator_rtl`, head
    `cloze_predictions` (`ElectraMaskedLMHead` over the shared word table, input 2 x the towers' width).

    Call with the backbone's inputs (either naming, see `backbone_inputs`): the *unmasked* tokens. Returns float
    logits [batch, length, vocab] in the compute dtype.

    Args:
        architecture: the towers' `ElectraArchitecture` fields as a dict (the generator's sizing rule).
        embeddings: an `ElectraEmbeddings` to share (the discriminator's); by default a new one (not in `get_config`).
    """

    def __init__(self, architecture, embeddings=None, **kwargs):
        kwargs.setdefault("name", "two_tower_generator")
        super().__init__(**kwargs)
        self.architecture = dict(architecture)
        if embeddings is None:
            embeddings = ElectraEmbeddings.for_architecture(
                ElectraArchitecture(**self.architecture), dtype=self.dtype_policy
            )
        self.embeddings = embeddings
        self.ltr_backbone, self.rtl_backbone = (
            ElectraBackbone(**self.architecture, embeddings=embeddings, dtype=self.dtype_policy, name=name)
            for name in TOWER_NAMES
        )
        self.cloze_head = ElectraMaskedLMHead(
            embeddings.word_embeddings,
            self.architecture["layer_norm_epsilon"],
            self.architecture["initializer_range"],
            self.architecture["hidden_activation"],
            dtype=self.dtype_policy,
            name=CLOZE_HEAD_NAME,
        )
        self.cloze_head.build((None, None, 2 * self.architecture["hidden_size"]))
        self.built = True

    @property
    def backbones(self):
        return (self.ltr_backbone, self.rtl_backbone)

    def call(self, inputs, training=None):
        inputs = backbone_inputs(inputs)
        ltr = self.ltr_backbone.encode(inputs, training=training, direction="left_to_right")
        rtl = self.rtl_backbone.encode(inputs, training=training, direction="right_to_left")
        context = tf.concat([tf.roll(ltr, shift=1, axis=1), tf.roll(rtl, shift=-1, axis=1)], axis=-1)
        shape = tf.shape(inputs["token_ids"])
        every_position = tf.tile(tf.range(shape[1])[None], [shape[0], 1])
        return self.cloze_head(context, every_position)

    def get_config(self):
        return {**super().get_config(), "architecture": self.architecture}
