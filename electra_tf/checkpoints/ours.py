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
  too, as does a `kept-N` one: a step the run was asked to keep, outside the rotation), `pretraining_job.json` (the
  vocabulary and tokenizer settings of the run) and, once training ends, `pretrained/`. Saving a pre-training model
  writes the same layout: `electra_config.json`, `ckpt-1` holding the model alone, and `pretrained/` (its
  discriminator, with the tokenizer's files). A run's tokenizer is `pretrained/`'s when there is one, else the one
  `pretraining_job.json` names.

This module knows the layout: detection, the run's tokenizer and writing (the models write themselves). Reading one
builds our models, so it is `electra_tf.models.ours_reading`'s.
"""

import json
import os

import tensorflow as tf

from electra_tf.checkpoints import tokenizer_files
from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, PRETRAINER
from electra_tf.io_utils import staged_directory
from electra_tf.tokenizer import TokenizerSettings

CONFIG_NAME = "config.json"
TASK_CONFIG_NAME = "task.json"
RUN_CONFIG_NAME = "electra_config.json"  # written by training.pretraining_job
JOB_NAME = "pretraining_job.json"
KEPT_PREFIX = "kept-"  # <model_dir>/kept-N: a checkpoint the rotation does not delete
PRETRAINED_DIR = "pretrained"
PRESET_KINDS = {"ElectraDiscriminator": DISCRIMINATOR, "ElectraGenerator": GENERATOR}
BACKBONE = "backbone"  # the preset of an ElectraBackbone alone
BACKBONE_REGISTERED_NAME = "electra_tf>ElectraBackbone"
DESCRIPTION = (
    "a model directory of ours (<model_dir>/pretrained, or an ElectraBackbone's "
    "save_to_preset) or a pre-training run's model_dir"
)


def kept_checkpoint(model_dir, step):
    """The prefix of the checkpoint a run keeps at `step`, outside its rotation: <model_dir>/kept-<step>."""
    return os.path.join(model_dir, f"{KEPT_PREFIX}{step}")


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


def run_prefix(path):
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
    return preset_kind(path) is not None or run_prefix(path) is not None


# ---------------------------------------------------------------------------------------------- reading
def run_tokenizer(directory):
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
