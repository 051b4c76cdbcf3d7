"""How soon an encoder starts to read word order: masked LM on "[CLS] a a b b c c ... [SEP]".

    python scripts/word_order_probe.py --stack=electra --steps=1500
    python scripts/word_order_probe.py --stack=keras_hub --token_type --embedding_dropout=0.1

Every masked piece is the twin of a neighbour, so a model that reads order copies it (masked accuracy near 0.9) while
one that reads only the bag of pieces stays at 0.02-0.04. Two layers of 128 (2 heads, FFN 512), AdamW 1e-3 with
global clipping 1.0, batch 32, sequences of 32 from 300 ids, 4 masked. `--stack=electra` is this project's
`ElectraBackbone` (tiny preset: word, position and token-type embeddings, LayerNorm, dropout); `--stack=keras_hub` is
keras-hub's `TransformerEncoder` on word + position embeddings and a LayerNorm, to which `--token_type` and
`--embedding_dropout` add the two parts of BERT's embedding block; `--alibi` gives the electra stack ALiBi attention.
Prints the masked accuracy over every 100 steps as JSON lines (docs/cpu_budget.md).
"""

import json

from absl import flags

from electra_tf import cli

FLAGS = flags.FLAGS
flags.DEFINE_enum("stack", "electra", ["electra", "keras_hub"], "The encoder under test.")
flags.DEFINE_boolean("token_type", False, "keras_hub stack: add a token-type embedding (segment 0 everywhere).")
flags.DEFINE_float("embedding_dropout", 0.0, "keras_hub stack: dropout after the embedding LayerNorm.")
flags.DEFINE_float("dropout", 0.1, "Dropout of the Transformer layers (electra: also after the embeddings).")
flags.DEFINE_integer(
    "embedding_size",
    64,
    "electra stack: width of the embedding tables (64, the tiny preset's, is "
    "projected to the hidden 128; 128 has no projection).",
)
flags.DEFINE_boolean("alibi", False, "electra stack: add ALiBi's distance bias to the attention.")
flags.DEFINE_integer("steps", 600, "Optimizer steps.")
flags.DEFINE_integer("seed", 0, "Seed of the initialisation (the data are the same for every seed).")

VOCAB, LENGTH, BATCH, HIDDEN, MASKED, MASK_ID = 300, 32, 32, 128, 4, 4


def twin_batch(rng):
    """(masked input ids, original ids, mask) of [CLS] a a b b ... [SEP] with MASKED positions set to MASK_ID."""
    import numpy as np

    pairs = rng.integers(5, VOCAB, size=(BATCH, (LENGTH - 2) // 2))
    ids = np.concatenate([np.full((BATCH, 1), 2), np.repeat(pairs, 2, axis=1), np.full((BATCH, 1), 3)], axis=1)
    mask = np.zeros(ids.shape, bool)
    for row in mask:
        row[1 + rng.choice(LENGTH - 2, MASKED, replace=False)] = True
    return np.where(mask, MASK_ID, ids).astype(np.int32), ids.astype(np.int32), mask


def encoder():
    """(a callable from ids and `training` to [batch, length, HIDDEN] states, its trainable variables)."""
    import keras
    import keras_hub
    import tensorflow as tf

    if FLAGS.stack == "electra":
        from electra_tf.config import ElectraConfig
        from electra_tf.models.backbone import ElectraBackbone

        config = ElectraConfig.from_preset(
            "tiny",
            vocab_size=VOCAB,
            pad_id=0,
            unk_id=1,
            cls_id=2,
            sep_id=3,
            mask_id=MASK_ID,
            embedding_size=FLAGS.embedding_size,
            hidden_dropout=FLAGS.dropout,
            attention_dropout=FLAGS.dropout,
            alibi=FLAGS.alibi,
        )
        backbone = ElectraBackbone(**config.architecture())
        return (
            lambda ids, training: backbone.encode(
                {"input_ids": ids, "input_mask": tf.ones_like(ids), "segment_ids": tf.zeros_like(ids)},
                training=training,
            )
        ), backbone.trainable_variables
    initializer = keras.initializers.TruncatedNormal(stddev=0.02)
    ids = keras.Input((LENGTH,), dtype="int32")
    states = keras.layers.Embedding(VOCAB, HIDDEN, embeddings_initializer=initializer)(ids)
    states = states + keras_hub.layers.PositionEmbedding(LENGTH, initializer=initializer)(states)
    if FLAGS.token_type:
        states = states + keras.layers.Embedding(2, HIDDEN, embeddings_initializer=initializer)(
            keras.ops.zeros_like(ids)
        )
    states = keras.layers.LayerNormalization(epsilon=1e-12)(states)
    if FLAGS.embedding_dropout:
        states = keras.layers.Dropout(FLAGS.embedding_dropout)(states)
    for _ in range(2):
        states = keras_hub.layers.TransformerEncoder(
            512, 2, dropout=FLAGS.dropout, activation="gelu", layer_norm_epsilon=1e-12, kernel_initializer=initializer
        )(states)
    model = keras.Model(ids, states)
    return (lambda inputs, training: model(inputs, training=training)), model.trainable_variables


def main(argv):
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(FLAGS.seed)
    encode, variables = encoder()
    head = keras.layers.Dense(VOCAB)
    head.build((None, HIDDEN))
    variables = variables + head.trainable_variables
    optimizer = keras.optimizers.AdamW(1e-3, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0)

    @tf.function
    def train_step(inputs, targets, mask):
        with tf.GradientTape() as tape:
            logits = head(encode(inputs, True))
            losses = keras.losses.sparse_categorical_crossentropy(targets, logits, from_logits=True)
            loss = tf.reduce_mean(tf.boolean_mask(losses, mask))
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        correct = tf.equal(tf.argmax(logits, -1, output_type=tf.int32), targets)
        return tf.reduce_mean(tf.cast(tf.boolean_mask(correct, mask), tf.float32))

    data = np.random.default_rng(0)
    accuracies = []
    for step in range(1, FLAGS.steps + 1):
        accuracies.append(float(train_step(*twin_batch(data))))
        if step % 100 == 0 or step == FLAGS.steps:
            print(json.dumps({"step": step, "masked_accuracy": round(float(np.mean(accuracies)), 4)}), flush=True)
            accuracies = []


if __name__ == "__main__":
    cli.run(main)
