"""A small learnable pre-training corpus written straight to TFRecords (no tokenizer needed).

Each example counts upwards in steps of 3 through a 195-word vocabulary from a random start, so a model can learn
which token belongs at each position and replaced tokens are detectable.
"""

import numpy as np
import tensorflow as tf

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
NUM_WORDS = 195
VOCAB_SIZE = len(SPECIAL_TOKENS) + NUM_WORDS


def write_vocab(path):
    path.write_text("\n".join(SPECIAL_TOKENS + [f"w{i}" for i in range(NUM_WORDS)]) + "\n", encoding="utf-8")
    return str(path)


def examples(num_examples, max_seq_length, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(num_examples):
        length = int(rng.integers(max_seq_length // 2, max_seq_length + 1))
        start = int(rng.integers(0, NUM_WORDS))
        words = [(start + 3 * k) % NUM_WORDS + len(SPECIAL_TOKENS) for k in range(length - 2)]
        ids = [2] + words + [3] + [0] * (max_seq_length - length)
        mask = [1] * length + [0] * (max_seq_length - length)
        yield {"input_ids": ids, "input_mask": mask, "segment_ids": [0] * max_seq_length}


def write_tfrecords(path, num_examples=512, max_seq_length=32, seed=0):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for example in examples(num_examples, max_seq_length, seed):
            features = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=values))
                        for name, values in example.items()}
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    return str(path)
