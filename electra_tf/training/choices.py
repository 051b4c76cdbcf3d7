"""The names of the training options, importable without TensorFlow: entry points list them in their flags, and
`--help` answers without loading TensorFlow."""

STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
OPTIMIZERS = ("adam_weight_decay", "keras_adamw", "lamb")
NONFINITE_LOSS_POLICIES = ("stop", "skip")  # see callbacks.NonFiniteLossGuard
