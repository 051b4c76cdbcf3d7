"""ELECTRA models: one `ElectraBackbone` under the discriminator, the generator (or Electric's two-tower cloze
generator, two of them), the networks of pre-training and the pre-training model; and the one way to read a
checkpoint of any format into one of them (`load_checkpoint`) and to write one (`save_checkpoint`)."""

from electra_tf.models.backbone import ElectraBackbone, backbone_inputs, clone_backbone
from electra_tf.models.checkpoint_loading import LoadedModel, load_checkpoint, save_checkpoint
from electra_tf.models.cloze_generator import TwoTowerClozeGenerator
from electra_tf.models.discriminator import ElectraDiscriminator, build_discriminator
from electra_tf.models.generator import ElectraGenerator, build_generator
from electra_tf.models.pretraining_model import ElectraPretrainingModel
from electra_tf.models.pretraining_networks import PretrainingNetworks, build_pretraining_networks

__all__ = [
    "ElectraBackbone",
    "ElectraDiscriminator",
    "ElectraGenerator",
    "ElectraPretrainingModel",
    "LoadedModel",
    "PretrainingNetworks",
    "TwoTowerClozeGenerator",
    "backbone_inputs",
    "build_discriminator",
    "build_generator",
    "build_pretraining_networks",
    "clone_backbone",
    "load_checkpoint",
    "save_checkpoint",
]
