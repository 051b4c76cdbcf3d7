"""Reading a fine-tuned classifier's, tagger's or SQuAD model's `model.keras` (as `electra-finetune --save_models`
writes it) for export."""

import os
import zipfile

import keras

from electra_tf.errors import CheckpointError
from finetune.models.text_classifier import ElectraTextClassifier
from finetune.models.token_classifier import ElectraTokenClassifier


def load_text_classifier(path):
    """The `ElectraTextClassifier` in the `.keras` file at `path`, or a one-line `CheckpointError` saying why not."""
    return load_finetuned_model(path, ElectraTextClassifier, "classifier")


def load_token_classifier(path):
    """The `ElectraTokenClassifier` (a tagger) in the `.keras` file at `path`, or a one-line `CheckpointError`."""
    return load_finetuned_model(path, ElectraTokenClassifier, "tagger")


def load_finetuned_model(path, model_class, what):
    """The `model_class` instance saved in the `.keras` file at `path` (the model.keras of electra-finetune
    --save_models); `what` names it in errors."""
    if not os.path.isfile(path):
        state = "is a directory" if os.path.isdir(path) else "does not exist"
        raise CheckpointError(
            f"{path} {state}: a {what} is read from the model.keras file of a fine-tuned "
            f"{what} (electra-finetune --save_models writes trial_<k>/model.keras)"
        )
    if not zipfile.is_zipfile(path):
        raise CheckpointError(
            f"{path} is not a .keras file: a {what} is read from the model.keras that "
            "electra-finetune --save_models writes"
        )
    try:
        model = keras.saving.load_model(path, compile=False)
    except (ValueError, TypeError, KeyError, OSError) as error:
        raise CheckpointError(f"cannot load {path} as a fine-tuned {what}: {str(error).splitlines()[0]}") from error
    if not isinstance(model, model_class):
        raise CheckpointError(
            f"{path} holds a {type(model).__name__}, not a fine-tuned {model_class.__name__} (the "
            "model.keras of electra-finetune --save_models)"
        )
    return model
