"""Run the pre-training step on several replicas and on one device, and save what the tests compare.

    python -m tests.replica_run mirrored N OUT.npz [SIZES]  # Mirrored on N logical CPUs
    TF_CONFIG=... python -m tests.replica_run multi_worker N OUT.npz   # one of the N workers of a cluster

Logical devices and a cluster can only be set up before TensorFlow initialises, and two Mirrored strategies of one
process clash in their collectives' group keys, hence a process per layout
(`tests/electra_tf/training/test_replica_updates.py` starts it). The single-device references are computed by the
process given SIZES (comma-separated replica counts), once for every layout: every process starts from the same seeded
weights. Saved arrays (`name/index` per trainable variable):
`reference/*` the single-device gradients of the global batch, `slice0_n{N}/*` the single-device gradients of the first
1/N of the batch with the global batch's counts (what replica 0 of N must compute) for each N of SIZES,
`replica{r}_n{N}/*` replica r's own
gradients, `reduced{r}_n{N}/*` the all-reduced gradients replica r holds, `sgd_reference/*` and `sgd_n{N}/*` the
weights after SGD_STEPS plain SGD steps without clipping (and `initial/*` before them); under mirrored also
`all_reduce{r}/*` and `apply_if_{condition}/*` (see `mirrored_unit_checks`). Each worker saves its own replica only.
"""

import json
import os
import sys

import numpy as np

GLOBAL_BATCH = 12  # splits evenly over 2 and 3 replicas
SGD_STEPS = 4
LEARNING_RATE = 0.05  # large enough that a wrong gradient scale moves the weights far beyond float32 noise


def _config():
    from electra_tf.config import ElectraConfig

    # Dropout off: Keras draws dropout masks per replica. One layer: every kind of weight is still there, at less cost
    # to build and trace than the preset's two.
    return ElectraConfig.from_preset(
        "tiny",
        num_layers=1,
        vocab_size=300,
        pad_id=0,
        unk_id=1,
        cls_id=2,
        sep_id=3,
        mask_id=4,
        hidden_dropout=0.0,
        attention_dropout=0.0,
    )


def _batches(count, length=32):
    rng = np.random.default_rng(7)
    batches = []
    for _ in range(count):
        ids = rng.integers(5, 300, size=(GLOBAL_BATCH, length)).astype(np.int32)
        ids[:, 0], ids[:, -1] = 2, 3
        mask = np.ones_like(ids)
        for row in range(0, GLOBAL_BATCH, 4):  # padding of different lengths, so replicas hold unequal counts
            ids[row, 10 + row :], mask[row, 10 + row :] = 0, 0
        batches.append({"input_ids": ids, "input_mask": mask, "segment_ids": np.zeros_like(ids)})
    return batches


def _model(strategy, initial_weights=None):
    import keras

    from electra_tf.training.pretrainer import ElectraPretrainer

    with strategy.scope():
        keras.utils.set_random_seed(0)
        model = ElectraPretrainer(_config(), max_seq_length=32, seed=0, clip_norm=0)
        model.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE))
        model.optimizer.build(model.trainable_variables)
    if initial_weights is not None:
        model.set_weights(initial_weights)
    return model


def _save(results, prefix, arrays):
    import tensorflow as tf

    for index, array in enumerate(arrays):
        results[f"{prefix}/{index}"] = np.asarray(tf.convert_to_tensor(array))


def _distribute(strategy, batch):
    local = GLOBAL_BATCH // strategy.num_replicas_in_sync

    def value_fn(context):
        start = context.replica_id_in_sync_group * local
        return {name: value[start : start + local] for name, value in batch.items()}

    return strategy.experimental_distribute_values_from_function(value_fn)


def single_device(results, sizes, references=True):
    """The initial weights, and with `references` the single-device gradients of the global batch and of each first
    slice, and the SGD weights."""
    import tensorflow as tf

    model = _model(tf.distribute.get_strategy())
    initial = model.get_weights()
    if not references:
        return initial
    _save(results, "initial", [v.numpy() for v in model.trainable_variables])
    batch = _batches(1)[0]
    gradients, totals = model.replica_gradients(batch, model.steps_trained)
    _save(results, "reference", gradients)
    for size in sizes:
        part = {name: value[: GLOBAL_BATCH // size] for name, value in batch.items()}
        with tf.GradientTape() as tape:
            stats = model.pretraining_statistics(model.pretraining_outputs(part, model.steps_trained, training=True))
            loss = model.pretraining_loss(stats, totals, model.steps_trained)
        _save(results, f"slice0_n{size}", tape.gradient(loss, model.trainable_variables))
    train_step = tf.function(model.train_step)
    for step_batch in _batches(SGD_STEPS):
        train_step(step_batch)
    _save(results, "sgd_reference", [v.numpy() for v in model.trainable_variables])
    return initial


def distributed(results, strategy, initial, size):
    """Per-replica and all-reduced gradients of the global batch, and SGD weights, on `strategy`'s replicas."""
    import tensorflow as tf

    from electra_tf.training.replica_updates import all_reduce_sum

    model = _model(strategy, initial)

    def gradients(batch):
        own, _ = model.replica_gradients(batch, model.steps_trained)
        return own, all_reduce_sum(own)

    first = tf.function(lambda batch: strategy.run(gradients, args=(batch,)))(_distribute(strategy, _batches(1)[0]))
    own, reduced = (strategy.experimental_local_results(value) for value in first)
    replica_ids = _local_replica_ids(strategy)
    for replica, own_gradients, reduced_gradients in zip(replica_ids, own, reduced):
        _save(results, f"replica{replica}_n{size}", own_gradients)
        _save(results, f"reduced{replica}_n{size}", reduced_gradients)
    train_step = tf.function(lambda batch: strategy.run(model.train_step, args=(batch,)))
    for step_batch in _batches(SGD_STEPS):
        train_step(_distribute(strategy, step_batch))
    _save(results, f"sgd_n{size}", [v.numpy() for v in model.trainable_variables])


def _local_replica_ids(strategy):
    ids = strategy.experimental_distribute_values_from_function(lambda context: context.replica_id_in_sync_group)
    return [int(value) for value in strategy.experimental_local_results(ids)]


def mirrored_unit_checks(results, strategy):
    """`all_reduce_sum` and `apply_if` across `strategy`'s replicas, with replica r contributing r + 1."""
    import keras
    import tensorflow as tf

    from electra_tf.training.replica_updates import all_reduce_sum, apply_if

    def reduce(replica_value):
        return all_reduce_sum({"scalar": replica_value, "pair": [replica_value * tf.ones([3]), -replica_value]})

    values = strategy.experimental_distribute_values_from_function(
        lambda context: tf.constant(context.replica_id_in_sync_group + 1.0)
    )
    reduced = strategy.experimental_local_results(tf.function(lambda v: strategy.run(reduce, args=(v,)))(values))
    for replica, value in enumerate(reduced):
        results[f"all_reduce{replica}/scalar"] = value["scalar"].numpy()
        results[f"all_reduce{replica}/vector"] = value["pair"][0].numpy()
        results[f"all_reduce{replica}/negative"] = value["pair"][1].numpy()
    for condition in (True, False):
        with strategy.scope():
            variable = keras.Variable(np.ones(3, np.float32))
            optimizer = keras.optimizers.SGD(0.1)
            optimizer.build([variable])

        def apply(replica_value, condition=condition):
            # The condition is computed on each replica (equal everywhere), as the training step's finiteness is.
            apply_if(tf.equal(tf.constant(condition), True), optimizer, [replica_value * tf.ones([3])], [variable])

        tf.function(lambda v: strategy.run(apply, args=(v,)))(values)
        results[f"apply_if_{condition}/variable"] = variable.numpy()
        results[f"apply_if_{condition}/iterations"] = np.asarray(optimizer.iterations.numpy())


def main(mode, size, out, reference_sizes=""):
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import tensorflow as tf

    from electra_tf.training.distribution import split_cpu

    size = int(size)
    results = {}
    if mode == "mirrored":
        split_cpu(size)
        strategy = tf.distribute.MirroredStrategy(devices=[d.name for d in tf.config.list_logical_devices("CPU")])
    else:
        tf_config = json.loads(os.environ["TF_CONFIG"])
        assert len(tf_config["cluster"]["worker"]) == size
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    sizes = [int(value) for value in reference_sizes.split(",") if value]
    initial = single_device(results, sizes, references=bool(sizes))
    distributed(results, strategy, initial, size)
    if mode == "mirrored":
        mirrored_unit_checks(results, strategy)
    np.savez(out, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
