"""Training runs with and without gradient accumulation, the same on one device and under MirroredStrategy.

    python -m tests.accumulation_run OUT.npz   # under MirroredStrategy on 2 logical CPUs

Logical devices can only be set up before TensorFlow initialises, hence a process of its own
(`tests/electra_tf/training/test_gradient_accumulation.py` starts it, and runs the functions below on one device
itself). Every run starts from the same seeded weights and sees the same batches; dropout is off (its masks are drawn
per replica and per micro-batch). Saved arrays: `<case>/<i>`, the trainable weights after the run, and
`<case>/logs/<name>`, its last logs, for the cases `pretraining_keras_adamw` (`train_pretrainer`; the accumulation is
the optimizer's input, so one optimizer under the strategy suffices, LAMB's accumulation being checked on one device)
and `classifier` (`train_classifier`), each with gradient_accumulation_steps=ACCUMULATION; `classifier_whole_batch`,
the classifier without accumulation (Keras averages the replicas' means, so a last batch split unevenly between the
replicas trains otherwise than on one device); and `dropout/logs/loss`, the loss of a pre-training run with dropout
under the strategy.
"""

import sys

import numpy as np

BATCH_SIZE = 8
ACCUMULATION = 4  # on two replicas, micro-batches of one example
STEPS = 2  # the second update starts from the first one's optimizer state: enough to show it carried over
CLIP_NORM = 0.05  # below every step's gradient norm: clipping is active
PRETRAINING_LENGTH = 32
CLASSIFIER_EXAMPLES = 21  # batches of 8, 8 and 5: the last one splits unevenly


def tiny_config(**overrides):
    """The tiny preset at one layer: every kind of weight is still in the update (what accumulation must sum), and the
    model is about a quarter cheaper to build and trace than at the preset's two."""
    from electra_tf.config import ElectraConfig

    return ElectraConfig.from_preset("tiny", num_layers=1, **overrides)


def pretraining_batches(steps=STEPS, batch_size=BATCH_SIZE, length=PRETRAINING_LENGTH):
    """{input_ids, input_mask, segment_ids} arrays of `steps` batches, rows padded to different lengths so that
    micro-batches and replicas hold unequal token counts."""
    rng = np.random.default_rng(7)
    ids = rng.integers(5, 300, size=(steps * batch_size, length)).astype(np.int32)
    ids[:, 0], ids[:, -1] = 2, 3
    mask = np.ones_like(ids)
    for row in range(0, len(ids), 3):
        ids[row, 8 + row % 20 :], mask[row, 8 + row % 20 :] = 0, 0
    return {"input_ids": ids, "input_mask": mask, "segment_ids": np.zeros_like(ids)}


def train_pretrainer(optimizer, gradient_accumulation_steps, dropout=0.0, strategy=None, jit_compile=False):
    """(trainable weights, last logs) of a `tiny_config` `ElectraPretrainer` after STEPS updates with `optimizer` (a
    name of `create_optimizer`) and global-norm clipping at CLIP_NORM."""
    import keras
    import tensorflow as tf

    from electra_tf.training.optimizers import create_optimizer
    from electra_tf.training.pretrainer import ElectraPretrainer

    config = tiny_config(
        vocab_size=300,
        pad_id=0,
        unk_id=1,
        cls_id=2,
        sep_id=3,
        mask_id=4,
        hidden_dropout=dropout,
        attention_dropout=dropout,
    )
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        keras.utils.set_random_seed(0)
        model = ElectraPretrainer(
            config,
            max_seq_length=PRETRAINING_LENGTH,
            clip_norm=CLIP_NORM,
            gradient_accumulation_steps=gradient_accumulation_steps,
        )
        model.compile(optimizer=create_optimizer(optimizer, 1e-3), jit_compile=jit_compile)
        model.optimizer.build(model.trainable_variables)
    dataset = tf.data.Dataset.from_tensor_slices(pretraining_batches()).batch(BATCH_SIZE)
    history = model.fit(dataset, epochs=1, verbose=0)
    return [variable.numpy() for variable in model.trainable_variables], {
        name: values[-1] for name, values in history.history.items()
    }


def classifier_data():
    """(x, y) of CLASSIFIER_EXAMPLES token-id examples of different lengths, 3 classes."""
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 50, size=(CLASSIFIER_EXAMPLES, 12)).astype(np.int32)
    mask = np.ones_like(ids)
    for row in range(CLASSIFIER_EXAMPLES):
        mask[row, 4 + row % 8 :] = 0
    x = {"token_ids": ids * mask, "segment_ids": np.zeros_like(ids), "padding_mask": mask}
    return x, rng.integers(0, 3, size=CLASSIFIER_EXAMPLES).astype(np.int32)


def train_classifier(
    gradient_accumulation_steps, strategy=None, epochs=2, jit_compile=False, concurrent_micro_batches=1
):
    """(trainable weights, last logs) of a `tiny_config` `ElectraTextClassifier` (dropout off) after `epochs` epochs
    of batches of BATCH_SIZE, with the fine-tuning optimizer; the logs hold a validation on the training data."""
    import keras
    import tensorflow as tf

    from electra_tf.models import build_discriminator
    from finetune.models import ElectraTextClassifier
    from finetune.optimization import create_finetuning_optimizer

    config = tiny_config(hidden_dropout=0.0, attention_dropout=0.0).with_vocab(
        50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4
    )
    steps = epochs * -(-CLASSIFIER_EXAMPLES // BATCH_SIZE)
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        keras.utils.set_random_seed(0)
        model = ElectraTextClassifier(build_discriminator(config).backbone, num_classes=3, dropout=0.0)
        model.compile(
            optimizer=create_finetuning_optimizer(model.num_layers, 1e-3, steps),
            gradient_accumulation_steps=gradient_accumulation_steps,
            concurrent_micro_batches=concurrent_micro_batches,
            jit_compile=jit_compile,
        )
    data = tf.data.Dataset.from_tensor_slices(classifier_data()).batch(BATCH_SIZE)
    history = model.fit(data, validation_data=data, epochs=epochs, verbose=0)
    return [variable.numpy() for variable in model.trainable_variables], {
        name: values[-1] for name, values in history.history.items()
    }


def _save(results, prefix, run):
    weights, logs = run
    for index, array in enumerate(weights):
        results[f"{prefix}/{index}"] = array
    for name, value in logs.items():
        results[f"{prefix}/logs/{name}"] = np.asarray(value)


def main(output):
    import tensorflow as tf

    from electra_tf.training.distribution import split_cpu

    split_cpu(2)
    strategy = tf.distribute.MirroredStrategy(devices=[device.name for device in tf.config.list_logical_devices("CPU")])
    results = {}
    _save(results, "pretraining_keras_adamw", train_pretrainer("keras_adamw", ACCUMULATION, strategy=strategy))
    _save(results, "classifier", train_classifier(ACCUMULATION, strategy=strategy))
    _save(results, "classifier_whole_batch", train_classifier(1, strategy=strategy))
    _, logs = train_pretrainer("keras_adamw", ACCUMULATION, dropout=0.1, strategy=strategy)
    results["dropout/logs/loss"] = np.asarray(logs["loss"])
    np.savez(output, **results)


if __name__ == "__main__":
    main(sys.argv[1])
