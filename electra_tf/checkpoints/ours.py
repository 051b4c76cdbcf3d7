"""The project's own format: a keras-hub preset of a discriminator or generator, and the pre-training run holding it.

* The preset (`<model_dir>/pretrained`; the model fine-tuning starts from): `config.json` (the backbone's
  architecture: an `ElectraBackbone` config), `model.weights.h5` (the backbone), `task.json` (the model: its head and
  the `ElectraConfig` it was built from), `task.weights.h5` (the head) and `metadata.json`, as
  `ElectraDiscriminator.save_to_preset` / `ElectraGenerator.save_to_preset` write them, plus the tokenizer's files
  (`vocab.txt`, and keras-hub's `tokenizer.json` + `assets/tokenizer/vocabulary.txt` with the casing and accent
  settings, `checkpoints.tokenizer_files`). keras-hub reads it as any preset. A preset of an `ElectraBackbone` alone
  (its `save_to_preset`: no `task.json`) reads as an encoder without a head, as a keras-hub backbone does.
* The run directory (`model_dir` of `electra-pretrain`): `electra_config.json` (the `ElectraConfig`), the
  `tf.train.Checkpoint`s of the pre-training model (`ckpt-N` + the `checkpoint` state file; a `ckpt-N` prefix loads
  too), `pretraining_job.json` (the vocabulary and tokenizer settings of the run) and, once training ends,
  `pretrained/`. Saving a pre-training model writes the same layout: `electra_config.json`, `ckpt-1` holding the
  model alone, and `pretrained/` (its discriminator, with the tokenizer's files). A run's tokenizer is `pretrained/`'s
  when there is one, else the one `pretraining_job.json` names.
"""

import dataclasses
import json
import os

import keras
import keras_hub
import tensorflow as tf

from electra_tf.checkpoints import tokenizer_files
from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, PRETRAINER, collect_weights, encoder_slots
from electra_tf.checkpoints.source import OURS, CheckpointFormat, Source
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError
from electra_tf.io_utils import staged_directory
from electra_tf.models import (
    ElectraDiscriminator,
    ElectraGenerator,
    ElectraPretrainingModel,
    build_discriminator,
    build_generator,
)
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.electra_task import ElectraTask
from electra_tf.tokenizer import TokenizerSettings

CONFIG_NAME = "config.json"
TASK_CONFIG_NAME = "task.json"
RUN_CONFIG_NAME = "electra_config.json"  # written by training.pretraining_job
JOB_NAME = "pretraining_job.json"
PRETRAINED_DIR = "pretrained"
PRESET_KINDS = {"ElectraDiscriminator": DISCRIMINATOR, "ElectraGenerator": GENERATOR}
BACKBONE = "backbone"  # the preset of an ElectraBackbone alone
BACKBONE_REGISTERED_NAME = "electra_tf>ElectraBackbone"


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


# ---------------------------------------------------------------------------------------------- detection
def _json_field(path, field):
    """`field` of the JSON object in the file at `path`, or None."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle).get(field)
    except (OSError, ValueError, AttributeError):
        return None


def preset_kind(directory):
    """ "discriminator" or "generator" for a preset directory of ours, "backbone" for the preset of an
    `ElectraBackbone` alone (config.json without task.json), else None."""
    if not os.path.isfile(os.path.join(directory, CONFIG_NAME)):
        return None
    if not os.path.exists(os.path.join(directory, TASK_CONFIG_NAME)):
        registered_name = _json_field(os.path.join(directory, CONFIG_NAME), "registered_name")
        return BACKBONE if registered_name == BACKBONE_REGISTERED_NAME else None
    return PRESET_KINDS.get(_json_field(os.path.join(directory, TASK_CONFIG_NAME), "class_name"))


def _run_prefix(path):
    """(run directory, checkpoint prefix) of a run directory or one of its ckpt-N prefixes, else None."""
    if os.path.isdir(path):
        directory, prefix = path, tf.train.latest_checkpoint(path)
    else:
        directory, prefix = os.path.dirname(path), path
    if prefix is None or not os.path.exists(prefix + ".index"):
        return None
    return (directory, prefix) if os.path.isfile(os.path.join(directory, RUN_CONFIG_NAME)) else None


def detects(path):
    """Whether `path` is a preset of ours, a run directory or a run's checkpoint prefix."""
    return preset_kind(path) is not None or _run_prefix(path) is not None


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
    run = _run_prefix(path)
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
    vocab_file, settings = _run_tokenizer(directory)
    return PRETRAINER, model, vocab_file, settings


def _run_tokenizer(directory):
    """(vocab file, `TokenizerSettings`) of a run: its pretrained/'s, else what pretraining_job.json records."""
    pretrained = os.path.join(directory, PRETRAINED_DIR)
    if tokenizer_files.vocab_file_of(pretrained):
        return tokenizer_files.vocab_file_of(pretrained), tokenizer_files.read_tokenizer_json(pretrained)
    try:
        with open(os.path.join(directory, JOB_NAME), encoding="utf-8") as handle:
            job = json.load(handle)
    except (OSError, ValueError):
        job = {}
    job = job if isinstance(job, dict) else {}
    vocab = job.get("vocab_file")
    settings = None
    if job.get("do_lower_case") is not None:  # runs before the settings were recorded leave them unset
        settings = TokenizerSettings(job["do_lower_case"], job.get("strip_accents"))
    return (vocab if vocab and os.path.isfile(vocab) else None), settings


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


# ---------------------------------------------------------------------------------------------- writing
def save_preset(model, directory, vocab_file=None, tokenizer_settings=None):
    """`model` (an `ElectraDiscriminator` or `ElectraGenerator`) as a preset in `directory`, written atomically; with
    `vocab_file`, the tokenizer's files recording `tokenizer_settings` (default BERT uncased)."""
    with staged_directory(directory) as staging:
        model.save_to_preset(staging)
        if vocab_file:
            tokenizer_files.write_tokenizer_files(staging, vocab_file, tokenizer_settings)
    return directory


def write(model, kind, directory, vocab_file=None, tokenizer_settings=None):
    """A preset of a discriminator or generator, or the run directory of a pre-training model, written atomically."""
    if kind != PRETRAINER:
        return save_preset(model, directory, vocab_file, tokenizer_settings)
    with staged_directory(directory) as staging:
        model.electra_config.save(os.path.join(staging, RUN_CONFIG_NAME))
        # The manager records the checkpoint by a path relative to the directory, which is renamed into place.
        tf.train.CheckpointManager(tf.train.Checkpoint(model=model), staging, max_to_keep=1).save(checkpoint_number=1)
        save_preset(
            model.pretrained_discriminator(), os.path.join(staging, PRETRAINED_DIR), vocab_file, tokenizer_settings
        )
    return directory


FORMAT = CheckpointFormat(
    OURS,
    "a model directory of ours (<model_dir>/pretrained, or an ElectraBackbone's "
    "save_to_preset) or a pre-training run's model_dir",
    detects,
    _read_source,
    write,
)
