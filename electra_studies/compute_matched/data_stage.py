"""The experiment's data stage: the vocabulary and the training and held-out TFRecords under <output_dir>/data,
built once."""

import os
import time

from electra_tf.io_utils import atomic_write_text
from electra_tf.training.resumption import check_or_write_settings


def prepare_data(settings, files, heldout):
    """(vocab path, TFRecord glob, held-out TFRecord glob or None) under <output_dir>/data, built once: the vocabulary
    and the training TFRecords from `files`, the held-out TFRecords from `heldout` with that vocabulary."""
    from data_prep import pipeline, wordpiece_vocab

    directory = os.path.join(settings.output_dir, "data")
    check_or_write_settings(
        os.path.join(directory, "settings.json"),
        {
            "corpus": [[os.path.abspath(path), os.path.getsize(path)] for path in files],
            "heldout": [[os.path.abspath(path), os.path.getsize(path)] for path in heldout],
            "vocab_size": None if settings.vocab_file else settings.vocab_size,
            "vocab_file": os.path.abspath(settings.vocab_file) if settings.vocab_file else None,
            "max_seq_length": settings.max_seq_length,
            "document_mode": settings.document_mode,
            "input_encoding": settings.input_encoding,
            "encoding_errors": settings.encoding_errors,
        },
        "data",
        "output_dir",
    )
    vocab = os.path.join(directory, "vocab.txt")
    if not os.path.exists(vocab):
        start = time.time()
        if settings.vocab_file:
            wordpiece_vocab.check_existing_vocab(settings.vocab_file)
            atomic_write_text(vocab, open(settings.vocab_file, encoding="utf-8").read())
        else:
            counts = wordpiece_vocab.count_words(
                ",".join(files),
                document_mode=settings.document_mode,
                encoding=settings.input_encoding,
                errors=settings.encoding_errors,
            )
            wordpiece_vocab.write_vocab(wordpiece_vocab.learn_vocab(counts, settings.vocab_size), vocab)
        print(f"vocabulary: {vocab} in {time.time() - start:.0f}s", flush=True)
    globs = []
    for name, sources in (("tfrecords", files), ("heldout_tfrecords", heldout)):
        records = os.path.join(directory, name)
        globs.append(os.path.join(records, "*.tfrecord*") if sources else None)
        if sources and not os.path.exists(os.path.join(records, "manifest.json")):
            start = time.time()
            manifest = pipeline.build_pretraining_data(
                ",".join(sources),
                vocab,
                records,
                max_seq_length=settings.max_seq_length,
                num_processes=os.cpu_count() or 1,
                document_mode=settings.document_mode,
                input_encoding=settings.input_encoding,
                encoding_errors=settings.encoding_errors,
                show_progress=False,
            )
            print(
                f"{name.replace('_', ' ')}: {manifest['num_examples']} examples of {settings.max_seq_length} tokens "
                f"from {len(sources)} files in {time.time() - start:.0f}s",
                flush=True,
            )
    return vocab, globs[0], globs[1]
