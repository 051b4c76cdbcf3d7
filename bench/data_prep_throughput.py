"""Throughput of the pre-training data pipeline against a pure-Python WordPiece pipeline, in the same run.

    python bench/data_prep_throughput.py --corpus='../shared/data/corpus/nltk-gutenberg/*.txt' \\
        --vocab_file=../shared/data/vocab/bert-uncased-vocab.txt --num_processes=2

Both pipelines read the same files, deal documents to the same shards, build examples with the same rules and
random streams, and write TFRecords; they differ in tokenisation (tensorflow-text ops in batches vs BERT's
algorithm in Python, as the reference `tokenization.py`), serialisation (protobuf wire format vs tf.train.Example
objects) and parallelism (`--num_processes` vs one process). Their examples must be identical, which the benchmark
checks. Wall times are end to end, process start-up included. The last line printed is a JSON object.
"""

import json
import os
import sys
import tempfile
import time
import unicodedata

if __package__ in (None, ""):  # Run as a script: make the repository root importable.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import flags

import electra_tf.cli

_SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared", "data")
flags.DEFINE_string("corpus", os.path.join(_SHARED, "corpus", "nltk-gutenberg", "*.txt"), "Text files or globs.")
flags.DEFINE_string("vocab_file", os.path.join(_SHARED, "vocab", "bert-uncased-vocab.txt"), "BERT vocab.txt.")
flags.DEFINE_integer("num_processes", 2, "Processes of the tensorflow-text pipeline.")
flags.DEFINE_integer("num_shards", 8, "Output shards (both pipelines).")
flags.DEFINE_integer("max_seq_length", 128, "Example length.")
flags.DEFINE_integer(
    "repeat",
    4,
    "Read the corpus files this many times: 4 x 10 MB makes a corpus big enough for a "
    "second process to pay for its start-up (see pipeline.processes_worth_starting).",
)
FLAGS = flags.FLAGS


# ---- The pure-Python pipeline: BERT's basic + WordPiece tokenisation, tf.train.Example, one process. ----


def _is_whitespace(char):
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char):
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char):
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(cp):
    return any(
        low <= cp <= high
        for low, high in (
            (0x4E00, 0x9FFF),
            (0x3400, 0x4DBF),
            (0x20000, 0x2A6DF),
            (0x2A700, 0x2B73F),
            (0x2B740, 0x2B81F),
            (0x2B820, 0x2CEAF),
            (0xF900, 0xFAFF),
            (0x2F800, 0x2FA1F),
        )
    )


class PythonWordPieceTokenizer:
    """BERT's reference tokenisation (clean, CJK spacing, lower + accent strip, punctuation, WordPiece) in Python."""

    def __init__(self, vocab):
        self.vocab = {token: index for index, token in enumerate(vocab)}
        self.unk_id = self.vocab["[UNK]"]

    def basic_tokenize(self, text):
        cleaned = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or _is_control(char):
                continue
            cleaned.append(" " if _is_whitespace(char) else f" {char} " if _is_cjk(cp) else char)
        words = []
        for token in "".join(cleaned).split():
            token = unicodedata.normalize("NFD", token.lower())
            token = "".join(char for char in token if unicodedata.category(char) != "Mn")
            start = 0
            for i, char in enumerate(token):
                if _is_punctuation(char):
                    if i > start:
                        words.append(token[start:i])
                    words.append(char)
                    start = i + 1
            if start < len(token):
                words.append(token[start:])
        return words

    def wordpiece(self, word, ids):
        if len(word) > 100:
            ids.append(self.unk_id)
            return
        start, pieces = 0, []
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    pieces.append(self.vocab[piece])
                    break
                end -= 1
            else:
                ids.append(self.unk_id)
                return
            start = end
        ids.extend(pieces)

    def tokenize(self, text):
        ids = []
        for word in self.basic_tokenize(text):
            self.wordpiece(word, ids)
        return ids


def python_pipeline(files, vocab_file, output_dir, num_shards, max_seq_length, seed):
    """Builds the same shards as data_prep with pure-Python tokenisation in one process; returns examples, tokens."""
    import tensorflow as tf

    from data_prep import corpus as corpus_lib
    from data_prep.example_builder import ExampleBuilder
    from data_prep.shard_builder import shard_rng
    from electra_tf.tokenizer import load_vocab

    tokenizer = PythonWordPieceTokenizer(load_vocab(vocab_file))
    cls_id, sep_id = tokenizer.vocab["[CLS]"], tokenizer.vocab["[SEP]"]
    builders = [ExampleBuilder(max_seq_length, cls_id, sep_id, shard_rng(seed, i)) for i in range(num_shards)]
    writers = [tf.io.TFRecordWriter(os.path.join(output_dir, f"python-{i:05d}.tfrecord")) for i in range(num_shards)]

    def feature(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values.tolist()))

    num_examples = num_tokens = 0
    for index, document in enumerate(corpus_lib.iter_file_documents(files, errors="replace")):
        shard = index % num_shards
        for example in builders[shard].add_document([tokenizer.tokenize(line) for line in document]):
            proto = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "input_ids": feature(example.input_ids),
                        "input_mask": feature(example.input_mask),
                        "segment_ids": feature(example.segment_ids),
                    }
                )
            )
            writers[shard].write(proto.SerializeToString())
            num_examples += 1
            num_tokens += int(example.input_mask.sum())
    for writer in writers:
        writer.close()
    return num_examples, num_tokens


def _read_examples(paths):
    import tensorflow as tf

    from electra_tf.data.pretraining_dataset import FEATURE_NAMES

    examples = []
    for path in paths:
        for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
            feature = tf.train.Example.FromString(record).features.feature
            examples.append(tuple(tuple(feature[name].int64_list.value) for name in FEATURE_NAMES))
    return examples


def main(argv):
    del argv
    from data_prep import corpus as corpus_lib
    from data_prep import pipeline

    files = list(corpus_lib.parse_corpus(FLAGS.corpus).files) * FLAGS.repeat
    corpus_bytes = sum(os.path.getsize(path) for path in files)
    results = {
        "corpus": FLAGS.corpus,
        "repeat": FLAGS.repeat,
        "corpus_mb": round(corpus_bytes / 1e6, 2),
        "num_shards": FLAGS.num_shards,
        "max_seq_length": FLAGS.max_seq_length,
        "cpu_count": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory() as tmp:
        ours_dir, python_dir = os.path.join(tmp, "ours"), os.path.join(tmp, "python")
        os.makedirs(python_dir)
        start = time.perf_counter()
        manifest = pipeline.build_pretraining_data(
            ",".join(files),
            FLAGS.vocab_file,
            ours_dir,
            max_seq_length=FLAGS.max_seq_length,
            num_shards=FLAGS.num_shards,
            num_processes=FLAGS.num_processes,
            encoding_errors="replace",
            show_progress=False,
        )
        ours_seconds = time.perf_counter() - start
        start = time.perf_counter()
        python_examples, python_tokens = python_pipeline(
            files, FLAGS.vocab_file, python_dir, FLAGS.num_shards, FLAGS.max_seq_length, seed=manifest["seed"]
        )
        python_seconds = time.perf_counter() - start
        ours = _read_examples([os.path.join(ours_dir, s["file"]) for s in manifest["shards"]])
        theirs = _read_examples([os.path.join(python_dir, f"python-{i:05d}.tfrecord") for i in range(FLAGS.num_shards)])
    results["identical_examples"] = ours == theirs
    for name, seconds, examples, tokens in (
        ("tf_text", ours_seconds, manifest["num_examples"], manifest["num_tokens"]),
        ("pure_python", python_seconds, python_examples, python_tokens),
    ):
        results[name] = {
            "processes": FLAGS.num_processes if name == "tf_text" else 1,
            "seconds": round(seconds, 2),
            "examples": examples,
            "tokens": tokens,
            "examples_per_s": round(examples / seconds),
            "tokens_per_s": round(tokens / seconds),
        }
        print(
            f"{name:12s} {results[name]['processes']} proc  {seconds:7.2f} s  {examples / seconds:10.0f} examples/s  "
            f"{tokens / seconds:12.0f} tokens/s"
        )
    results["speedup"] = round(python_seconds / ours_seconds, 2)
    print(f"speed-up {results['speedup']}x; identical examples: {results['identical_examples']}")
    print(json.dumps(results))
    if not results["identical_examples"]:
        sys.exit(1)


if __name__ == "__main__":
    electra_tf.cli.run(main)
