"""Saving and loading the pre-trained discriminator (the model fine-tuning starts from)."""

import os
import shutil

from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError
from electra_tf.io_utils import staged_directory

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "discriminator.weights.h5"
VOCAB_NAME = "vocab.txt"


def save_pretrained(discriminator, directory, vocab_file=None):
    """Write `config.json`, `discriminator.weights.h5` and (optionally) `vocab.txt` into `directory`, atomically:
    the files are written to a temporary sibling directory that replaces `directory` once complete."""
    with staged_directory(directory) as staging:
        discriminator.electra_config.save(os.path.join(staging, CONFIG_NAME))
        discriminator.save_weights(os.path.join(staging, WEIGHTS_NAME))
        if vocab_file:
            shutil.copyfile(vocab_file, os.path.join(staging, VOCAB_NAME))


def load_pretrained(directory):
    """The `ElectraDiscriminator` saved by `save_pretrained` in `directory`."""
    from electra_tf.models import build_discriminator

    config_path = os.path.join(directory, CONFIG_NAME)
    weights_path = os.path.join(directory, WEIGHTS_NAME)
    for path in (config_path, weights_path):
        if not os.path.isfile(path):
            raise CheckpointError(f"{path} is missing: {directory} is not a directory written by save_pretrained "
                                  "(run_pretraining.py writes one to <model_dir>/pretrained)")
    config = ElectraConfig.load(config_path)
    discriminator = build_discriminator(config)
    from electra_tf.checkpoints.ours import load_weights_file

    return load_weights_file(discriminator, "discriminator", weights_path, config_path)
