"""A tensorflow-datasets text dataset (e.g. `wikipedia/20230601.en`, `c4/en`) as a pre-training corpus.

The dataset is downloaded and prepared once, in the main process, as `tfds` does on a connected machine; each output
shard then reads its own `tfds.even_splits` slice, so shards are independent of the number of processes.
"""

from electra_tf.errors import DataError


def _tfds():
    import tensorflow_datasets as tfds  # Slow to import; only needed for tfds corpora.

    return tfds


def prepare(name, *, split="train", text_key="text", data_dir=None, download=True):
    """Downloads and prepares `name` if needed; returns the split's size in bytes (None if unknown)."""
    tfds = _tfds()
    try:
        builder = tfds.builder(name, data_dir=data_dir)
        if download:
            builder.download_and_prepare()
    except tfds.core.registered.DatasetNotFoundError as error:
        raise DataError(
            f"corpus=tfds:{name}: unknown tensorflow-datasets dataset ({error})", arguments=("corpus",)
        ) from None
    except Exception as error:  # Network, disk and licence errors all end up here; name the dataset.
        raise DataError(
            f"corpus=tfds:{name}: cannot download or prepare it ({type(error).__name__}: {error}); "
            "check the connection or pass tfds_data_dir with a prepared copy",
            arguments=("corpus", "tfds_data_dir"),
        ) from None
    features = builder.info.features
    if text_key not in features:
        raise DataError(
            f"corpus=tfds:{name} has no feature {text_key!r} (it has {', '.join(features)}); "
            "pass tfds_text_key=<one of them>",
            arguments=("corpus", "tfds_text_key"),
        )
    # An empty split list means tfds does not know them yet (e.g. a mocked dataset); then reading will tell.
    if builder.info.splits and split not in builder.info.splits:
        raise DataError(
            f"corpus=tfds:{name} has no split {split!r} (it has {', '.join(builder.info.splits)}); "
            "pass tfds_split=<one of them>",
            arguments=("corpus", "tfds_split"),
        )
    return builder.info.splits[split].num_bytes or None if split in builder.info.splits else None


def iter_shard_texts(name, shard_index, num_shards, *, split="train", text_key="text", data_dir=None):
    """Yields the texts of slice `shard_index` of `num_shards` of an already prepared dataset, in order."""
    tfds = _tfds()
    shard_split = tfds.even_splits(split, n=num_shards)[shard_index]
    dataset = tfds.load(name, split=shard_split, data_dir=data_dir, download=False, shuffle_files=False)
    for record in dataset.as_numpy_iterator():
        text = record[text_key]
        yield text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
