"""Learning a WordPiece vocabulary with tensorflow-text's learner, and validating an existing BERT vocab.txt.

Words are counted with the project's own `BasicTokenizer` (BERT's splitting and normalisation), the same one the
tokenizer applies before WordPiece, so the learned pieces are exactly the units the tokenizer will look up.
"""

import collections
import os

import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from data_prep import corpus as corpus_lib
from data_prep import tfds_corpus
from electra_tf.errors import DataError
from electra_tf.tokenizer import SPECIAL_TOKENS, BasicTokenizer, load_vocab

# [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0..4, then the learned pieces.
RESERVED_TOKENS = SPECIAL_TOKENS
_COUNT_BATCH_LINES = 8192


def count_words(
    corpus,
    *,
    do_lower_case=True,
    strip_accents=None,
    document_mode="blank_line",
    encoding="utf-8",
    errors="strict",
    tfds_options=None,
    max_documents=None,
):
    """collections.Counter of normalised words in a `corpus` (files or tfds:<name>)."""
    spec = corpus_lib.parse_corpus(corpus)
    if spec.tfds_name:
        tfds_corpus.prepare(spec.tfds_name, **(tfds_options or {}))
    basic = BasicTokenizer(do_lower_case, strip_accents)
    split = tf.function(
        lambda texts: basic.split_words(texts)[0].flat_values, input_signature=[tf.TensorSpec([None], tf.string)]
    )
    counts = collections.Counter()
    lines = []

    def flush():
        if lines:
            counts.update(split(lines).numpy().tolist())
            lines.clear()

    documents = corpus_lib.iter_shard_documents(
        spec, [0], 1, document_mode=document_mode, encoding=encoding, errors=errors, tfds_options=tfds_options
    )
    for index, (_, document, _) in enumerate(documents):
        if max_documents is not None and index >= max_documents:
            break
        lines.extend(document)
        if len(lines) >= _COUNT_BATCH_LINES:
            flush()
    flush()
    return collections.Counter({word.decode("utf-8"): count for word, count in counts.items()})


def learn_vocab(word_counts, vocab_size, reserved_tokens=RESERVED_TOKENS, **learn_params):
    """A WordPiece vocabulary (list of tokens, at most `vocab_size`) with `reserved_tokens` first."""
    if not word_counts:
        raise DataError("the corpus has no words to learn a vocabulary from; check corpus", arguments=("corpus",))
    if vocab_size <= len(reserved_tokens):
        raise DataError(
            f"vocab_size={vocab_size} leaves no room after the {len(reserved_tokens)} reserved tokens",
            arguments=("vocab_size",),
        )
    # The learner's default lower threshold (10) would leave a small corpus short of vocab_size.
    learn_params.setdefault("lower_thresh", 2)
    vocab = learner.learn(sorted(word_counts.items()), vocab_size, list(reserved_tokens), **learn_params)
    if list(vocab[: len(reserved_tokens)]) != list(reserved_tokens):
        raise AssertionError("the learner did not put the reserved tokens first")
    return vocab


def write_vocab(vocab, output):
    """Writes one token per line to `output` atomically."""
    directory = os.path.dirname(os.path.abspath(output))
    os.makedirs(directory, exist_ok=True)
    temporary = f"{output}.tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write("".join(f"{token}\n" for token in vocab))
    os.replace(temporary, output)


def check_existing_vocab(vocab_file):
    """Loads a BERT-style vocab.txt, DataError unless it has all reserved tokens; returns the token list."""
    vocab = load_vocab(vocab_file)
    missing = [token for token in RESERVED_TOKENS if token not in vocab]
    if missing:
        raise DataError(
            f"vocab_file={vocab_file} lacks {' '.join(missing)}; it must be a BERT-style vocab.txt",
            arguments=("vocab_file",),
        )
    return vocab
