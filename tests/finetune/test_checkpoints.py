"""Loading the pre-trained discriminator through the one entry point fine-tuning uses."""

import numpy as np
import pytest

from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError
from electra_tf.models import build_discriminator
from electra_tf.pretrained import save_pretrained
from finetune.checkpoints import load_discriminator


def test_loads_a_save_pretrained_directory_with_its_vocabulary(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n", encoding="utf-8")
    config = ElectraConfig.from_preset("tiny").with_vocab(7, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    discriminator = build_discriminator(config)
    save_pretrained(discriminator, str(tmp_path / "pretrained"), str(vocab))
    loaded = load_discriminator(str(tmp_path / "pretrained"))
    assert loaded.format == "electra_tf" and loaded.vocab_file == str(tmp_path / "pretrained" / "vocab.txt")
    assert loaded.model.electra_config == config
    for expected, actual in zip(discriminator.get_weights(), loaded.model.get_weights()):
        np.testing.assert_array_equal(actual, expected)


def test_missing_or_unrecognised_checkpoints_are_user_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist; pass init_checkpoint=<model_dir>/pretrained") as raised:
        load_discriminator(str(tmp_path / "nowhere"))
    assert raised.value.arguments == ("init_checkpoint",)
    with pytest.raises(CheckpointError, match="no pre-trained checkpoint given"):
        load_discriminator(None)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="not a pre-trained checkpoint in a known format.*electra_tf: a discriminator preset"):
        load_discriminator(str(tmp_path / "empty"))


@pytest.mark.parametrize("target_format, target", [("hf", "hf_model"), ("tf1", "tf1/model.ckpt")])
def test_loads_converted_formats_with_the_same_weights(tmp_path, target_format, target):
    from electra_tf.checkpoints import conversion

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n", encoding="utf-8")
    config = ElectraConfig.from_preset("tiny").with_vocab(7, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    discriminator = build_discriminator(config)
    conversion.save_model(discriminator, str(tmp_path / target), format=target_format, vocab_file=str(vocab))
    loaded = load_discriminator(str(tmp_path / target))
    assert loaded.format == target_format
    for expected, actual in zip(discriminator.get_weights(), loaded.model.get_weights()):
        np.testing.assert_array_equal(actual, expected)
