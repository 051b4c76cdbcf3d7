import os
import queue

import pytest

from data_prep import corpus as corpus_lib
from data_prep import parallel
from data_prep.shard_builder import BuildConfig
from electra_tf.errors import DataError
from tests.data_prep.helpers import write_corpus, write_vocab


def test_shard_groups_cover_every_shard_once():
    assert parallel.shard_groups(8, 1) == [list(range(8))]
    assert parallel.shard_groups(8, 2) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert parallel.shard_groups(3, 4) == [[0], [1], [2]]


def _config(tmp_path, vocab_file):
    return BuildConfig(
        corpus=corpus_lib.parse_corpus(write_corpus(tmp_path / "c.txt", 20)),
        vocab_file=vocab_file,
        do_lower_case=True,
        strip_accents=True,
        output_dir=str(tmp_path),
        max_seq_length=32,
        num_shards=2,
        seed=0,
        document_mode="blank_line",
        input_encoding="utf-8",
        encoding_errors="strict",
        tfds_options={},
    )


def _run_worker(config, tasks):
    task_queue, results = queue.Queue(), queue.Queue()
    for task in tasks:
        task_queue.put(task)
    parallel._worker_main(config, task_queue, results)
    return [results.get_nowait() for _ in range(results.qsize())]


def test_worker_reports_progress_and_results(tmp_path):
    config = _config(tmp_path, write_vocab(tmp_path / "vocab.txt"))
    messages = _run_worker(config, [(1, [1]), (0, [0]), None])
    done = [m for m in messages if m[0] == "done"]
    assert [(index, [e["file"] for e in entries]) for _, index, entries in done] == [
        (1, ["pretrain-00001-of-00002.tfrecord"]),
        (0, ["pretrain-00000-of-00002.tfrecord"]),
    ]
    assert sum(m[1] for m in messages if m[0] == "progress") == sum(e["num_examples"] for _, _, [e] in done)


def test_worker_reports_errors_for_the_parent_to_raise(tmp_path):
    messages = _run_worker(_config(tmp_path, str(tmp_path / "missing.txt")), [(0, [0]), None])
    assert len(messages) == 1 and messages[0][0] == "error"
    assert isinstance(messages[0][1], DataError) and "missing.txt does not exist" in str(messages[0][1])
    with pytest.raises(DataError):
        parallel.build_groups(_config(tmp_path, str(tmp_path / "missing.txt")), [[0], [1]], 2, lambda *a: None)


def test_spawned_workers_build_the_same_shards(tmp_path):
    vocab_file = write_vocab(tmp_path / "vocab.txt")
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    config = _config(tmp_path, vocab_file)
    progress = []
    entries_here = parallel.build_groups(config._replace(output_dir=str(here)), [[0], [1]], 1, lambda *a: None)
    entries_there = parallel.build_groups(
        config._replace(output_dir=str(there)), [[0], [1]], 1, lambda *a: progress.append(a), build_here=False
    )
    assert entries_there == entries_here
    assert sum(examples for examples, _ in progress) == sum(e["num_examples"] for [e] in entries_here)
    for name in os.listdir(here):
        assert (here / name).read_bytes() == (there / name).read_bytes()
