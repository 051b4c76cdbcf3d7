"""Gradient accumulation: one optimizer update from a batch run as several micro-batches, one after the other (or,
on a CPU, at once).

With `gradient_accumulation_steps=N` the batch of one update stays what it was (`train_batch_size`, or `fit`'s
`batch_size`); the training step cuts each replica's share of it into N contiguous micro-batches and runs the forward
and backward pass of one micro-batch at a time, so that only one micro-batch's activations are alive at once. The data
pipeline, the step counter, the learning-rate schedule, the logs, checkpoints and resumption are unchanged: they count
optimizer steps, and each element of the data is still the whole batch of one step.

The update is that of the whole batch at once, not a mean of micro-batch means:

- pre-training (`ElectraPretrainer`) adds up the statistics' sums and counts and, for each sum its loss has, that
  sum's gradient; with the counts of the whole batch known, the loss (linear in its sums) has the gradient
  sum over its sums of (d loss / d sum) x gradient of the sum;
- a Keras model trained on its compiled loss (`GradientAccumulation`: the fine-tuning models) evaluates the whole
  batch's loss on each micro-batch's predictions with the batch's other rows held constant, so the loss is divided by
  what the whole batch's is divided by, whatever its reduction, and the micro-batches' gradients add up to the batch's.

Dropout draws its masks micro-batch by micro-batch: with dropout the updates differ from the whole batch's as they do
between replica layouts; without it they are the same within float32 rounding.

With `concurrent_micro_batches=N` (the fine-tuning models) the micro-batches' passes are instead independent parts of
one graph, which TensorFlow's executor runs side by side on its inter-op threads: for speed, not memory. On a CPU a
small fine-tuning batch (32 examples of about 14 tokens) is made of ops too small to split well over several cores;
two micro-batches each on a core of its own (`distribution.share_threads_between_micro_batches`) run a step faster
than one batch over both (docs/PERFORMANCE.md has the figures).
"""

import keras
import tensorflow as tf

from electra_tf.training.choices import check_micro_batches


def _micro_batch(batch, start, size):
    """The `size` rows of `batch` from row `start`: a dynamic slice, which XLA compiles for a size it knows."""

    def rows(tensor):
        other_axes = tensor.shape.rank - 1
        return tf.slice(tensor, [start] + [0] * other_axes, [size] + [-1] * other_axes)

    return tf.nest.map_structure(rows, batch)


def accumulate(micro_step, batch, num_micro_batches, concurrently=False):
    """The sum over the micro-batches of `batch` of `micro_step(start, micro_batch)`, run one micro-batch at a time,
    or with `concurrently` as independent parts of one graph that TensorFlow's inter-op threads may run at once.

    Args:
        micro_step: returns a structure of tensors, the same for every micro-batch; `start` is the micro-batch's
            first row in `batch`.
        batch: a structure of tensors with the examples along their first axis (one replica's share of the batch).
        num_micro_batches: N. The micro-batches are contiguous runs of ceil(rows / N) examples (fewer than N of
            them for a batch of fewer than N times that). When they do not divide the batch, copies of its last
            example fill up the last one, so that every micro-batch has one shape (what XLA compiles); `micro_step`
            must leave out the rows past the batch's end (`_in_whole_batch` does).
    """
    first = tf.nest.flatten(batch)[0]
    rows = first.shape[0] if first.shape[0] is not None else tf.shape(first)[0]
    size = (rows + num_micro_batches - 1) // num_micro_batches
    count = (rows + size - 1) // size
    if concurrently and not isinstance(count, int):
        count = num_micro_batches  # unrolled: as many parts as the largest batch has; a smaller one's last are fill
    if not isinstance(rows, int) or count * size != rows:
        filled = tf.minimum(tf.range(count * size), rows - 1)
        batch = tf.nest.map_structure(lambda tensor: tf.gather(tensor, filled), batch)

    if concurrently:
        parts = [micro_step(index * size, _micro_batch(batch, index * size, size)) for index in range(count)]
        return tf.nest.map_structure(_add_up, *parts)
    # The first micro-batch runs before the loop: its results give the loop's accumulators their structure (which
    # gradients exist) and shapes. One iteration at a time: overlapping ones would keep several micro-batches'
    # activations alive, which is what accumulation is for avoiding.
    totals = micro_step(0, _micro_batch(batch, 0, size))

    def body(index, totals):
        start = index * size
        return index + 1, tf.nest.map_structure(tf.add, totals, micro_step(start, _micro_batch(batch, start, size)))

    _, totals = tf.while_loop(lambda index, _: index < count, body, (tf.constant(1), totals), parallel_iterations=1)
    return totals


def _add_up(*values):
    """The sum of `values`: tensors, or embedding gradients as `tf.IndexedSlices` (joined, not made dense: a
    vocabulary-sized table summed densely per micro-batch costs more than the rows they touch), or None (no
    gradient)."""
    if values[0] is None:
        return None
    if isinstance(values[0], tf.IndexedSlices):
        return tf.IndexedSlices(
            tf.concat([value.values for value in values], 0),
            tf.concat([value.indices for value in values], 0),
            values[0].dense_shape,
        )
    return tf.add_n(values)


def _in_whole_batch(predictions, start, rows, num_micro_batches):
    """`predictions` (a structure of tensors) of the micro-batch at row `start`, each placed among zeros in the `rows`
    rows of its batch (rows past the batch's end, which filled up a last micro-batch or whole ones, are left out)."""

    def placed(values):
        size = tf.shape(values)[0]
        # Room for every micro-batch, from a size that does not depend on `start`: XLA compiles it when `start` is a
        # loop's counter.
        shape = tf.concat([[rows + num_micro_batches * size], tf.shape(values)[1:]], axis=0)
        return tf.scatter_nd(tf.reshape(start + tf.range(size), [-1, 1]), values, shape)[:rows]

    return tf.nest.map_structure(placed, predictions)


def _rows(x):
    """The examples in the batch `x` (a structure of tensors), as a scalar tensor."""
    return tf.shape(tf.nest.flatten(x)[0])[0]


def dense_gradients(gradients, variables):
    """`gradients` as dense tensors (embedding lookups give IndexedSlices, which a loop cannot add up nor replicas
    all-reduce), zeros for a variable without a gradient."""
    return [
        tf.convert_to_tensor(gradient) if gradient is not None else tf.zeros_like(variable)
        for gradient, variable in zip(gradients, variables)
    ]


class GradientAccumulation:
    """Mixin placed before the Keras model class of a model trained on its compiled loss (`compute_loss`), as the
    fine-tuning models are: `compile(..., gradient_accumulation_steps=N)` makes each batch of `fit` one optimizer
    update computed from N micro-batches in turn (ceil(batch / N) examples each).

    The update is the whole batch's: each micro-batch's predictions enter the whole batch's loss with the other rows
    held constant, so the loss is divided by what it is divided by for the whole batch (its size, or the sum of its
    sample weights) and the micro-batches' gradients add up to the batch's; the training loss and metrics are
    computed once, on the predictions of the whole batch. Unlike the Keras optimizers' argument of the same name,
    `fit`'s batch size stays the batch of one update and the optimizer counts updates, not micro-batches.
    A compiled loss with several outputs would count every micro-batch in its per-output loss metrics; the
    fine-tuning models have one.

    `compile(..., concurrent_micro_batches=N)` runs the N micro-batches of a training, evaluation or prediction batch
    at once instead (see the module's docstring); the update is the same whole batch's.
    """

    gradient_accumulation_steps = 1
    concurrent_micro_batches = 1

    def compile(self, *args, gradient_accumulation_steps=1, concurrent_micro_batches=1, **kwargs):
        check_micro_batches(gradient_accumulation_steps, concurrent_micro_batches)
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.concurrent_micro_batches = concurrent_micro_batches
        super().compile(*args, **kwargs)

    def get_compile_config(self):
        config = super().get_compile_config()
        for name in ("gradient_accumulation_steps", "concurrent_micro_batches"):
            if config is not None and getattr(self, name) != 1:
                config[name] = getattr(self, name)
        return config

    def compile_from_config(self, config):
        # Keras does not restore the compile state (and so the optimizer's) of a model that overrides `compile`, as
        # this mixin does; it is restorable: a loaded .keras file continues training where it stopped.
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def train_step(self, data):
        num_micro_batches = max(self.gradient_accumulation_steps, self.concurrent_micro_batches)
        if num_micro_batches == 1:
            return super().train_step(data)
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        variables = self.trainable_variables
        rows = _rows(x)
        concurrently = self.concurrent_micro_batches > 1

        def micro_step(start, micro_x):
            with tf.GradientTape() as tape:
                predictions = _in_whole_batch(self(micro_x, training=True), start, rows, num_micro_batches)
                loss = self.optimizer.scale_loss(self.compute_loss(x, y, predictions, sample_weight, training=True))
            gradients = tape.gradient(loss, variables)
            return {
                # A loop cannot carry IndexedSlices or None: the micro-batches run at once can.
                "gradients": gradients if concurrently else dense_gradients(gradients, variables),
                "predictions": tf.nest.map_structure(tf.stop_gradient, predictions),
            }

        accumulated = accumulate(micro_step, x, num_micro_batches, concurrently=concurrently)
        self.optimizer.apply_gradients(zip(accumulated["gradients"], variables))
        return self._loss_and_metrics(x, y, rows, accumulated["predictions"], sample_weight, training=True)

    def test_step(self, data):
        if self.concurrent_micro_batches == 1:
            return super().test_step(data)
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        rows = _rows(x)
        predictions = self._concurrent_predictions(x, rows)
        return self._loss_and_metrics(x, y, rows, predictions, sample_weight, training=False)

    def predict_step(self, data):
        if self.concurrent_micro_batches == 1:
            return super().predict_step(data)
        x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        return self._concurrent_predictions(x, _rows(x))

    def _concurrent_predictions(self, x, rows):
        def micro_predictions(start, micro_x):
            return _in_whole_batch(self(micro_x, training=False), start, rows, self.concurrent_micro_batches)

        return accumulate(micro_predictions, x, self.concurrent_micro_batches, concurrently=True)

    def _loss_and_metrics(self, x, y, rows, predictions, sample_weight, training):
        loss = self.compute_loss(x, y, predictions, sample_weight, training=training)
        # As Keras' own steps: the loss metric holds the loss of the global batch (compiled losses are divided by the
        # number of replicas), weighted by the batch's examples.
        loss_metric = next(metric for metric in self.metrics if metric.name == "loss")
        loss_metric.update_state(loss * tf.distribute.get_strategy().num_replicas_in_sync, sample_weight=rows)
        return self.compute_metrics(x, y, predictions, sample_weight=sample_weight)
