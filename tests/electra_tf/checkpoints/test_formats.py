"""What a format has no place for is not dropped silently: the reference's TF1 checkpoint keeps the vocabulary only."""

import dataclasses
import logging
import os

import pytest

from electra_tf.checkpoint_formats import CHECKPOINT_FORMATS
from electra_tf.errors import CheckpointError
from electra_tf.models import load_checkpoint, save_checkpoint
from electra_tf.models.format_registry import FORMAT_NAMES
from electra_tf.tokenizer import BERT_UNCASED, TokenizerSettings
from tests.electra_tf.checkpoints.models import TINY, tiny_model


def _casing_notices(caplog):
    return [record for record in caplog.records if "casing" in record.getMessage()]


def test_a_tf1_checkpoint_of_a_cased_model_comes_with_a_notice_naming_the_settings_it_leaves_out(
    vocab_file, tmp_path, caplog
):
    model = tiny_model("discriminator", seed=3)
    prefix = str(tmp_path / "cased" / "model.ckpt")
    with caplog.at_level(logging.WARNING):
        save_checkpoint(
            model, prefix, "tf1", vocab_file=vocab_file, tokenizer_settings=TokenizerSettings(do_lower_case=False)
        )
        save_checkpoint(
            model,
            str(tmp_path / "uncased" / "model.ckpt"),
            "tf1",
            vocab_file=vocab_file,
            tokenizer_settings=BERT_UNCASED,
        )
    (notice,) = _casing_notices(caplog)
    assert notice.getMessage() == (
        f"{prefix} keeps the vocabulary but not the tokenizer's casing, which the "
        "reference's TF1 format has no place for: it reads as lower-cased unless read "
        "with do_lower_case=False and strip_accents=False"
    )
    assert notice.arguments == ("do_lower_case", "strip_accents")
    loaded = load_checkpoint(prefix)
    assert loaded.settings_recorded is False
    assert loaded.tokenizer(do_lower_case=False).settings == TokenizerSettings(do_lower_case=False)


def test_a_tf1_checkpoint_is_not_written_beside_another_vocabulary(vocab_file, tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", encoding="utf-8")
    with pytest.raises(CheckpointError) as raised:
        save_checkpoint(tiny_model("discriminator"), str(tmp_path / "model.ckpt"), "tf1", vocab_file=vocab_file)
    assert str(raised.value) == (
        f"{tmp_path / 'vocab.txt'} is not the vocabulary of the model being written ({vocab_file}), and a TF1 "
        "checkpoint is read with the vocab.txt beside it: write the checkpoint into another directory, or remove that "
        "vocab.txt"
    )
    assert sorted(os.listdir(tmp_path)) == ["vocab.txt"]
    # The same vocabulary may be there already.
    save_checkpoint(
        tiny_model("discriminator"), str(tmp_path / "model.ckpt"), "tf1", vocab_file=str(tmp_path / "vocab.txt")
    )
    assert "model.ckpt.index" in os.listdir(tmp_path)


@pytest.mark.parametrize("kind, lost", [("discriminator", "head is"), ("pretrainer", "head and the generator are")])
def test_a_keras_hub_preset_comes_with_a_notice_that_the_head_is_not_in_it(kind, lost, vocab_file, tmp_path, caplog):
    target = str(tmp_path / kind)
    with caplog.at_level(logging.WARNING):
        save_checkpoint(tiny_model(kind), target, "keras_hub", vocab_file=vocab_file)
    (notice,) = [record for record in caplog.records if "keras-hub" in record.getMessage()]
    assert notice.getMessage() == (
        f"{target} is a keras-hub ElectraBackbone preset, which holds the encoder only: "
        f"the discriminator's replaced-token {lost} not in it; write another format (ours, "
        "hf or tf1) to keep it"
    )
    # What it holds reads back as an encoder without a head.
    with pytest.raises(CheckpointError):
        load_checkpoint(target)
    assert load_checkpoint(target, allow_missing_head=True).kind == "discriminator"


def test_the_commands_offer_every_registered_format():
    assert sorted(CHECKPOINT_FORMATS) == sorted(FORMAT_NAMES)


@pytest.mark.parametrize("format", ["hf", "keras_hub", "tf1"])
def test_only_our_format_holds_an_alibi_model(format, vocab_file, tmp_path):
    model = tiny_model("discriminator", config=dataclasses.replace(TINY, alibi=True), seed=3)
    with pytest.raises(CheckpointError, match=f"ALiBi attention \\(alibi=True\\), which the {format} format cannot"):
        save_checkpoint(model, str(tmp_path / "model"), format, vocab_file=vocab_file)
    assert not os.listdir(tmp_path)
    written = save_checkpoint(model, str(tmp_path / "ours"), "ours", vocab_file=vocab_file)
    assert load_checkpoint(written, "discriminator").model.electra_config.alibi is True
