"""The one mapping between label strings and class ids, shared by the task models' Python API (`fit` / `evaluate` /
`predict_labels` on string labels), their exported SavedModels and the command line (`task=classification` on the
user's own files writes the same strings to its predictions files)."""

import numpy as np
import tensorflow as tf

from electra_tf.errors import ConfigError


class LabelMapping:
    """Label names in id order: name `i` is class id `i`.

    Args:
        names: the distinct label names (two or more), in id order.
        argument: the argument that gave them, named in errors (`labels` for a classifier, `tags` for a tagger).
    """

    def __init__(self, names, argument="labels"):
        names = [str(name) for name in names]
        if len(names) < 2 or len(set(names)) != len(names):
            raise ConfigError(
                f"{argument} must name two or more distinct labels in id order, got {names!r}", arguments=(argument,)
            )
        self.names = names
        self.argument = argument
        self.index = {name: position for position, name in enumerate(names)}

    def unknown(self, labels):
        """Positions in `labels` (strings, None for an unlabelled example) of the labels that are not names."""
        return [position for position, label in enumerate(labels) if label is not None and label not in self.index]

    def ids(self, labels, source="y"):
        """int32 class ids of label strings (-1 for None, an unlabelled example); `source` names them in the error
        that lists labels outside `names`."""
        labels = [_as_text(label) for label in labels]
        unknown = sorted({labels[position] for position in self.unknown(labels)})
        if unknown:
            raise ConfigError(
                f"{source} holds labels {unknown[:5]} that are not in {self.argument}={self.names}",
                arguments=(source, self.argument),
            )
        return np.array([-1 if label is None else self.index[label] for label in labels], np.int32)

    def strings(self, ids):
        """The names of class ids, a Python list of str."""
        return [self.names[int(position)] for position in np.asarray(ids).reshape(-1)]

    def lookup(self, labels):
        """In-graph: int32 ids of a string tensor of labels (any shape, ragged too), for datasets; an unknown label
        stops the dataset with an error naming `argument`."""
        if isinstance(labels, tf.RaggedTensor):
            return labels.with_flat_values(self.lookup(labels.flat_values))
        matches = tf.equal(tf.expand_dims(labels, -1), tf.constant(self.names))
        known = tf.debugging.assert_equal(
            tf.reduce_all(tf.reduce_any(matches, axis=-1)),
            True,
            message=f"a label of the dataset is not in {self.argument}={self.names}",
        )
        with tf.control_dependencies([known]):
            return tf.argmax(tf.cast(matches, tf.int32), axis=-1, output_type=tf.int32)

    def gather(self, ids):
        """In-graph: the names (a string tensor) of int class ids, for serving."""
        return tf.gather(tf.constant(self.names), ids)


def is_text(value):
    """Whether `value` holds label strings rather than numbers (a str, bytes, a string array or tensor, or a list
    whose items are)."""
    if isinstance(value, (str, bytes)):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return (
            dtype == tf.string
            or getattr(dtype, "kind", None) in ("U", "S")
            or (
                getattr(dtype, "kind", None) == "O" and any(is_text(item) for item in np.asarray(value).reshape(-1)[:1])
            )
        )
    if isinstance(value, (list, tuple)):
        return any(is_text(item) for item in value)
    return False


def _as_text(label):
    if isinstance(label, bytes):
        return label.decode("utf-8")
    return label if label is None else str(label)
