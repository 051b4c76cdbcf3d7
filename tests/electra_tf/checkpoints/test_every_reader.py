"""Every reader of the project reads every checkpoint format, and they all get the same discriminator.

One tiny pre-training model with random weights is written as each format (the reference's TF1 checkpoint, a Hugging
Face directory with transformers' own tokenizer files, a Hugging Face discriminator/ + generator/ pair, a keras-hub
ElectraBackbone preset, our `pretrained/` preset and our run directory); each is then loaded by fine-tuning, the
scorer, export, conversion, continued pre-training and the task models' `from_preset`, and every one must hold the
discriminator's embeddings and encoder bit for bit (the keras-hub backbone holds nothing more).
"""

import json
import os

import numpy as np
import pytest

from electra_tf.checkpoints import load_checkpoint, save_checkpoint
from electra_tf.checkpoints.naming import NETWORK_SCOPES, backbone_slots, embedding_slots
from electra_tf.errors import CheckpointError
from electra_tf.tokenizer import BERT_UNCASED, SPECIAL_TOKENS, TokenizerSettings
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import TINY, tiny_model

CASED = TokenizerSettings(do_lower_case=False)
FORMATS = ["tf1", "hf", "hf_pair", "keras_hub", "ours_preset", "ours_run"]
HEADLESS = ("keras_hub",)  # formats without the discriminator's replaced-token head


def write_transformers_tokenizer(directory, vocab_file, settings):
    """The tokenizer files transformers' `ElectraTokenizerFast.save_pretrained` writes: tokenizer_config.json,
    special_tokens_map.json, vocab.txt and tokenizer.json in the Hugging Face tokenizers library's format (whose
    normalizer, unlike tokenizer_config.json, leaves strip_accents unset)."""
    with open(vocab_file, encoding="utf-8") as handle:
        vocab = [line.rstrip("\n") for line in handle]
    with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(vocab) + "\n")
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
               "mask_token": "[MASK]"}
    added = [{"id": vocab.index(token), "content": token, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for token in SPECIAL_TOKENS]
    files = {
        "special_tokens_map.json": special,
        "tokenizer_config.json": {
            "added_tokens_decoder": {str(token["id"]): {k: v for k, v in token.items() if k != "id"}
                                     for token in added},
            "clean_up_tokenization_spaces": True, "do_basic_tokenize": True,
            "do_lower_case": settings.do_lower_case, "model_max_length": 512, "never_split": None,
            "strip_accents": None, "tokenize_chinese_chars": True, "tokenizer_class": "ElectraTokenizer", **special},
        "tokenizer.json": {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                           "strip_accents": None, "lowercase": settings.do_lower_case},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}},
                                          {"SpecialToken": {"id": "[SEP]", "type_id": 0}}]},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {token: i for i, token in enumerate(vocab)}}},
    }
    for name, content in files.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as handle:
            json.dump(content, handle, indent=2)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """{format: path} of one tiny pre-training model written in every format (tokenizer cased where the format
    records it), and the discriminator's embedding and encoder weights."""
    root = tmp_path_factory.mktemp("every_format")
    vocab = fixtures.write_vocab(root / "vocab.txt")
    pretrainer = tiny_model("pretrainer", seed=5)
    discriminator = pretrainer.pretrained_discriminator()
    paths = {"tf1": str(root / "tf1" / "model.ckpt"), "hf": str(root / "hf"), "hf_pair": str(root / "hf_pair"),
             "keras_hub": str(root / "keras_hub"), "ours_preset": str(root / "run" / "pretrained"),
             "ours_run": str(root / "run")}
    save_checkpoint(pretrainer, paths["tf1"], "tf1", vocab_file=vocab)
    save_checkpoint(discriminator, paths["hf"], "hf")
    write_transformers_tokenizer(paths["hf"], vocab, CASED)
    save_checkpoint(pretrainer, paths["hf_pair"], "hf", vocab_file=vocab, tokenizer_settings=CASED)
    save_checkpoint(discriminator, paths["keras_hub"], "keras_hub", vocab_file=vocab, tokenizer_settings=CASED)
    # Our run directory holds our preset as pretrained/.
    save_checkpoint(pretrainer, paths["ours_run"], "ours", vocab_file=vocab, tokenizer_settings=CASED)
    return paths, encoder_weights(discriminator.backbone)


def encoder_weights(backbone):
    """{reference name: array} of a discriminator backbone's embeddings and encoder."""
    slots = embedding_slots(backbone.embeddings) + backbone_slots(backbone, NETWORK_SCOPES["discriminator"])
    return {slot.name: slot.read() for slot in slots}


def assert_identical(actual, expected):
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert np.array_equal(actual[name], value), name


def test_the_fixture_writes_every_layout(checkpoints):
    paths, _ = checkpoints
    assert sorted(os.listdir(paths["hf"])) == ["README.md", "config.json", "model.safetensors",
                                               "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json",
                                               "vocab.txt"]
    assert sorted(os.listdir(paths["hf_pair"])) == ["discriminator", "generator"]
    run = sorted(name for name in os.listdir(paths["ours_run"]) if not name.startswith("ckpt-1."))
    assert run == ["checkpoint", "electra_config.json", "pretrained"]
    assert {"config.json", "task.json", "tokenizer.json", "vocab.txt"} <= set(os.listdir(paths["ours_preset"]))


@pytest.mark.parametrize("name", FORMATS)
def test_every_reader_gets_the_same_discriminator(checkpoints, name):
    from electra_tf.scoring import load_scorer
    from electra_tf.training.initialization import read_initial_weights
    from finetune.models import ElectraTextClassifier, ElectraTokenClassifier
    from finetune.runner import load_pretrained

    paths, expected = checkpoints
    path = paths[name]
    settings = BERT_UNCASED if name == "tf1" else CASED  # the reference's TF1 format records no casing

    finetuning = load_pretrained(path)
    assert finetuning.tokenizer_settings == settings and finetuning.vocab_file
    backbones = {"fine-tuning": finetuning.model.backbone}
    # export_model.py (--model=discriminator) and convert_checkpoint.py (the model the checkpoint holds).
    exported = load_checkpoint(path, "discriminator", "auto", allow_missing_head=name in HEADLESS,
                               argument="init_checkpoint")
    assert exported.tokenizer().settings == settings
    backbones["export"] = exported.model.backbone
    converted = load_checkpoint(path, None, "auto", allow_missing_head=name in HEADLESS, argument="from")
    assert converted.kind == ("pretrainer" if name in ("tf1", "hf_pair", "ours_run") else "discriminator")
    backbones["conversion"] = (converted.model.discriminator if converted.kind == "pretrainer"
                               else converted.model).backbone
    classifier = ElectraTextClassifier.from_preset(path, num_classes=2, max_seq_length=16)
    assert classifier.preprocessor.do_lower_case == settings.do_lower_case
    backbones["ElectraTextClassifier.from_preset"] = classifier.backbone
    backbones["ElectraTokenClassifier.from_preset"] = ElectraTokenClassifier.from_preset(
        path, tags=["O", "X"], max_seq_length=16).backbone
    for reader, backbone in backbones.items():
        assert_identical(encoder_weights(backbone), expected)

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
    assert initial.has_generator == (name in ("tf1", "hf_pair", "ours_run"))
    assert initial.tokenizer_settings == (None if name == "tf1" else CASED)
    assert_identical({name: initial.weights[name] for name in expected}, expected)


def test_a_transformers_tokenizer_json_without_tokenizer_config_gives_its_normalizer_casing(checkpoints,
                                                                                             tmp_path):
    import shutil

    paths, _ = checkpoints
    shutil.copytree(paths["hf"], tmp_path / "hf")
    os.remove(tmp_path / "hf" / "tokenizer_config.json")
    assert load_checkpoint(str(tmp_path / "hf")).tokenizer_settings == CASED
