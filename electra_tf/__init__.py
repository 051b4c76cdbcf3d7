"""electra-tf: ELECTRA pre-training and fine-tuning in TensorFlow 2 / Keras 3."""

from electra_tf.keras_backend import require_tensorflow_backend
from electra_tf.native_logs import quiet_tensorflow

# Before any module of the library imports Keras: on another backend its layers would fail far from the cause.
require_tensorflow_backend()
# Before any module of the library imports TensorFlow: its level is read once, and its notices come from the start.
quiet_tensorflow()

__version__ = "0.1.0"
