"""Every reader of the project reads every checkpoint format, and they all get the same discriminator.

One tiny pre-training model with random weights is written as each format (the reference's TF1 checkpoint, a Hugging
Face directory with transformers' own tokenizer files, as transformers 4 and as transformers 5 write them, a Hugging
Face discriminator/ + generator/ pair, a keras-hub ElectraBackbone preset, our `pretrained/` preset and our run
directory); each is then loaded by fine-tuning, the
scorer, export, conversion, continued pre-training and the task models' `from_preset`, and every one must hold the
discriminator's embeddings and encoder bit for bit (the keras-hub backbone holds nothing more).
"""

import os

import numpy as np
import pytest

from electra_tf.errors import CheckpointError
from electra_tf.models import load_checkpoint
from electra_tf.tokenizer import BERT_UNCASED, load_vocab
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.every_format import (
    CASED,
    FORMATS,
    HEADLESS,
    PAIRS,
    encoder_weights,
    write_every_format,
)
from tests.electra_tf.checkpoints.models import TINY


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """{format: path} of one tiny pre-training model written in every format, and the discriminator's embedding and
    encoder weights."""
    paths, pretrainer = write_every_format(tmp_path_factory.mktemp("every_format"))
    return paths, encoder_weights(pretrainer.pretrained_discriminator().backbone)


def assert_identical(actual, expected, reader=""):
    assert sorted(actual) == sorted(expected), reader
    for name, value in expected.items():
        assert np.array_equal(actual[name], value), f"{reader} {name}"


def test_the_fixture_writes_every_layout(checkpoints):
    paths, _ = checkpoints
    assert sorted(os.listdir(paths["hf"])) == [
        "README.md",
        "config.json",
        "model.safetensors",
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
    ]
    assert sorted(os.listdir(paths["hf5"])) == [
        "README.md",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    assert sorted(os.listdir(paths["hf_pair"])) == ["discriminator", "generator"]
    run = sorted(name for name in os.listdir(paths["ours_run"]) if not name.startswith("ckpt-1."))
    assert run == ["checkpoint", "electra_config.json", "pretrained"]
    assert {"config.json", "task.json", "tokenizer.json", "vocab.txt"} <= set(os.listdir(paths["ours_preset"]))


@pytest.mark.parametrize("name", FORMATS)
def test_every_reader_gets_the_same_discriminator(checkpoints, name, tmp_path):
    from electra_tf.scoring import load_scorer
    from electra_tf.training.initialization import read_initial_weights
    from finetune.models import ElectraTextClassifier, ElectraTokenClassifier
    from finetune.models.pretrained_parts import load_pretrained

    paths, expected = checkpoints
    path = paths[name]
    settings = BERT_UNCASED if name == "tf1" else CASED  # the reference's TF1 format records no casing

    finetuning = load_pretrained(path)
    assert finetuning.tokenizer_settings == settings
    assert load_vocab(finetuning.vocab_file) == load_vocab(fixtures.write_vocab(tmp_path / "vocab.txt"))
    backbones = {"fine-tuning": finetuning.model.backbone}
    # export_model.py (--model=discriminator) and convert_checkpoint.py (the model the checkpoint holds).
    exported = load_checkpoint(
        path, "discriminator", "auto", allow_missing_head=name in HEADLESS, argument="init_checkpoint"
    )
    assert exported.tokenizer().settings == settings
    backbones["export"] = exported.model.backbone
    converted = load_checkpoint(path, None, "auto", allow_missing_head=name in HEADLESS, argument="from")
    assert converted.kind == ("pretrainer" if name in PAIRS else "discriminator")
    backbones["conversion"] = (
        converted.model.discriminator if converted.kind == "pretrainer" else converted.model
    ).backbone
    classifier = ElectraTextClassifier.from_preset(path, num_classes=2, max_seq_length=16)
    assert classifier.preprocessor.do_lower_case == settings.do_lower_case
    backbones["ElectraTextClassifier.from_preset"] = classifier.backbone
    backbones["ElectraTokenClassifier.from_preset"] = ElectraTokenClassifier.from_preset(
        path, tags=["O", "X"], max_seq_length=16
    ).backbone
    for reader, backbone in backbones.items():
        assert_identical(encoder_weights(backbone), expected, reader)

    if name in HEADLESS:
        with pytest.raises(CheckpointError, match="discriminator head is missing"):
            load_scorer(path)
        with pytest.raises(CheckpointError, match="discriminator head is missing"):
            read_initial_weights(path, TINY)
        return
    discriminator, tokenizer = load_scorer(path)
    assert tokenizer.settings == settings
    assert_identical(encoder_weights(discriminator.backbone), expected)
    initial = read_initial_weights(path, TINY)
    assert initial.has_generator == (name in PAIRS)
    assert initial.tokenizer_settings == (None if name == "tf1" else CASED)
    assert_identical({name: initial.weights[name] for name in expected}, expected)


def test_a_transformers_tokenizer_json_without_tokenizer_config_gives_its_normalizer_casing(checkpoints, tmp_path):
    import shutil

    paths, _ = checkpoints
    shutil.copytree(paths["hf"], tmp_path / "hf")
    os.remove(tmp_path / "hf" / "tokenizer_config.json")
    assert load_checkpoint(str(tmp_path / "hf")).tokenizer_settings == CASED


def _rewrite_tokenizer_json(directory, change):
    import json

    path = os.path.join(directory, "tokenizer.json")
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
    change(config)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    return path


def test_a_transformers_5_vocabulary_that_is_no_wordpiece_one_is_refused_until_a_vocab_txt_is_beside_it(
    checkpoints, tmp_path
):
    import shutil

    paths, _ = checkpoints
    shutil.copytree(paths["hf5"], tmp_path / "bpe")
    path = _rewrite_tokenizer_json(tmp_path / "bpe", lambda config: config["model"].update(type="BPE"))
    with pytest.raises(CheckpointError) as raised:
        load_checkpoint(str(tmp_path / "bpe"), vocab_file=fixtures.write_vocab(tmp_path / "vocab.txt"))
    assert str(raised.value) == (
        f"{path} holds a BPE tokenizer, not ELECTRA's WordPiece one: copy the vocab.txt the "
        f"model was trained with into {tmp_path / 'bpe'}, where it is read instead"
    )
    shutil.copyfile(tmp_path / "vocab.txt", tmp_path / "bpe" / "vocab.txt")
    loaded = load_checkpoint(str(tmp_path / "bpe"))
    assert loaded.vocab_file == str(tmp_path / "bpe" / "vocab.txt")
    assert loaded.tokenizer().settings == CASED


def test_fine_tuning_tokenizes_with_a_transformers_5_directory_as_with_the_one_with_vocab_txt(checkpoints):
    from finetune.models import ElectraTextClassifier
    from finetune.models.pretrained_parts import load_pretrained

    paths, _ = checkpoints
    texts = ["w1 W1 w2", "w3 ẃ4"]
    # Cased: "W1" and "ẃ4" are [UNK] (1); w1 is id 6.
    expected = [[2, 6, 1, 7, 3, 0, 0, 0], [2, 8, 1, 3, 0, 0, 0, 0]]
    for name in ("hf", "hf5"):
        tokenizer = load_pretrained(paths[name]).tokenizer()
        assert [[tokenizer.cls_id, *row, tokenizer.sep_id] for row in tokenizer.tokenize(texts).to_list()] == [
            row[: row.index(3) + 1] for row in expected
        ]
        classifier = ElectraTextClassifier.from_preset(paths[name], num_classes=2, max_seq_length=8)
        assert classifier.preprocessor(texts)["token_ids"].numpy().tolist() == expected
