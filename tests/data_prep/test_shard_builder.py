import os

import pytest

from data_prep import corpus as corpus_lib
from data_prep import shard_builder
from electra_tf.errors import DataError
from electra_tf.tokenizer import ElectraTokenizer
from tests.data_prep.helpers import write_corpus, write_vocab


def _config(tmp_path, corpus, **overrides):
    settings = dict(
        corpus=corpus_lib.parse_corpus(corpus),
        vocab_file=write_vocab(tmp_path / "vocab.txt"),
        do_lower_case=True,
        strip_accents=True,
        output_dir=str(tmp_path),
        max_seq_length=32,
        num_shards=3,
        seed=0,
        document_mode="blank_line",
        input_encoding="utf-8",
        encoding_errors="strict",
        tfds_options={},
    )
    settings.update(overrides)
    return shard_builder.BuildConfig(**settings)


def test_tokenize_documents_keeps_documents_and_lines_apart(tmp_path):
    tokenizer = ElectraTokenizer(write_vocab(tmp_path / "vocab.txt"))
    documents = [["the model", "a"], [], ["text"]]
    tokenized = shard_builder.tokenize_documents(tokenizer.tokenize, documents)
    assert [[tokenizer.convert_ids_to_tokens(line) for line in document] for document in tokenized] == [
        [["the", "model"], ["a"]],
        [],
        [["text"]],
    ]


def test_documents_reach_their_shards_in_order_with_progress(tmp_path, monkeypatch):
    monkeypatch.setattr(shard_builder, "TOKENIZE_BATCH_LINES", 5)  # several batches
    corpus = write_corpus(tmp_path / "c.txt", 30)
    config = _config(tmp_path, corpus)
    tokenizer = ElectraTokenizer(config.vocab_file)
    progress = []
    results = list(
        shard_builder.iter_document_examples(config, tokenizer, [0, 2], on_progress=lambda *args: progress.append(args))
    )
    assert [shard for shard, _ in results] == [i % 3 for i in range(30) if i % 3 != 1]
    assert len(progress) > 3
    assert sum(examples for examples, _ in progress) == sum(len(examples) for _, examples in results)
    assert 0 < sum(num_bytes for _, num_bytes in progress) <= os.path.getsize(corpus)


def test_a_failure_removes_every_partial_shard(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good line\n\n" * 50 + b"\xff\n")
    with pytest.raises(DataError, match="not valid utf-8"):
        shard_builder.build_shards(_config(tmp_path, str(bad)), [0, 1, 2])
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "vocab.txt"]
