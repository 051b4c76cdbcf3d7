import glob
import json
import os
import random

import numpy as np
import pytest

from data_prep import corpus as corpus_lib
from data_prep import example_builder, pipeline, shard_builder
from electra_tf.data import check_pretraining_data, make_pretraining_dataset
from electra_tf.errors import DataError
from electra_tf.tokenizer import ElectraTokenizer
from tests.data_prep.helpers import write_corpus, write_vocab


@pytest.fixture
def small_corpus(tmp_path):
    return write_corpus(tmp_path / "corpus.txt", 150, seed=1)


@pytest.fixture
def vocab_file(tmp_path):
    return write_vocab(tmp_path / "vocab.txt")


def _in_memory_examples(corpus, vocab_file, num_shards, seed, max_seq_length):
    """The examples of every shard, built directly: documents dealt round-robin, one generator per shard."""
    tokenizer = ElectraTokenizer(vocab_file)
    builders = [
        example_builder.ExampleBuilder(
            max_seq_length, tokenizer.cls_id, tokenizer.sep_id, shard_builder.shard_rng(seed, shard)
        )
        for shard in range(num_shards)
    ]
    shards = [[] for _ in range(num_shards)]
    for index, document in enumerate(corpus_lib.iter_file_documents([corpus])):
        sentences = tokenizer.tokenize(document).to_list()
        shards[index % num_shards].extend(builders[index % num_shards].add_document(sentences))
    return [example for shard in shards for example in shard]


def _shard_bytes(directory):
    return {os.path.basename(p): open(p, "rb").read() for p in sorted(glob.glob(f"{directory}/*.tfrecord*"))}


def test_round_trip_text_to_shards_to_batches(tmp_path, small_corpus, vocab_file):
    out = str(tmp_path / "out")
    manifest = pipeline.build_pretraining_data(
        small_corpus, vocab_file, out, max_seq_length=64, num_shards=3, num_processes=1, seed=5, show_progress=False
    )
    expected = _in_memory_examples(small_corpus, vocab_file, 3, seed=5, max_seq_length=64)
    assert manifest["num_examples"] == len(expected) > 100
    assert manifest["num_tokens"] == sum(int(e.input_mask.sum()) for e in expected)
    batches = list(make_pretraining_dataset(f"{out}/*.tfrecord*", 64, 8, is_training=False))
    assert len(batches) == len(expected) // 8
    for b, batch in enumerate(batches):
        for name, index in (("input_ids", 0), ("input_mask", 1), ("segment_ids", 2)):
            want = np.stack([example[index] for example in expected[8 * b : 8 * b + 8]])
            np.testing.assert_array_equal(batch[name].numpy(), want)


def test_same_seed_same_shards_whatever_the_number_of_processes(tmp_path, small_corpus, vocab_file):
    def build(name, seed, processes):
        pipeline.build_pretraining_data(
            small_corpus,
            vocab_file,
            str(tmp_path / name),
            max_seq_length=32,
            num_shards=4,
            num_processes=processes,
            seed=seed,
            show_progress=False,
        )
        return _shard_bytes(tmp_path / name)

    one_process = build("a", 1, 1)
    assert len(one_process) == 4
    assert build("b", 1, 2) == one_process
    assert build("c", 2, 1) != one_process


def test_manifest_records_counts_and_settings(tmp_path, small_corpus, vocab_file):
    out = tmp_path / "out"
    manifest = pipeline.build_pretraining_data(
        small_corpus, vocab_file, str(out), max_seq_length=48, num_shards=2, show_progress=False
    )
    assert json.loads((out / "manifest.json").read_text()) == {"format_version": 1, **manifest}
    tokenizer = ElectraTokenizer(vocab_file)
    assert manifest["max_seq_length"] == 48
    assert manifest["vocab_size"] == tokenizer.vocab_size
    assert manifest["vocab_fingerprint"] == tokenizer.fingerprint()
    assert manifest["num_documents"] == 150
    assert [s["file"] for s in manifest["shards"]] == [
        "pretrain-00000-of-00002.tfrecord",
        "pretrain-00001-of-00002.tfrecord",
    ]
    assert sum(s["num_examples"] for s in manifest["shards"]) == manifest["num_examples"]
    assert all(s["num_bytes"] == os.path.getsize(out / s["file"]) for s in manifest["shards"])
    assert manifest["arguments"]["corpus"] == small_corpus and manifest["arguments"]["seed"] == 12345


def test_progress_bar_ends_on_the_whole_corpus_and_the_example_count(tmp_path, small_corpus, vocab_file, capsys):
    manifest = pipeline.build_pretraining_data(
        small_corpus, vocab_file, str(tmp_path / "out"), max_seq_length=48, num_shards=2
    )
    last = capsys.readouterr().out.strip().splitlines()[-1]
    kib = -(-os.path.getsize(small_corpus) // 1024)
    assert f"{kib}/{kib}" in last and "/KiB" in last
    assert f" - examples: {manifest['num_examples']}.0000 - examples/s: " in last


def test_processes_are_capped_by_shards_and_data_size():
    mib = 1024 * 1024
    assert pipeline.processes_worth_starting(8, 10 * mib, 8) == 1
    assert pipeline.processes_worth_starting(8, 40 * mib, 8) == 2
    assert pipeline.processes_worth_starting(8, 10_000 * mib, 4) == 4
    assert pipeline.processes_worth_starting(8, None, 100) == 8


def test_default_shard_count_follows_data_size_not_processes():
    assert pipeline.default_num_shards(10_000) == 1
    assert pipeline.default_num_shards(3 * 1024 * 1024) == 3
    assert pipeline.default_num_shards(100 * 1024 * 1024) == 8
    assert pipeline.default_num_shards(20 * 1024**3) == 640
    assert pipeline.default_num_shards(200 * 1024**3) == 1024


def test_empty_corpus_is_a_clear_error(tmp_path, vocab_file):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(DataError, match=rf"^corpus={empty} is empty"):
        pipeline.build_pretraining_data(str(empty), vocab_file, str(tmp_path / "out"), show_progress=False)
    blank = tmp_path / "blank.txt"
    blank.write_text("\n \n\t\n\x0c\n")
    with pytest.raises(DataError, match=r"produced no examples"):
        pipeline.build_pretraining_data(str(blank), vocab_file, str(tmp_path / "out"), show_progress=False)
    assert glob.glob(str(tmp_path / "out" / "*")) == []


def test_missing_vocabulary_is_a_clear_error(tmp_path, small_corpus):
    with pytest.raises(DataError, match=r"missing\.txt does not exist: pass vocab_file="):
        pipeline.build_pretraining_data(
            small_corpus, str(tmp_path / "missing.txt"), str(tmp_path / "out"), show_progress=False
        )
    assert not (tmp_path / "out").exists()


def test_non_utf8_corpus_is_a_clear_error(tmp_path, vocab_file):
    bad = tmp_path / "caesar.txt"
    bad.write_bytes(b"Friends, Romans.\n\nC\xe6sar is dead.\n")
    with pytest.raises(DataError, match=rf"{bad} line 3 is not valid utf-8.*pass input_encoding=latin-1"):
        pipeline.build_pretraining_data(
            str(bad), vocab_file, str(tmp_path / "out"), num_shards=2, num_processes=2, show_progress=False
        )
    assert glob.glob(str(tmp_path / "out" / "*")) == []
    manifest = pipeline.build_pretraining_data(
        str(bad), vocab_file, str(tmp_path / "out"), num_shards=2, input_encoding="latin-1", show_progress=False
    )
    assert manifest["num_examples"] == 2


def test_interrupted_build_leaves_no_shard_that_looks_complete(tmp_path, small_corpus, vocab_file, monkeypatch):
    calls = []
    original = example_builder.ExampleBuilder.add_document

    def interrupt_midway(self, sentences):
        calls.append(1)
        if len(calls) == 60:
            raise KeyboardInterrupt
        return original(self, sentences)

    monkeypatch.setattr(example_builder.ExampleBuilder, "add_document", interrupt_midway)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        pipeline.build_pretraining_data(small_corpus, vocab_file, str(out), num_shards=3, show_progress=False)
    assert not out.exists(), "the build created the directory, so a failed build removes it"
    with pytest.raises(DataError, match="matches no file"):
        check_pretraining_data(f"{out}/*.tfrecord*", 128)


def test_rebuild_replaces_previous_output_but_not_foreign_files(tmp_path, small_corpus, vocab_file):
    out = tmp_path / "out"
    pipeline.build_pretraining_data(small_corpus, vocab_file, str(out), num_shards=3, show_progress=False)
    (out / "incomplete-00000-of-00003.tmp").write_bytes(b"left by a killed run")
    pipeline.build_pretraining_data(small_corpus, vocab_file, str(out), num_shards=2, show_progress=False)
    assert sorted(os.listdir(out)) == [
        "manifest.json",
        "pretrain-00000-of-00002.tfrecord",
        "pretrain-00001-of-00002.tfrecord",
    ]
    (out / "other.tfrecord").write_bytes(b"")
    with pytest.raises(DataError, match=r"already holds other TFRecord files .*other\.tfrecord"):
        pipeline.build_pretraining_data(small_corpus, vocab_file, str(out), num_shards=2, show_progress=False)


def test_shard_generators_are_independent():
    draws = {
        (seed, shard): random.Random(shard_builder.shard_rng(seed, shard).random()).random()
        for seed in (0, 1)
        for shard in (0, 1)
    }
    assert len(set(draws.values())) == 4
    assert shard_builder.shard_rng(3, 7).random() == shard_builder.shard_rng(3, 7).random()
