"""What the text classifier and the tagger add to keras-hub's `Task` for data in memory: string labels mapped to ids
through their `LabelMapping`, and Python lists / NumPy arrays batched with tf.data by length (`finetune.batching`)
and shuffled every epoch (keras-hub batches them in order, and Keras ignores `shuffle=True` for the dataset it makes
of them)."""

import math

import keras
import numpy as np
import tensorflow as tf

from electra_tf.errors import ConfigError
from finetune.batching import length_bucketed_batches, num_shuffled_batches
from finetune.models import labels

# Examples per call of the preprocessor when data in memory are packed before they are batched by length.
_PREPROCESS_CHUNK = 1024


class LabelledTask:
    """A mixin placed before the keras-hub `Task` base class.

    Subclasses set `label_mapping` (a `LabelMapping`, or None for a model whose `y` are ids or numbers) and implement
    `label_ids(y)` (labels in memory -> the `y` the preprocessor takes); `inputs_in_memory(x)` may convert `x`.
    String labels of a tf.data dataset are mapped in the dataset's graph (`preprocess_samples`).
    """

    label_mapping = None

    @classmethod
    def from_config(cls, config):
        # Without keras-hub's default compilation of a new task: `keras.saving.load_model` compiles a loaded model from
        # its saved compile config (and restores the optimizer's state) when compile=True; with compile=False the
        # default compilation's unbuilt optimizer would be left for Keras to fill from the file, which it skips with a
        # warning ("Skipping variable loading for optimizer ... 2 variables whereas the saved optimizer has 403").
        return super().from_config({**config, "compile": False})

    def require_labels(self):
        """The `LabelMapping`, or a one-line error saying to build the model with label names."""
        if getattr(self, "regression", False):
            raise ConfigError("a regression model takes numbers as y, not label strings", arguments=("y",))
        if self.label_mapping is None:
            raise ConfigError(
                f"this {type(self).__name__} has no label names, so y must hold class ids: build it "
                "with labels=[...] (the label strings in id order) to fit it on label strings",
                arguments=("labels",),
            )
        return self.label_mapping

    def label_ids(self, y):
        raise NotImplementedError

    def inputs_in_memory(self, x):
        return x

    def in_memory_dataset(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False, bucketed=False):
        """A batched tf.data dataset of data in memory, labels as ids; with `shuffle`, in a new order every epoch,
        drawn from TensorFlow's global seed (which `keras.utils.set_random_seed` sets).

        With `bucketed` (training and evaluation, where outputs need not line up), the preprocessor packs the
        examples first and the batches are cut to their length bucket, as the command line's
        (`finetune.batching.length_bucketed_batches`); otherwise every batch is `max_seq_length` wide."""
        x = self.inputs_in_memory(x)
        y = None if y is None else self.label_ids(y)
        dataset = tf.data.Dataset.from_tensor_slices(keras.utils.pack_x_y_sample_weight(x, y, sample_weight))
        if not bucketed:
            if shuffle:
                dataset = dataset.shuffle(dataset.cardinality(), reshuffle_each_iteration=True)
            return dataset.batch(batch_size or 32)
        if self.preprocessor is not None:
            examples = dataset.cardinality()
            dataset = dataset.batch(_PREPROCESS_CHUNK).map(self.preprocess_samples).unbatch()
            # `unbatch` loses the count, and Keras takes a dataset it cannot count for one that ran out early and warns
            # ("Your input ran out of data") at the end of every evaluation.
            dataset = dataset.apply(tf.data.experimental.assert_cardinality(examples))
        batches = length_bucketed_batches(dataset, batch_size or 32, shuffle=shuffle)
        if not shuffle:
            return batches
        # Shuffled batches come from buckets filling in the shuffle's order, so tf.data cannot count them either.
        return batches.apply(tf.data.experimental.assert_cardinality(num_shuffled_batches(dataset, batch_size or 32)))

    def check_dataset_labels(self, data):
        """Before a tf.data dataset of label strings is traced: the one-line error of a model without labels."""
        if isinstance(data, tf.data.Dataset):
            spec = data.element_spec
            if isinstance(spec, tuple) and len(spec) > 1 and getattr(spec[1], "dtype", None) == tf.string:
                self.require_labels()

    def preprocess_samples(self, x, y=None, sample_weight=None):
        if y is not None and labels.is_text(y):
            y = self.require_labels().lookup(y)
        if isinstance(x, dict) and "padding_mask" in x:
            # Already the backbone's inputs (`in_memory_dataset` packs before it batches by length).
            return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
        return super().preprocess_samples(x, y, sample_weight)

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        *,
        sample_weight=None,
        shuffle=True,
        validation_split=0.0,
        validation_data=None,
        **kwargs,
    ):
        """Keras' `fit`; `x` / `y` in memory (Python lists, NumPy arrays, tensors) are shuffled every epoch unless
        `shuffle=False`, and `y` may hold label strings (see `labels`). A tf.data dataset is used as it comes."""
        self.check_dataset_labels(x)
        self.check_dataset_labels(validation_data)
        if validation_split and validation_data is None and in_memory(x):
            (x, y, sample_weight), validation_data = split_off((x, y, sample_weight), validation_split)
        if validation_data is not None and in_memory(keras.utils.unpack_x_y_sample_weight(validation_data)[0]):
            validation_data = self.in_memory_dataset(
                *keras.utils.unpack_x_y_sample_weight(validation_data), batch_size=batch_size, bucketed=True
            )
        if in_memory(x):
            x = self.in_memory_dataset(x, y, sample_weight, batch_size, shuffle, bucketed=True)
            y = sample_weight = batch_size = None
        # The data reach Keras as a dataset, shuffled or not as it was built.
        return super().fit(
            x,
            y,
            batch_size=batch_size,
            epochs=epochs,
            sample_weight=sample_weight,
            shuffle=False,
            validation_data=validation_data,
            **kwargs,
        )

    def evaluate(self, x=None, y=None, batch_size=None, *, sample_weight=None, **kwargs):
        self.check_dataset_labels(x)
        if in_memory(x):
            x = self.in_memory_dataset(x, y, sample_weight, batch_size, bucketed=True)
            y = sample_weight = batch_size = None
        return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)

    def predict(self, x=None, batch_size=None, **kwargs):
        if in_memory(x):
            x, batch_size = self.in_memory_dataset(x, batch_size=batch_size), None
        return super().predict(x, batch_size=batch_size, **kwargs)


def in_memory(x):
    """Whether `x` is data in memory (lists, arrays, tensors, tuples or dicts of them), not a dataset or generator."""
    if isinstance(x, (tuple, dict)):
        items = list(x.values() if isinstance(x, dict) else x)
        return bool(items) and all(in_memory(item) for item in items)
    return isinstance(x, (list, np.ndarray, tf.Tensor, tf.RaggedTensor))


def split_off(data, fraction):
    """((x, y, sample_weight) without, with) its last `fraction` of examples, as Keras' `validation_split`."""
    x = data[0]
    x = next(iter(x.values())) if isinstance(x, dict) else x[0] if isinstance(x, tuple) else x
    count = int(x.nrows()) if isinstance(x, tf.RaggedTensor) else len(x)
    at = int(math.floor(count * (1.0 - fraction)))
    if at in (0, count):
        raise ConfigError(
            f"validation_split={fraction} leaves no example for training or for validation out of {count}",
            arguments=("validation_split",),
        )
    return _sliced(data, 0, at), _sliced(data, at, count)


def _sliced(value, start, end):
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(_sliced(item, start, end) for item in value)
    if isinstance(value, dict):
        return {key: _sliced(item, start, end) for key, item in value.items()}
    return value[start:end]
