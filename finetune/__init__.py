"""Fine-tuning ELECTRA: the tasks, the runner and the task models."""

# First: importing electra_tf quiets TensorFlow before anything here loads it (electra_tf.native_logs).
import electra_tf  # noqa: F401
