"""ELECTRA models: one `ElectraBackbone` under the discriminator, the generator (or Electric's two-tower cloze
generator, two of them) and the pre-training model."""

from electra_tf.models.backbone import ElectraBackbone, backbone_inputs, clone_backbone
from electra_tf.models.cloze_generator import TwoTowerClozeGenerator
from electra_tf.models.discriminator import ElectraDiscriminator, build_discriminator
from electra_tf.models.generator import ElectraGenerator, build_generator
from electra_tf.models.pretraining_model import ElectraPretrainingModel

__all__ = [
    "ElectraBackbone",
    "ElectraDiscriminator",
    "ElectraGenerator",
    "ElectraPretrainingModel",
    "TwoTowerClozeGenerator",
    "backbone_inputs",
    "build_discriminator",
    "build_generator",
    "clone_backbone",
]
