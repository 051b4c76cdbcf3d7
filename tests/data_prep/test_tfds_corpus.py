import pytest
import tensorflow_datasets as tfds

from data_prep import pipeline, tfds_corpus
from electra_tf.data import make_pretraining_dataset
from electra_tf.errors import DataError
from tests.data_prep.helpers import write_vocab


def test_tfds_corpus_builds_shards(tmp_path):
    # tfds's mock serves random records for the real dataset's features, offline. It ignores split slicing (each
    # shard's tfds.even_splits slice gets all 40 records), so this pins the plumbing, not the slicing.
    with tfds.testing.mock_data(num_examples=40):
        texts = [list(tfds_corpus.iter_shard_texts("wikipedia/20230601.en", shard, 2)) for shard in range(2)]
        manifest = pipeline.build_pretraining_data(
            "tfds:wikipedia/20230601.en",
            write_vocab(tmp_path / "vocab.txt"),
            str(tmp_path / "out"),
            max_seq_length=32,
            num_shards=2,
            num_processes=1,
            show_progress=False,
        )
    assert len(texts[0]) == len(texts[1]) == 40
    assert manifest["num_documents"] == sum(bool(t.split()) for shard in texts for t in shard)
    batches = list(make_pretraining_dataset(f"{tmp_path}/out/*.tfrecord*", 32, 4, is_training=False))
    assert len(batches) == manifest["num_examples"] // 4 > 0


def test_unknown_text_feature_is_a_clear_error():
    with tfds.testing.mock_data(num_examples=2):
        with pytest.raises(DataError, match=r"has no feature 'body' \(it has title, text\); pass tfds_text_key="):
            tfds_corpus.prepare("wikipedia/20230601.en", text_key="body")


def test_unknown_dataset_is_a_clear_error():
    with pytest.raises(DataError, match=r"^corpus=tfds:no_such_dataset_xyz: unknown tensorflow-datasets dataset"):
        tfds_corpus.prepare("no_such_dataset_xyz")
