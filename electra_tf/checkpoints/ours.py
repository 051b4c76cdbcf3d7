"""Our own formats: model directories, and pre-training runs.

The discriminator and the generator are keras-hub presets (`electra_tf.pretrained`: config.json = the backbone's
architecture, model.weights.h5, task.json, task.weights.h5 [+ the tokenizer's files]); the whole pre-training model, which is not
a keras-hub model, is `config.json` (its `ElectraConfig`) + `pretrainer.weights.h5`, as every kind was before
`ElectraBackbone` (those directories still load). A run's model_dir (or one of its `ckpt-N` prefixes) holds a
`tf.train.Checkpoint` of the pre-training model and `electra_config.json`.
"""

import json
import os

import tensorflow as tf

from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, MODEL_KINDS, PRETRAINER
from electra_tf.io_utils import staged_directory
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError
from electra_tf.checkpoints import presets, tokenizer_files
from electra_tf.checkpoints.presets import CONFIG_NAME, LEGACY_WEIGHTS_NAMES, VOCAB_NAME
from electra_tf.tokenizer import TokenizerSettings

RUN_CONFIG_NAME = "electra_config.json"  # written by training.pretraining_job


def weights_name(kind):
    return f"{kind}.weights.h5"


def build_model(kind, config):
    """A freshly initialised (built) model of `kind` for `config`."""
    from electra_tf.models import ElectraPretrainingModel, build_discriminator, build_generator

    if kind == DISCRIMINATOR:
        return build_discriminator(config)
    if kind == GENERATOR:
        return build_generator(config)
    return ElectraPretrainingModel(config, max_seq_length=min(128, config.max_position_embeddings))


def load_weights_file(model, kind, weights_path, config_path):
    """Load a `<kind>.weights.h5` into `model`: today's files directly, files of the models before `ElectraBackbone`
    through the reference's names (`legacy_h5`)."""
    from electra_tf.checkpoints.legacy_h5 import is_legacy_weights_file, read_legacy_weights
    from electra_tf.checkpoints.matching import assign_weights

    if not os.path.isfile(weights_path):
        raise CheckpointError(f"{weights_path} is missing: the directory was not written completely; write it again "
                              "(run_pretraining.py writes <model_dir>/pretrained, convert_checkpoint.py any format)")
    if is_legacy_weights_file(weights_path):
        assign_weights(model, kind, read_legacy_weights(weights_path, kind), weights_path)
        return model
    try:
        model.load_weights(weights_path)
    except ValueError as error:
        raise CheckpointError(f"{weights_path} does not match {config_path}: {error}") from error
    return model


def load_legacy(directory, kind):
    """The discriminator or generator of a directory written before `ElectraBackbone` (config.json =
    `ElectraConfig`, `<kind>.weights.h5`)."""
    config_path = os.path.join(directory, CONFIG_NAME)
    model = build_model(kind, ElectraConfig.load(config_path))
    return load_weights_file(model, kind, os.path.join(directory, LEGACY_WEIGHTS_NAMES[kind]), config_path)


def stored_kinds(directory):
    return [kind for kind in MODEL_KINDS if os.path.isfile(os.path.join(directory, weights_name(kind)))]


def is_pretrained_directory(path):
    """A preset of ours, or a directory of the earlier layout (config.json + <kind>.weights.h5)."""
    return presets.preset_kind(path) is not None or (
        os.path.isfile(os.path.join(path, CONFIG_NAME)) and bool(stored_kinds(path)))


def is_run_directory(path):
    return os.path.isfile(os.path.join(path, RUN_CONFIG_NAME)) and tf.train.latest_checkpoint(path) is not None


def save_ours(model, kind, directory, vocab_file=None, tokenizer_settings=None):
    """A keras-hub preset of a discriminator or generator, or config.json + pretrainer.weights.h5 of a pre-training
    model (+ the tokenizer's files: vocab.txt and tokenizer.json with `tokenizer_settings`), in `directory`, written
    atomically."""
    if kind != PRETRAINER:
        return presets.save_preset(model, directory, vocab_file, tokenizer_settings)
    with staged_directory(directory) as staging:
        model.electra_config.save(os.path.join(staging, CONFIG_NAME))
        model.save_weights(os.path.join(staging, weights_name(kind)))
        if vocab_file:
            presets.write_tokenizer_files(staging, vocab_file, tokenizer_settings)
    return directory


def load_ours(path):
    """(kind, model, vocab file or None, `TokenizerSettings` or None) of a pretrained directory, a run's model_dir or
    one of its ckpt prefixes; None where the directory does not record them.

    A pretrained directory holding several kinds yields the largest (pretrainer, then discriminator, generator).
    """
    if presets.preset_kind(path) is not None:
        return (presets.preset_kind(path), presets.load_preset(path), presets.vocab_file_of(path),
                tokenizer_files.read_keras_hub_tokenizer(path))
    if is_pretrained_directory(path):
        kinds = stored_kinds(path)
        kind = PRETRAINER if PRETRAINER in kinds else kinds[0]
        config = ElectraConfig.load(os.path.join(path, CONFIG_NAME))
        model = build_model(kind, config)
        load_weights_file(model, kind, os.path.join(path, weights_name(kind)), os.path.join(path, CONFIG_NAME))
        vocab = os.path.join(path, VOCAB_NAME)
        return (kind, model, vocab if os.path.isfile(vocab) else None,
                tokenizer_files.read_keras_hub_tokenizer(path))
    prefix = tf.train.latest_checkpoint(path) if os.path.isdir(path) else path
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    config_path = os.path.join(directory, RUN_CONFIG_NAME)
    if prefix is None or not os.path.exists(prefix + ".index") or not os.path.isfile(config_path):
        raise CheckpointError(f"{path} is neither a model directory (a preset written by save_pretrained or "
                              "convert_checkpoint.py, or config.json + <model>.weights.h5) nor a pre-training run "
                              f"(model_dir with {RUN_CONFIG_NAME} and a checkpoint)")
    model = build_model(PRETRAINER, ElectraConfig.load(config_path))
    status = tf.train.Checkpoint(model=model).restore(prefix)
    try:
        status.expect_partial().assert_existing_objects_matched()
    except AssertionError as error:
        raise CheckpointError(f"{prefix} does not match {config_path}: {error}") from error
    job = _run_job(directory)
    vocab = job.get("vocab_file")
    settings = None
    if job.get("do_lower_case") is not None:  # runs before the settings were recorded leave them unset
        settings = TokenizerSettings(job["do_lower_case"], job.get("strip_accents"))
    return PRETRAINER, model, vocab if vocab and os.path.isfile(vocab) else None, settings


def _run_job(directory):
    """The run's pretraining_job.json as a dict ({} when unreadable)."""
    try:
        with open(os.path.join(directory, "pretraining_job.json"), encoding="utf-8") as handle:
            job = json.load(handle)
    except (OSError, ValueError):
        return {}
    return job if isinstance(job, dict) else {}
