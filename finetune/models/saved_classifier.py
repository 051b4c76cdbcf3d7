"""Reading a fine-tuned classifier's `model.keras` (as `run_finetuning.py --save_models` writes it) for export."""

import json
import os
import zipfile

from electra_tf.errors import CheckpointError, ConfigError

TEXT_INPUTS = ("auto", "single", "pair")


def load_text_classifier(path):
    """The `ElectraTextClassifier` in the `.keras` file at `path`, or a one-line `CheckpointError` saying why not."""
    import keras

    from finetune.models.text_classifier import ElectraTextClassifier

    if not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else "does not exist"
        raise CheckpointError(f"{path} {what}: a classifier is read from the model.keras file of a fine-tuned "
                              "classifier (run_finetuning.py --save_models writes trial_<k>/model.keras)")
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"{path} is not a .keras file: a classifier is read from the model.keras that "
                              "run_finetuning.py --save_models writes")
    try:
        model = keras.saving.load_model(path, compile=False)
    except (ValueError, TypeError, KeyError, OSError) as error:
        raise CheckpointError(f"cannot load {path} as a fine-tuned classifier: {str(error).splitlines()[0]}") from error
    if not isinstance(model, ElectraTextClassifier):
        raise CheckpointError(f"{path} holds a {type(model).__name__}, not a fine-tuned ElectraTextClassifier (the "
                              "model.keras of run_finetuning.py --save_models)")
    return model


def is_pair_classifier(path, text_inputs="auto"):
    """Whether the raw-text signature takes sentence pairs: `text_inputs` ("single"/"pair"), or for "auto" the task in
    the fine-tuning run's results.json (one directory above `trial_<k>/model.keras`)."""
    if text_inputs not in TEXT_INPUTS:
        raise ConfigError(f"text_inputs must be one of {', '.join(TEXT_INPUTS)}, got {text_inputs!r}",
                          arguments=("text_inputs",))
    if text_inputs != "auto":
        return text_inputs == "pair"
    from finetune.glue.tasks import get_task

    results_file = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "results.json")
    try:
        with open(results_file, encoding="utf-8") as handle:
            task = json.load(handle)["task"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"cannot tell whether {path} classifies single sentences or pairs (no task in "
                          f"{results_file}): pass text_inputs=single or text_inputs=pair",
                          arguments=("text_inputs",)) from None
    return get_task(task).is_pair_task
