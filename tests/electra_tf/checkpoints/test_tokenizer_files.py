"""A Hugging Face directory's tokenizer files as transformers 4 and 5 write them: the vocabulary and casing read from
them, and the files refused."""

import json
import os
import shutil

import numpy as np
import pytest

from electra_tf.checkpoints.tokenizer_files import read_hf_tokenizer, vocab_file_of
from electra_tf.errors import CheckpointError
from electra_tf.models import load_checkpoint
from electra_tf.tokenizer import BERT_UNCASED, ElectraTokenizer, TokenizerSettings, load_vocab
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.fixtures import TRANSFORMERS_5_SAMPLE

CASED = TokenizerSettings(do_lower_case=False)


def _write_sample(directory, change=None):
    """`TRANSFORMERS_5_SAMPLE` in `directory`, after `change(files)` when given."""
    files = json.loads(json.dumps(TRANSFORMERS_5_SAMPLE))
    if change is not None:
        change(files)
    os.makedirs(directory, exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as handle:
            json.dump(content, handle)
    return str(directory)


def _cased(files):
    files["tokenizer.json"]["normalizer"]["lowercase"] = False
    files["tokenizer_config.json"]["do_lower_case"] = False


@pytest.mark.parametrize("change, settings", [(None, BERT_UNCASED), (_cased, CASED)])
def test_the_files_transformers_5_writes_give_their_vocabulary_and_casing(tmp_path, change, settings):
    directory = _write_sample(tmp_path, change)
    assert sorted(os.listdir(directory)) == ["tokenizer.json", "tokenizer_config.json"]
    assert load_vocab(vocab_file_of(directory)) == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "##s"]
    assert read_hf_tokenizer(directory) == settings


@pytest.mark.parametrize(
    "settings, expected",
    [
        # w1 is id 6, w4 id 9; "W1" and "ẃ4" are w1 and w4 lower-cased with accents stripped, [UNK] (1) in the cased
        # case.
        (BERT_UNCASED, [[2, 6, 6, 9, 3], [2, 7, 9, 1, 3]]),
        (CASED, [[2, 6, 1, 1, 3], [2, 7, 1, 1, 3]]),
    ],
)
def test_tokenizer_json_alone_gives_the_ids_of_the_directory_with_vocab_txt(tmp_path, settings, expected):
    vocab = fixtures.write_vocab(tmp_path / "vocab.txt")
    ids = {}
    for major in (4, 5):
        directory = tmp_path / f"transformers{major}"
        os.makedirs(directory)
        fixtures.write_transformers_tokenizer(directory, vocab, settings, major)
        assert ("vocab.txt" in os.listdir(directory)) == (major == 4)
        tokenizer = ElectraTokenizer.from_settings(vocab_file_of(directory), read_hf_tokenizer(directory))
        pieces = tokenizer.tokenize(["w1 W1 ẃ4", "w2 W4 w999"]).to_list()
        ids[major] = [[tokenizer.cls_id, *row, tokenizer.sep_id] for row in pieces]
    assert ids[5] == ids[4] == expected


def test_a_tokenizer_config_that_leaves_the_casing_out_takes_the_normalizers(tmp_path):
    def older_config(files):
        _cased(files)
        files["tokenizer_config.json"] = {"tokenizer_class": "ElectraTokenizer"}

    assert read_hf_tokenizer(_write_sample(tmp_path / "config", older_config)) == CASED
    only_config = _write_sample(tmp_path / "only_config", _cased)
    os.remove(os.path.join(only_config, "tokenizer.json"))
    assert read_hf_tokenizer(only_config) == CASED


@pytest.mark.parametrize(
    "recorded, normalizer, shown",
    [
        (
            {"do_lower_case": False},
            {},
            "(do_lower_case=False, strip_accents=None) and the normalizer of {json} "
            "(lowercase=True, strip_accents=None)",
        ),
        (
            {"strip_accents": False},
            {},
            "(do_lower_case=True, strip_accents=False) and the normalizer of {json} "
            "(lowercase=True, strip_accents=None)",
        ),
        (
            {},
            {"strip_accents": True, "lowercase": False},
            "(do_lower_case=True, strip_accents=None) and the normalizer "
            "of {json} (lowercase=False, strip_accents=True)",
        ),
    ],
)
def test_tokenizer_files_that_disagree_on_the_casing_are_refused_naming_both(tmp_path, recorded, normalizer, shown):
    def disagree(files):
        files["tokenizer_config.json"].update(recorded)
        files["tokenizer.json"]["normalizer"].update(normalizer)

    directory = _write_sample(tmp_path, disagree)
    config, tokenizer_json = os.path.join(directory, "tokenizer_config.json"), os.path.join(directory, "tokenizer.json")
    with pytest.raises(CheckpointError) as raised:
        read_hf_tokenizer(directory)
    assert str(raised.value) == (
        f"{config} {shown.format(json=tokenizer_json)} disagree on the tokenizer's casing; save the tokenizer again "
        "with the casing the model was trained with (transformers' save_pretrained), or correct the file that is "
        "wrong"
    )


def _rename(files, token, new):
    files["tokenizer.json"]["model"]["vocab"][new] = files["tokenizer.json"]["model"]["vocab"].pop(token)
    for added in files["tokenizer.json"]["added_tokens"]:
        if added["content"] == token:
            added["content"] = new


def _drop_the(files):
    del files["tokenizer.json"]["model"]["vocab"]["the"]


def _sentence_piece(files):
    files["tokenizer.json"]["model"]["type"] = "Unigram"


def _roberta_template(files):
    files["tokenizer.json"]["post_processor"]["special_tokens"]["<s>"] = {"id": "<s>", "ids": [5], "tokens": ["<s>"]}


@pytest.mark.parametrize(
    "change, reason",
    [
        (_sentence_piece, "holds a Unigram tokenizer, not ELECTRA's WordPiece one"),
        (
            lambda files: files["tokenizer.json"]["model"].update(unk_token="<unk>"),
            "has model.unk_token='<unk>', not BERT's '[UNK]'",
        ),
        (
            lambda files: files["tokenizer.json"]["model"].update(continuing_subword_prefix="@@"),
            "has model.continuing_subword_prefix='@@', not BERT's '##'",
        ),
        (lambda files: _rename(files, "[MASK]", "<mask>"), "lacks BERT's special tokens [MASK]"),
        (_roberta_template, "puts '<s>' around sequences, where BERT puts [CLS] and [SEP]"),
        (_drop_the, "has vocabulary ids that are not 0..5 (no token has id 5)"),
    ],
)
def test_a_tokenizer_json_electra_cannot_use_is_refused_and_a_vocab_txt_beside_it_is_read_instead(
    tmp_path, change, reason
):
    directory = _write_sample(tmp_path / "model", change)
    with pytest.raises(CheckpointError) as raised:
        vocab_file_of(directory)
    assert str(raised.value) == (
        f"{os.path.join(directory, 'tokenizer.json')} {reason}: copy the vocab.txt the model "
        f"was trained with into {directory}, where it is read instead"
    )
    shutil.copyfile(fixtures.write_vocab(tmp_path / "vocab.txt"), os.path.join(directory, "vocab.txt"))
    assert vocab_file_of(directory) == os.path.join(directory, "vocab.txt")


def test_a_transformers_model_without_tokenizer_files_asks_for_vocab_file_and_reads_with_it(tmp_path):
    from electra_tf.scoring import load_scorer
    from finetune.models.pretrained_parts import load_pretrained

    rng = np.random.default_rng(0)
    directory = fixtures.write_hf_directory(
        tmp_path / "model",
        fixtures.hf_discriminator_tensors(rng, fixtures.hf_embeddings(rng)),
        fixtures.hf_config(fixtures.DISCRIMINATOR_SIZES, "ElectraForPreTraining"),
        with_vocab=False,
    )
    with pytest.raises(CheckpointError) as raised:
        load_checkpoint(directory, argument="model_dir")
    assert str(raised.value) == (
        f"{directory} has an embedding table of 50 tokens, too few for BERT's special token ids, and no tokenizer to "
        "give them (no vocab.txt, nor a tokenizer.json holding one): pass vocab_file=<the vocab.txt it was trained "
        "with>"
    )
    assert raised.value.arguments == ("vocab_file",)
    vocab = fixtures.write_vocab(tmp_path / "vocab.txt")
    assert load_scorer(directory, vocab_file=vocab)[1].vocab_file == vocab
    assert load_pretrained(directory, vocab_file=vocab).tokenizer().vocab_file == vocab
    _write_sample(
        directory,
        lambda files: files["tokenizer.json"]["model"].update(
            vocab={token: index for index, token in enumerate(load_vocab(vocab))}
        ),
    )
    assert load_vocab(load_scorer(directory)[1].vocab_file) == load_vocab(vocab)
