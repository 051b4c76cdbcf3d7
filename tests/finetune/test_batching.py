"""Length-bucketed batches: every example once per epoch, batches cut to the width of their longest member's bucket,
seeded epochs that differ, the reference's padding on request, predictions back in the original order."""

import numpy as np
import tensorflow as tf

from finetune.batching import (
    bucket_widths,
    length_bucketed_batches,
    length_order,
    num_shuffled_batches,
    predict_in_buckets,
)
from finetune.trial_state import training_batches
from tests.two_logical_cpus import run_on_two_logical_cpus

MAX_SEQ_LENGTH = 128


def _examples(n=200, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, MAX_SEQ_LENGTH + 1, n)
    mask = (np.arange(MAX_SEQ_LENGTH)[None, :] < lengths[:, None]).astype(np.int32)
    ids = mask * rng.integers(5, 100, (n, MAX_SEQ_LENGTH)).astype(np.int32)
    return {"token_ids": ids, "padding_mask": mask}, np.arange(n, dtype=np.int32)


def _epoch(dataset):
    return [(batch[0]["token_ids"].numpy(), batch[0]["padding_mask"].numpy(), batch[1].numpy()) for batch in dataset]


def test_widths_are_a_few_fixed_ones_ending_at_the_maximum():
    every_length = tuple(range(2, 16))
    assert bucket_widths(128) == every_length + (16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128)
    assert bucket_widths(100) == every_length + (16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 100)
    assert bucket_widths(16) == every_length + (16,)
    assert bucket_widths(8) == (2, 3, 4, 5, 6, 7, 8)
    assert bucket_widths(128, smallest=8) == (8, 9, 10, 11, 12, 13, 14, 15) + bucket_widths(128)[14:]
    assert bucket_widths(128, smallest=20) == (20, 25, 30, 35, 40, 50, 60, 70, 80, 100, 120, 128)


def test_training_batches_hold_every_example_once_cut_to_their_bucket_and_reshuffled_each_epoch():
    inputs, labels = _examples()
    dataset = length_bucketed_batches(tf.data.Dataset.from_tensor_slices((inputs, labels)), 16, shuffle=True, seed=3)
    epochs = [_epoch(dataset), _epoch(dataset)]
    widths = bucket_widths(MAX_SEQ_LENGTH)
    for epoch in epochs:
        assert sorted(np.concatenate([batch[2] for batch in epoch]).tolist()) == list(range(len(labels)))
        for ids, mask, batch_labels in epoch:
            longest = int(mask.sum(axis=1).max())
            # The smallest width holding the longest member; every member of the batch rounds up to that width.
            assert ids.shape[1] == min(width for width in widths if width >= longest)
            assert all(min(width for width in widths if width >= length) == ids.shape[1] for length in mask.sum(1))
            np.testing.assert_array_equal(ids, inputs["token_ids"][batch_labels, : ids.shape[1]])
        assert len({ids.shape[1] for ids, _, _ in epoch}) > 3
    assert [batch[2].tolist() for batch in epochs[0]] != [batch[2].tolist() for batch in epochs[1]]
    again = _epoch(
        length_bucketed_batches(tf.data.Dataset.from_tensor_slices((inputs, labels)), 16, shuffle=True, seed=3)
    )
    assert [batch[2].tolist() for batch in again] == [batch[2].tolist() for batch in epochs[0]]


def test_an_epoch_has_a_batch_per_batch_size_examples_of_each_bucket_whatever_the_seed():
    inputs, labels = _examples()
    examples = tf.data.Dataset.from_tensor_slices((inputs, labels))
    lengths = inputs["padding_mask"].sum(axis=1)
    widths = np.array(bucket_widths(MAX_SEQ_LENGTH))
    per_bucket = np.bincount(np.searchsorted(widths, lengths, side="left"))
    expected = int(sum(-(-count // 16) for count in per_bucket))
    assert expected > -(-len(labels) // 16), "more batches than the padded epoch's: each bucket ends with a partial one"
    assert num_shuffled_batches(examples, 16) == expected
    assert num_shuffled_batches(examples, 16, pad_to_max_length=True) == -(-len(labels) // 16)
    for seed in (0, 1):
        dataset = training_batches(examples, 16, seed, first_epoch=0, num_epochs=2)
        batches = _epoch(dataset)
        assert _epoch(dataset)[0][2].tolist() == batches[0][2].tolist(), "the seed's order on every iteration"
        assert len(batches) == 2 * expected
        assert len({ids.shape[1] for ids, _, _ in batches}) > 3, "cut to their buckets"
        resumed = _epoch(training_batches(examples, 16, seed, first_epoch=1, num_epochs=2, skip_batches=3))
        assert [batch[2].tolist() for batch in resumed] == [batch[2].tolist() for batch in batches[expected + 3 :]]


def test_padding_to_the_maximum_keeps_the_reference_batches():
    inputs, labels = _examples(40)
    epoch = _epoch(
        length_bucketed_batches(tf.data.Dataset.from_tensor_slices((inputs, labels)), 16, pad_to_max_length=True)
    )
    assert [ids.shape for ids, _, _ in epoch] == [(16, 128), (16, 128), (8, 128)]
    assert np.concatenate([batch[2] for batch in epoch]).tolist() == list(range(40))


def test_sequences_of_other_features_are_cut_and_scalars_kept():
    inputs, labels = _examples(20)
    tags = np.arange(20 * MAX_SEQ_LENGTH, dtype=np.int32).reshape(20, MAX_SEQ_LENGTH)
    order = length_order(inputs["padding_mask"])
    sorted_inputs = {name: value[order] for name, value in inputs.items()}
    dataset = tf.data.Dataset.from_tensor_slices((sorted_inputs, tags[order], labels[order]))
    for batch_inputs, batch_tags, batch_labels in length_bucketed_batches(dataset, 5):
        width = batch_inputs["token_ids"].shape[1]
        assert batch_tags.shape == (5, width) and batch_labels.shape == (5,)
        np.testing.assert_array_equal(batch_tags, tags[batch_labels.numpy(), :width])


def per_token_model():
    """A stand-in model: a per-token output (the ids doubled) and a per-example one (the length)."""
    import keras

    ids = keras.Input((None,), dtype="int32", name="token_ids")
    mask = keras.Input((None,), dtype="int32", name="padding_mask")
    per_token = keras.layers.Lambda(lambda values: tf.cast(values, "float32") * 2.0)(ids)
    length = keras.layers.Lambda(lambda values: tf.reduce_sum(values, axis=1))(mask)
    return keras.Model({"token_ids": ids, "padding_mask": mask}, {"per_token": per_token, "length": length})


def test_predictions_come_back_in_the_original_order_padded_to_the_maximum():
    inputs, _ = _examples(50)
    outputs = predict_in_buckets(per_token_model(), inputs, 8, sequence_outputs=("per_token",), pad_value=-1.0)
    np.testing.assert_array_equal(outputs["length"], inputs["padding_mask"].sum(axis=1))
    expected = np.where(inputs["padding_mask"] > 0, inputs["token_ids"] * 2.0, 0.0)
    cut = outputs["per_token"]
    assert cut.shape == (50, MAX_SEQ_LENGTH)
    # Inside each example's bucket width the model's values; beyond it the pad value.
    np.testing.assert_array_equal(np.where(inputs["padding_mask"] > 0, cut, 0.0), expected)
    assert (cut == -1.0).sum() > 0


# Under MirroredStrategy on two logical CPUs (set before TensorFlow starts, hence a process of its own): Keras'
# predict_on_batch would return each of the whole batch's rows once per replica.
TWO_REPLICAS = """
import numpy as np
from finetune.batching import predict_in_buckets
from tests.finetune.test_batching import _examples, per_token_model
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = per_token_model()
inputs, _ = _examples(37)
outputs = predict_in_buckets(model, inputs, 8, sequence_outputs=("per_token",))
np.testing.assert_array_equal(outputs["length"], inputs["padding_mask"].sum(axis=1))
np.testing.assert_array_equal(outputs["per_token"], inputs["token_ids"] * 2.0)
print(strategy.num_replicas_in_sync, len(outputs["length"]))
"""


def test_predictions_under_a_strategy_of_two_replicas_are_each_example_s_once():
    assert run_on_two_logical_cpus(TWO_REPLICAS).split() == ["2", "37"]
