"""Whether a pre-training run's discriminator has collapsed: its last-layer token states on held-out sequences.

    python scripts/representation_collapse.py --model_dir=runs/cpu --checkpoints=init,ckpt-500,ckpt-4000 \\
        --eval_tfrecords='data/heldout/*.tfrecord'

For each checkpoint of `--model_dir` (`init`: the run's architecture freshly initialised with --seed) it prints one
JSON line: the mean cosine similarity of random pairs of token states (`electra_tf.analysis.similarity.anisotropy`),
their effective rank (`effective_rank`), and the mean and standard deviation over tokens of the replaced-token
logit. A discriminator that answers "original" whatever the input has states of effective rank near 1-3 (a fresh
one: ~40-50 at hidden size 128-256), and fine-tunes worse than a fresh network (docs/cpu_budget.md).

With a generator (or under the `mlm` objective: the network's own) it also prints the masked-LM accuracy on the
sequences as written (`mlm_accuracy`) and with the tokens between [CLS] and the last [SEP] of each shuffled
(`mlm_accuracy_shuffled`): a network that has learned to use word order loses accuracy on shuffled text; one that
predicts from the bag of words around the mask does not.
"""

import json
import os

from absl import flags

from electra_tf import cli

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "A pre-training run's directory (electra-pretrain --model_dir).")
flags.DEFINE_list("checkpoints", ["init"], "Checkpoints of --model_dir (ckpt-N), or init for a fresh network.")
flags.DEFINE_string("eval_tfrecords", None, "Held-out pre-training TFRecords (the run's --eval_tfrecords).")
flags.DEFINE_integer("num_sequences", 16, "Held-out sequences to read (every real token of them is a state).")
flags.DEFINE_integer("seed", 0, "Initialisation seed of `init`.")


def masked_lm_accuracy(model, inputs):
    """The argmax accuracy at the masked positions of `inputs` (the draws of step 0) of the generator, or of the
    network itself under the `mlm` objective."""
    outputs = model.pretraining_outputs(inputs, 0)
    masked = outputs["masked"]
    weights = masked.masked_lm_weights.numpy() > 0
    predictions = outputs.get("mlm_logits", outputs.get("model_mlm_logits")).numpy().argmax(-1)
    return float((predictions == masked.masked_lm_ids.numpy())[weights].mean())


def main(argv):
    import keras
    import numpy as np
    import tensorflow as tf

    from electra_tf.analysis.similarity import anisotropy, effective_rank
    from electra_tf.config import ElectraConfig
    from electra_tf.data.pretraining_dataset import make_pretraining_dataset
    from electra_tf.errors import ConfigError, DataError
    from electra_tf.training.pretrainer import ElectraPretrainer
    from electra_tf.training.pretraining_job import CONFIG_FILE

    if not FLAGS.model_dir or not FLAGS.eval_tfrecords:
        raise ConfigError("--model_dir and --eval_tfrecords are required")
    config = ElectraConfig.load(os.path.join(FLAGS.model_dir, CONFIG_FILE))
    with open(os.path.join(FLAGS.model_dir, "pretraining_job.json"), encoding="utf-8") as handle:
        length = json.load(handle)["max_seq_length"]
    batch = next(
        iter(make_pretraining_dataset(FLAGS.eval_tfrecords.split(","), length, FLAGS.num_sequences, is_training=False))
    )
    inputs = {name: tf.cast(batch[name], tf.int32) for name in ("input_ids", "input_mask", "segment_ids")}
    real = batch["input_mask"].numpy().astype(bool)
    shuffled = inputs["input_ids"].numpy().copy()
    order = np.random.default_rng(FLAGS.seed)
    for row, length in zip(shuffled, real.sum(axis=1)):
        row[1 : length - 1] = order.permutation(row[1 : length - 1])
    shuffled = tf.constant(shuffled)
    for name in FLAGS.checkpoints:
        keras.utils.set_random_seed(FLAGS.seed)
        model = ElectraPretrainer(config, max_seq_length=length)
        model.pretraining_outputs(batch, 0)  # builds every variable before the restore
        if name != "init":
            path = os.path.join(FLAGS.model_dir, name)
            if not tf.io.gfile.exists(path + ".index"):
                raise DataError(
                    f"{path} does not exist: pass --checkpoints among the ckpt-N of {FLAGS.model_dir} (or init)"
                )
            tf.train.Checkpoint(model=model).restore(path).expect_partial()
        states = model.discriminator.backbone.encode(inputs, training=False)
        logits = np.asarray(model.discriminator.replaced_token_head(states), np.float64).reshape(real.shape)[real]
        states = np.asarray(states, np.float64)[real]
        result = {
            "checkpoint": name,
            "mean_cosine": round(anisotropy(states), 4),
            "effective_rank": round(effective_rank(states), 2),
            "logit_mean": round(float(logits.mean()), 4),
            "logit_std": round(float(logits.std()), 4),
        }
        if model.generator is not None or config.objective == "mlm":
            result["mlm_accuracy"] = round(masked_lm_accuracy(model, inputs), 4)
            result["mlm_accuracy_shuffled"] = round(masked_lm_accuracy(model, dict(inputs, input_ids=shuffled)), 4)
        print(json.dumps(result), flush=True)
        keras.backend.clear_session()


if __name__ == "__main__":
    cli.run(main)
