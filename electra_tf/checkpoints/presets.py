"""Model directories: keras-hub presets of a discriminator or generator.

A preset, as `ElectraDiscriminator.save_to_preset` / `ElectraGenerator.save_to_preset` write it: `config.json` (the
backbone's architecture: an `ElectraBackbone` config), `model.weights.h5` (the backbone), `task.json` (the model: its
head and the `ElectraConfig` it was built from), `task.weights.h5` (the head) and `metadata.json`; `save_preset`
adds the tokenizer's files: `vocab.txt`, and `tokenizer.json` + `assets/tokenizer/vocabulary.txt` recording the
vocabulary with its casing and accent settings (`checkpoints.tokenizer_files`). keras-hub reads it as any preset
(`keras_hub.models.Backbone.from_preset(directory)`).

Directories written before `ElectraBackbone` hold `config.json` (an `ElectraConfig`) and `<kind>.weights.h5`; they
still load (`checkpoints.legacy_h5`).
"""

import json
import os
import shutil

from electra_tf.checkpoints import tokenizer_files
from electra_tf.errors import CheckpointError
from electra_tf.io_utils import staged_directory
from electra_tf.tokenizer import BERT_UNCASED

CONFIG_NAME = "config.json"
TASK_CONFIG_NAME = "task.json"
VOCAB_NAME = "vocab.txt"
LEGACY_WEIGHTS_NAMES = {"discriminator": "discriminator.weights.h5", "generator": "generator.weights.h5"}
PRESET_KINDS = {"ElectraDiscriminator": "discriminator", "ElectraGenerator": "generator"}


def save_preset(model, directory, vocab_file=None, tokenizer_settings=None):
    """Write `model` (an `ElectraDiscriminator` or `ElectraGenerator`) as a keras-hub preset into `directory`,
    atomically: the files are written to a temporary sibling directory that replaces `directory` once complete.

    With `vocab_file`, the tokenizer's files go with it: `vocab.txt` and `tokenizer.json` recording
    `tokenizer_settings` (a `TokenizerSettings`; default BERT uncased).
    """
    with staged_directory(directory) as staging:
        model.save_to_preset(staging)
        if vocab_file:
            write_tokenizer_files(staging, vocab_file, tokenizer_settings)
    return directory


def write_tokenizer_files(directory, vocab_file, tokenizer_settings=None):
    """`vocab.txt`, `tokenizer.json` and `assets/tokenizer/vocabulary.txt` in `directory`."""
    shutil.copyfile(vocab_file, os.path.join(directory, VOCAB_NAME))
    tokenizer_files.write_keras_hub_tokenizer(directory, vocab_file, tokenizer_settings or BERT_UNCASED)


def preset_kind(directory):
    """"discriminator" or "generator" for a preset directory of ours, else None."""
    try:
        with open(os.path.join(directory, TASK_CONFIG_NAME), encoding="utf-8") as handle:
            class_name = json.load(handle).get("class_name")
    except (OSError, ValueError, AttributeError):
        return None
    if not os.path.isfile(os.path.join(directory, CONFIG_NAME)):
        return None
    return PRESET_KINDS.get(class_name)


def legacy_kind(directory):
    """"discriminator" or "generator" for a directory of the format before `ElectraBackbone`, else None."""
    for kind, name in LEGACY_WEIGHTS_NAMES.items():
        if os.path.isfile(os.path.join(directory, name)) and os.path.isfile(os.path.join(directory, CONFIG_NAME)):
            return kind
    return None


def load_preset(directory):
    """The `ElectraDiscriminator` or `ElectraGenerator` of a preset directory (`save_pretrained`)."""
    import keras

    from electra_tf.models import ElectraDiscriminator, ElectraGenerator

    kind = preset_kind(directory)
    if kind is None:
        raise CheckpointError(f"{os.path.join(directory, TASK_CONFIG_NAME)} is missing or names no ELECTRA model: "
                              f"{directory} is not a directory written by save_pretrained (run_pretraining.py writes "
                              "one to <model_dir>/pretrained)")
    model_class = ElectraDiscriminator if kind == "discriminator" else ElectraGenerator
    try:
        # Under the caller's dtype policy (e.g. mixed_bfloat16 fine-tuning), not the one recorded in the preset.
        return model_class.from_preset(directory, dtype=keras.config.dtype_policy().name)
    except (ValueError, KeyError, TypeError, OSError) as error:
        raise CheckpointError(f"the weights in {directory} do not match its {CONFIG_NAME}: "
                              f"{str(error).splitlines()[0]}; write the directory again") from error


def tokenizer_settings_of(directory):
    """The `TokenizerSettings` a model directory records; BERT uncased for one that records none (written before
    the settings were saved, when every reader lower-cased)."""
    return tokenizer_files.read_keras_hub_tokenizer(directory) or BERT_UNCASED


def vocab_file_of(directory):
    """`directory`'s vocab.txt, or None."""
    path = os.path.join(directory, VOCAB_NAME)
    return path if os.path.isfile(path) else None
