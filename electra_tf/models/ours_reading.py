"""Reading the project's own format (`checkpoints.ours`: its presets and pre-training runs) into models, and building
the fresh model of a kind that `load_checkpoint` fills from the other formats: the part of the formats that needs the
model classes. The ours format's `FORMAT` is this module's, with `checkpoints.ours`'s detector and writer."""

import dataclasses
import os

import keras
import keras_hub
import tensorflow as tf

from electra_tf.checkpoints import tokenizer_files
from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, PRETRAINER, collect_weights, encoder_slots
from electra_tf.checkpoints.ours import (
    BACKBONE,
    CONFIG_NAME,
    DESCRIPTION,
    RUN_CONFIG_NAME,
    detects,
    preset_kind,
    run_prefix,
    run_tokenizer,
    write,
)
from electra_tf.checkpoints.source import OURS, CheckpointFormat, Source
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.discriminator import ElectraDiscriminator, build_discriminator
from electra_tf.models.electra_task import ElectraTask
from electra_tf.models.generator import ElectraGenerator, build_generator
from electra_tf.models.pretraining_model import ElectraPretrainingModel


def build_model(kind, config):
    """A freshly initialised (built) model of `kind` for `config`."""
    if kind == DISCRIMINATOR:
        return build_discriminator(config)
    if kind == GENERATOR:
        return build_generator(config)
    return ElectraPretrainingModel(config, max_seq_length=min(128, config.max_position_embeddings))


def model_part(pretrainer, kind, path):
    """The `kind` part of a pre-training model of ours that has no reference layout (e.g. objective=mlm): the model
    itself, its discriminator-sized network as an `ElectraDiscriminator`, or, for objectives whose network has a
    masked-LM head (mlm), that network with its head as an `ElectraGenerator` (the model's own masked LM)."""
    if kind == PRETRAINER:
        return pretrainer
    if kind == DISCRIMINATOR:
        return pretrainer.pretrained_discriminator()
    config = pretrainer.electra_config
    if pretrainer.model_mlm_head is None:
        raise CheckpointError(
            f"{path} was pre-trained with objective={config.objective} and generator variants that "
            "have no reference layout; of such runs only a masked LM (objective=mlm) loads as a "
            "generator: load kind=discriminator or kind=pretrainer"
        )
    # Its sizes are the discriminator's: a config whose sizing rule keeps them.
    masked_lm = ElectraGenerator(
        ElectraBackbone(**config.architecture(), dtype="float32"),
        electra_config=dataclasses.replace(config, generator_hidden_fraction=1.0, generator_layers_fraction=1.0),
    )
    masked_lm.backbone.set_weights(pretrainer.discriminator.backbone.get_weights())
    masked_lm.lm_head.set_weights(pretrainer.model_mlm_head.get_weights())
    return masked_lm


# ---------------------------------------------------------------------------------------------- reading
def load_preset(directory):
    """The `ElectraDiscriminator`, `ElectraGenerator` or `ElectraBackbone` of a preset directory, as keras-hub loads
    it, under the caller's dtype policy."""
    kind = preset_kind(directory)
    # Under the caller's dtype policy (e.g. mixed_bfloat16 fine-tuning), not the one recorded in the preset.
    dtype = keras.config.dtype_policy().name
    try:
        if kind == BACKBONE:
            # keras-hub's base class takes the class from config.json.
            return keras_hub.models.Backbone.from_preset(directory, dtype=dtype)
        model_class = ElectraDiscriminator if kind == DISCRIMINATOR else ElectraGenerator
        # keras-hub's own Task.from_preset: the models' from_preset reads every format through load_checkpoint, which
        # comes here for ours.
        return super(ElectraTask, model_class).from_preset(directory, dtype=dtype)
    except (ValueError, KeyError, TypeError, OSError) as error:
        raise CheckpointError(
            f"the weights in {directory} do not match its {CONFIG_NAME}: "
            f"{str(error).splitlines()[0]}; write the directory again"
        ) from error


def read(path):
    """(kind, model, vocab file or None, `TokenizerSettings` or None) of a preset, a run directory or a run's
    checkpoint prefix; None where the directory does not record them. The kind of a backbone's preset is "backbone",
    its model the `ElectraBackbone`."""
    if preset_kind(path) is not None:
        return (
            preset_kind(path),
            load_preset(path),
            tokenizer_files.vocab_file_of(path),
            tokenizer_files.read_tokenizer_json(path),
        )
    run = run_prefix(path)
    if run is None:
        raise CheckpointError(
            f"{path} is neither a preset of ours (task.json + config.json, as electra-pretrain "
            f"writes <model_dir>/pretrained) nor a pre-training run (model_dir with "
            f"{RUN_CONFIG_NAME} and a checkpoint)"
        )
    directory, prefix = run
    config_path = os.path.join(directory, RUN_CONFIG_NAME)
    model = build_model(PRETRAINER, ElectraConfig.load(config_path))
    status = tf.train.Checkpoint(model=model).restore(prefix)
    try:
        status.expect_partial().assert_existing_objects_matched()
    except AssertionError as error:
        raise CheckpointError(f"{prefix} does not match {config_path}: {error}") from error
    vocab_file, settings = run_tokenizer(directory)
    return PRETRAINER, model, vocab_file, settings


def _read_source(path, allow_embedding_mismatch=False):
    kind, model, vocab, settings = read(path)
    if kind == BACKBONE:
        # An encoder without a head, read as a discriminator's (as a keras-hub backbone): its sizes from the weights,
        # its other fields as the backbone records them.
        weights = {slot.name: slot.read() for slot in encoder_slots(model, DISCRIMINATOR)}
        return Source(
            path,
            OURS,
            weights,
            base=model.architecture(),
            num_heads=model.num_heads,
            vocab_file=vocab,
            kind=DISCRIMINATOR,
            tokenizer_settings=settings,
        )
    # A pre-training model without the reference's variables (e.g. objective=mlm) has no canonical weights: its parts
    # come from the model itself (`model_part`).
    weights = collect_weights(model, kind) if kind != PRETRAINER or model.electra_config.reference_layout else {}
    return Source(
        path,
        OURS,
        weights,
        vocab_file=vocab,
        config=model.electra_config,
        kind=kind,
        model=model,
        tokenizer_settings=settings,
    )


FORMAT = CheckpointFormat(OURS, DESCRIPTION, detects, _read_source, write)
