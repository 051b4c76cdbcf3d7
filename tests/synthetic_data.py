"""A small learnable pre-training corpus written straight to TFRecords (no tokenizer needed).

The 195 words form 13 disjoint "topics" of 15 words; each example draws its words from one topic. A generator that has
not learnt the topics samples off-topic words, which a discriminator can spot from the example's other words, so
replaced-token detection can be learnt in a few hundred steps (contextual detection in real text takes a tiny
model thousands).
"""

import numpy as np
import tensorflow as tf

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
NUM_WORDS = 195
NUM_TOPICS = 13
VOCAB_SIZE = len(SPECIAL_TOKENS) + NUM_WORDS


def write_vocab(path):
    path.write_text("\n".join(SPECIAL_TOKENS + [f"w{i}" for i in range(NUM_WORDS)]) + "\n", encoding="utf-8")
    return str(path)


def examples(num_examples, max_seq_length, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(num_examples):
        length = int(rng.integers(max_seq_length // 2, max_seq_length + 1))
        topic = int(rng.integers(0, NUM_TOPICS))
        topic_size = NUM_WORDS // NUM_TOPICS
        words = (len(SPECIAL_TOKENS) + topic * topic_size + rng.integers(0, topic_size, size=length - 2)).tolist()
        ids = [2] + words + [3] + [0] * (max_seq_length - length)
        mask = [1] * length + [0] * (max_seq_length - length)
        yield {"input_ids": ids, "input_mask": mask, "segment_ids": [0] * max_seq_length}


def write_tfrecords(path, num_examples=512, max_seq_length=32, seed=0):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for example in examples(num_examples, max_seq_length, seed):
            features = {
                name: tf.train.Feature(int64_list=tf.train.Int64List(value=values)) for name, values in example.items()
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    return str(path)
