"""Saving and loading the pre-trained discriminator (the model fine-tuning starts from) as a model directory.

`save_pretrained` writes a keras-hub preset (`checkpoints.presets`: config.json = the backbone's architecture,
model.weights.h5, task.json, task.weights.h5, metadata.json, and the tokenizer's vocab.txt, tokenizer.json and
assets/tokenizer/vocabulary.txt); `load_pretrained` reads it, or a directory of the format before `ElectraBackbone`
(config.json = `ElectraConfig`, discriminator.weights.h5). `load_tokenizer` gives the tokenizer the model was trained
with: its vocabulary and its casing and accent settings (`tokenizer_settings`).
"""

import os

from electra_tf.checkpoints import ours, presets
from electra_tf.checkpoints.presets import CONFIG_NAME, TASK_CONFIG_NAME, VOCAB_NAME, vocab_file_of  # noqa: F401
from electra_tf.errors import CheckpointError
from electra_tf.tokenizer import ElectraTokenizer

DISCRIMINATOR = "discriminator"


def save_pretrained(model, directory, vocab_file=None, tokenizer_settings=None):
    """Write `model` (an `ElectraDiscriminator`, or a generator) and `vocab_file` to `directory` as a keras-hub
    preset, atomically (staged in a sibling directory that replaces `directory` once complete). `tokenizer_settings`
    (a `TokenizerSettings`, default BERT uncased) is what the vocabulary's text was normalised with."""
    return presets.save_preset(model, directory, vocab_file, tokenizer_settings)


def tokenizer_settings(directory):
    """The `TokenizerSettings` (casing, accents) of the model in `directory`; BERT uncased when it records none."""
    return presets.tokenizer_settings_of(directory)


def load_tokenizer(directory):
    """The `ElectraTokenizer` of the model in `directory`: its vocab.txt with its casing and accent settings."""
    vocab_file = vocab_file_of(directory)
    if vocab_file is None:
        raise CheckpointError(f"{os.path.join(directory, VOCAB_NAME)} is missing: the model in {directory} was saved "
                              "without its vocabulary; pass vocab_file=<the vocab.txt it was trained with>",
                              arguments=("vocab_file",))
    return ElectraTokenizer.from_settings(vocab_file, tokenizer_settings(directory))


def load_pretrained(directory):
    """The `ElectraDiscriminator` saved in `directory`."""
    if presets.preset_kind(directory) == DISCRIMINATOR:
        return presets.load_preset(directory)
    if presets.legacy_kind(directory) == DISCRIMINATOR:
        return ours.load_legacy(directory, DISCRIMINATOR)
    for name in (CONFIG_NAME, TASK_CONFIG_NAME):
        if not os.path.isfile(os.path.join(directory, name)):
            raise CheckpointError(f"{os.path.join(directory, name)} is missing: {directory} is not a directory "
                                  "written by save_pretrained (run_pretraining.py writes one to <model_dir>/pretrained)")
    raise CheckpointError(f"{directory} holds a {presets.preset_kind(directory)}, not a discriminator")
