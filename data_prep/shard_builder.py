"""The work of one process: read the corpus, tokenise its shards' documents in batches, build and write examples.

Each shard has its own `random.Random(seed, shard)` and receives its documents in corpus order, so its bytes depend
only on the corpus, the vocabulary, the seed and the number of shards, not on which process builds it or with whom.
"""

import collections
import gc
import random

from data_prep import corpus as corpus_lib
from data_prep.example_builder import ExampleBuilder
from data_prep.shard_writer import ExampleSerializer, ShardWriter
from electra_tf.tokenizer import ElectraTokenizer

# Lines tokenised per TensorFlow call: large enough to amortise the op dispatch, small enough to bound memory.
TOKENIZE_BATCH_LINES = 4096

BuildConfig = collections.namedtuple(
    "BuildConfig",
    [
        "corpus",  # a corpus_lib.CorpusSpec
        "vocab_file",
        "do_lower_case",
        "strip_accents",
        "output_dir",
        "max_seq_length",
        "num_shards",
        "seed",
        "document_mode",
        "input_encoding",
        "encoding_errors",
        "tfds_options",  # dict of split, text_key, data_dir
    ],
)


def shard_rng(seed, shard_index):
    """The random generator of one shard (independent streams for different shards or seeds)."""
    return random.Random(f"electra-pretraining-data/{seed}/{shard_index}")


def tokenize_documents(tokenize_fn, documents):
    """Tokenises lists of lines in one call; returns, per document, its sentences as lists of ids.

    `tokenize_fn` is `ElectraTokenizer.tokenize`, run eagerly: with thousands of lines per call the op dispatch is
    negligible, and a tf.function would cost a second of tracing per process.
    """
    lines = [line for document in documents for line in document]
    if not lines:
        return [[] for _ in documents]
    ragged = tokenize_fn(lines)
    values = ragged.flat_values.numpy().tolist()
    splits = ragged.row_splits.numpy().tolist()
    tokenized, line = [], 0
    for document in documents:
        tokenized.append([values[splits[i] : splits[i + 1]] for i in range(line, line + len(document))])
        line += len(document)
    return tokenized


def iter_document_examples(config, tokenizer, shard_indices, on_progress=None):
    """Yields (shard_index, examples of one document) for the given shards' documents, in corpus order.

    `on_progress(num_examples, num_bytes)` is called after each tokenised batch with the examples built and the
    size of the text they came from.
    """
    builders = {
        index: ExampleBuilder(config.max_seq_length, tokenizer.cls_id, tokenizer.sep_id, shard_rng(config.seed, index))
        for index in shard_indices
    }
    documents = corpus_lib.iter_shard_documents(
        config.corpus,
        shard_indices,
        config.num_shards,
        document_mode=config.document_mode,
        encoding=config.input_encoding,
        errors=config.encoding_errors,
        tfds_options=config.tfds_options,
    )
    for batch, num_bytes in _batch_documents(documents):
        tokenized = tokenize_documents(tokenizer.tokenize, [document for _, document in batch])
        num_examples = 0
        for (shard_index, _), sentences in zip(batch, tokenized):
            examples = builders[shard_index].add_document(sentences)
            num_examples += len(examples)
            yield shard_index, examples
        if on_progress:
            on_progress(num_examples, num_bytes)


def _batch_documents(documents):
    """Groups (shard_index, document, num_bytes) into batches of about TOKENIZE_BATCH_LINES lines."""
    batch, num_lines, num_bytes = [], 0, 0
    for shard_index, document, document_bytes in documents:
        batch.append((shard_index, document))
        num_lines += len(document)
        num_bytes += document_bytes
        if num_lines >= TOKENIZE_BATCH_LINES:
            yield batch, num_bytes
            batch, num_lines, num_bytes = [], 0, 0
    if batch:
        yield batch, num_bytes


def build_shards(config, shard_indices, on_progress=None):
    """Writes the given shards of `config`; returns their manifest entries, in shard order."""
    tokenizer = ElectraTokenizer(config.vocab_file, config.do_lower_case, config.strip_accents)
    serializer = ExampleSerializer(tokenizer.vocab_size)
    writers = {index: ShardWriter(config.output_dir, index, config.num_shards, serializer) for index in shard_indices}
    # Millions of short-lived lists, none in reference cycles: the default collector thresholds would spend ~15% of
    # the time scanning them (and TensorFlow's objects, frozen here) for cycles that are not there.
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        for shard_index, examples in iter_document_examples(config, tokenizer, shard_indices, on_progress=on_progress):
            writer = writers[shard_index]
            writer.num_documents += 1
            for example in examples:
                writer.write(example)
    except BaseException:
        for writer in writers.values():
            writer.abort()
        raise
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    return [writers[index].close() for index in sorted(shard_indices)]
