"""A model keeps the casing its data was tokenised with: from the data manifest, through pre-training, the model
directory, conversions, the scorer, fine-tuning and the exported raw-text signature."""

import json
import os

import numpy as np
import pytest

from electra_tf.errors import CheckpointError, ConfigError, DataError
from electra_tf.models import load_checkpoint, save_checkpoint
from electra_tf.tokenizer import BERT_UNCASED, SPECIAL_TOKENS, ElectraTokenizer, TokenizerSettings
from tests.console_commands import run_command

CASED = TokenizerSettings(do_lower_case=False)
WORDS = ["Hello", "World", "hello", "world", "Café", "cafe", "the", "is", "."]
MAX_SEQ_LENGTH = 16


@pytest.fixture(scope="module")
def cased_run(tmp_path_factory):
    """(model_dir, vocab file) of a few steps of pre-training on data built with do_lower_case=False."""
    from data_prep.pipeline import build_pretraining_data
    from electra_tf.training.pretraining_job import run
    from electra_tf.training.pretraining_spec import PretrainingJob

    root = tmp_path_factory.mktemp("cased")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(list(SPECIAL_TOKENS) + WORDS) + "\n", encoding="utf-8")
    corpus = root / "corpus.txt"
    corpus.write_text("Hello World .\nhello world is the Café .\n\n" * 60, encoding="utf-8")
    build_pretraining_data(
        str(corpus),
        str(vocab),
        str(root / "data"),
        max_seq_length=MAX_SEQ_LENGTH,
        num_shards=1,
        do_lower_case=False,
        show_progress=False,
    )
    model_dir = root / "model"
    run(
        PretrainingJob(
            pretrain_tfrecords=str(root / "data" / "*.tfrecord"),
            model_dir=str(model_dir),
            model_size="tiny",
            max_seq_length=MAX_SEQ_LENGTH,
            train_batch_size=4,
            num_train_steps=2,
            num_warmup_steps=1,
            save_checkpoints_steps=0,
            log_every_steps=1,
            vocab_file=str(vocab),
            progress_bar=False,
        )
    )
    return model_dir, str(vocab)


def _cased_ids(vocab, text):
    return ElectraTokenizer.from_settings(vocab, CASED).tokenize([text]).to_list()[0]


def test_settings_follow_bert_rules():
    assert BERT_UNCASED == TokenizerSettings(True, True)
    assert TokenizerSettings(do_lower_case=False).strip_accents is False
    assert TokenizerSettings(True, strip_accents=False).strip_accents is False
    assert CASED.overridden() == CASED
    assert CASED.overridden(do_lower_case=True) == BERT_UNCASED  # a new casing strips accents as BERT does
    assert CASED.overridden(strip_accents=True) == TokenizerSettings(False, True)


def test_pretraining_saves_the_manifest_casing(cased_run):
    model_dir, vocab = cased_run
    directory = str(model_dir / "pretrained")
    loaded = load_checkpoint(directory)
    assert loaded.tokenizer_settings == CASED and loaded.settings_recorded
    with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as handle:
        config = json.load(handle)["config"]
    assert (config["lowercase"], config["strip_accents"]) == (False, False)
    tokenizer = loaded.tokenizer()
    assert tokenizer.convert_ids_to_tokens(tokenizer.tokenize(["Hello World Café"]).to_list()[0]) == [
        "Hello",
        "World",
        "Café",
    ]
    # A pre-training run directory reads with the settings of its pretrained/, else its pretraining_job.json's.
    assert load_checkpoint(str(model_dir)).tokenizer_settings == CASED


def test_a_run_still_training_reads_its_tokenizer_from_its_job(cased_run, tmp_path):
    import shutil

    model_dir, vocab = cased_run
    shutil.copytree(model_dir, tmp_path / "run", ignore=shutil.ignore_patterns("pretrained"))
    loaded = load_checkpoint(str(tmp_path / "run"))
    assert (loaded.kind, loaded.tokenizer_settings, loaded.vocab_file) == ("pretrainer", CASED, vocab)


def test_keras_hub_reads_the_tokenizer_we_write(cased_run):
    import keras_hub

    model_dir, vocab = cased_run
    target = str(model_dir.parent / "keras_hub")
    loaded = load_checkpoint(str(model_dir / "pretrained"))
    save_checkpoint(
        loaded.model, target, "keras_hub", vocab_file=loaded.vocab_file, tokenizer_settings=loaded.tokenizer_settings
    )
    keras_hub_tokenizer = keras_hub.models.ElectraTokenizer.from_preset(target)
    assert keras_hub_tokenizer.lowercase is False
    for text in ("Hello World .", "hello world is the Café ."):
        assert np.asarray(keras_hub_tokenizer(text)).tolist() == _cased_ids(vocab, text)
    assert load_checkpoint(target, allow_missing_head=True).tokenizer_settings == CASED


def test_conversions_carry_the_settings(cased_run, tmp_path):
    model_dir, _ = cased_run
    loaded = load_checkpoint(str(model_dir / "pretrained"))
    hf_dir = str(tmp_path / "hf")
    save_checkpoint(
        loaded.model, hf_dir, "hf", vocab_file=loaded.vocab_file, tokenizer_settings=loaded.tokenizer_settings
    )
    with open(os.path.join(hf_dir, "tokenizer_config.json"), encoding="utf-8") as handle:
        hf_config = json.load(handle)
    assert (hf_config["do_lower_case"], hf_config["strip_accents"]) == (False, False)
    assert hf_config["tokenizer_class"] == "ElectraTokenizer" and hf_config["model_max_length"] == 512
    with open(os.path.join(hf_dir, "special_tokens_map.json"), encoding="utf-8") as handle:
        assert json.load(handle) == {
            "unk_token": "[UNK]",
            "sep_token": "[SEP]",
            "pad_token": "[PAD]",
            "cls_token": "[CLS]",
            "mask_token": "[MASK]",
        }
    # What transformers' AutoTokenizer / AutoModelForPreTraining read: the files and the keys they dispatch on.
    assert sorted(os.listdir(hf_dir)) == [
        "README.md",
        "config.json",
        "model.safetensors",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "vocab.txt",
    ]
    with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as handle:
        model_config = json.load(handle)
    assert (model_config["model_type"], model_config["architectures"]) == ("electra", ["ElectraForPreTraining"])
    with (
        open(os.path.join(hf_dir, "vocab.txt"), encoding="utf-8") as vocab,
        open(loaded.vocab_file, encoding="utf-8") as original,
    ):
        assert vocab.read() == original.read()
    card = open(os.path.join(hf_dir, "README.md"), encoding="utf-8").read()
    assert card.startswith("---\nlibrary_name: transformers\n")
    assert f"| layers | {loaded.model.electra_config.num_layers} |" in card
    assert "do_lower_case=False, strip_accents=False" in card and "AutoModelForPreTraining" in card
    back = load_checkpoint(hf_dir)
    assert back.tokenizer_settings == CASED
    ours = str(tmp_path / "ours")
    save_checkpoint(back.model, ours, "ours", vocab_file=back.vocab_file, tokenizer_settings=back.tokenizer_settings)
    assert load_checkpoint(ours).tokenizer_settings == CASED


# The commands below run in this process (`tests.console_commands`): what they write is checked, not their start-up.
def test_convert_checkpoint_sets_the_casing_a_tf1_checkpoint_cannot_record(cased_run, tmp_path, capfd):
    model_dir, _ = cased_run

    def convert(*args):
        assert run_command("electra-convert", *args) == 0, capfd.readouterr().err[-2000:]

    prefix = str(tmp_path / "tf1" / "model.ckpt")
    convert(f"--from={model_dir / 'pretrained'}", f"--to={prefix}", "--to_format=tf1")
    convert(f"--from={prefix}", f"--to={tmp_path / 'uncased'}")
    assert load_checkpoint(str(tmp_path / "uncased")).tokenizer_settings == BERT_UNCASED
    convert(f"--from={prefix}", f"--to={tmp_path / 'cased'}", "--nodo_lower_case")
    assert load_checkpoint(str(tmp_path / "cased")).tokenizer_settings == CASED


def test_scorer_and_fine_tuning_tokenise_as_pre_trained(cased_run):
    from electra_tf.scoring import load_scorer
    from finetune.finetuning_spec import FinetuningJob
    from finetune.models import ElectraTextClassifier
    from finetune.runner import tokenizer_settings

    model_dir, vocab = cased_run
    directory = str(model_dir / "pretrained")
    _, scorer_tokenizer = load_scorer(directory)
    assert scorer_tokenizer.settings == CASED

    discriminator = load_checkpoint(directory, "discriminator")
    assert discriminator.tokenizer_settings == CASED
    job = FinetuningJob(task="sst-2", init_checkpoint=directory, output_dir="unused")
    assert tokenizer_settings(job, discriminator) == CASED
    job = FinetuningJob(task="sst-2", init_checkpoint=directory, output_dir="unused", do_lower_case=True)
    assert tokenizer_settings(job, discriminator) == BERT_UNCASED

    classifier = ElectraTextClassifier.from_preset(directory, num_classes=2, max_seq_length=MAX_SEQ_LENGTH)
    token_ids = classifier.preprocessor(["Hello World", "hello world"])["token_ids"].numpy()
    assert token_ids[0, 1:3].tolist() == _cased_ids(vocab, "Hello World")
    assert token_ids[1, 1:3].tolist() == _cased_ids(vocab, "hello world") != token_ids[0, 1:3].tolist()


def test_exported_raw_text_signature_keeps_the_case(cased_run, tmp_path, capfd):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the raw-text signature's ops)

    model_dir, vocab = cased_run
    export_dir = str(tmp_path / "export")
    status = run_command(
        "electra-export",
        f"--init_checkpoint={model_dir / 'pretrained'}",
        f"--output_dir={export_dir}",
        "--model=discriminator",
        f"--max_seq_length={MAX_SEQ_LENGTH}",
    )
    assert status == 0, capfd.readouterr().err[-2000:]
    served = tf.saved_model.load(export_dir).signatures["serve_text"](tf.constant(["Hello World", "hello world"]))
    ids = served["input_ids"].numpy()
    tokenizer = ElectraTokenizer(vocab)
    expected = [
        [tokenizer.cls_id, *_cased_ids(vocab, text), tokenizer.sep_id] for text in ("Hello World", "hello world")
    ]
    assert ids[:, :4].tolist() == expected and expected[0] != expected[1]
    assert not np.any(ids[:, 4:])


def test_a_directory_without_settings_is_bert_uncased(cased_run, tmp_path):
    import shutil

    model_dir, _ = cased_run
    directory = tmp_path / "old"
    shutil.copytree(model_dir / "pretrained", directory)
    os.remove(directory / "tokenizer.json")
    loaded = load_checkpoint(str(directory))
    assert loaded.tokenizer_settings == BERT_UNCASED and not loaded.settings_recorded
    (directory / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CheckpointError, match=r"tokenizer\.json is not a readable tokenizer file"):
        load_checkpoint(str(directory))
    os.remove(directory / "tokenizer.json")
    os.remove(directory / "vocab.txt")
    shutil.rmtree(directory / "assets")
    loaded = load_checkpoint(str(directory), argument="model_dir")
    with pytest.raises(CheckpointError, match=f"^model_dir={directory} holds no vocabulary.*vocab_file=") as raised:
        loaded.tokenizer()
    assert raised.value.arguments == ("model_dir", "vocab_file")


def test_pretraining_settings_must_agree_with_the_data():
    from electra_tf.data.tfrecord_checks import check_same_tokenizer_settings
    from electra_tf.training.pretraining_spec import PretrainingJob

    cased_manifest = {"do_lower_case": False, "strip_accents": False}
    job = PretrainingJob(pretrain_tfrecords="x", model_dir="y")
    assert job.tokenizer_settings(cased_manifest) == CASED
    assert job.tokenizer_settings({}) == BERT_UNCASED  # data without a manifest: BERT's default
    assert PretrainingJob(pretrain_tfrecords="x", model_dir="y", do_lower_case=False).tokenizer_settings({}) == CASED
    with pytest.raises(ConfigError, match="do_lower_case=True contradicts the pre-training data") as raised:
        PretrainingJob(pretrain_tfrecords="x", model_dir="y", do_lower_case=True).tokenizer_settings(cased_manifest)
    assert raised.value.arguments == ("do_lower_case",)
    with pytest.raises(DataError, match="a/manifest.json records .* but b/manifest.json records"):
        check_same_tokenizer_settings(cased_manifest, "a/manifest.json", {"do_lower_case": True}, "b/manifest.json")
    check_same_tokenizer_settings(cased_manifest, "a/manifest.json", {}, "b/manifest.json")  # an older manifest
