"""electra-tf: ELECTRA pre-training and fine-tuning in TensorFlow 2 / Keras 3."""

import os

# Keras 3 picks its backend at import time; this project is TensorFlow-only.
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

__version__ = "0.1.0"
