"""Pre-training data: the tf.data reader and the start-of-training checks (see `pretraining_dataset`)."""

from electra_tf.data.pretraining_dataset import FEATURE_NAMES, check_pretraining_data, make_pretraining_dataset

__all__ = ["FEATURE_NAMES", "check_pretraining_data", "make_pretraining_dataset"]
