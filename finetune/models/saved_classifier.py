"""Reading a fine-tuned classifier's or tagger's `model.keras` (as `electra-finetune --save_models` writes it) for
export."""

import json
import os
import zipfile

from electra_tf.errors import CheckpointError, ConfigError

TEXT_INPUTS = ("auto", "single", "pair")


def load_text_classifier(path):
    """The `ElectraTextClassifier` in the `.keras` file at `path`, or a one-line `CheckpointError` saying why not."""
    from finetune.models.text_classifier import ElectraTextClassifier

    return load_finetuned_model(path, ElectraTextClassifier, "classifier")


def load_token_classifier(path):
    """The `ElectraTokenClassifier` (a tagger) in the `.keras` file at `path`, or a one-line `CheckpointError`."""
    from finetune.models.token_classifier import ElectraTokenClassifier

    return load_finetuned_model(path, ElectraTokenClassifier, "tagger")


def load_finetuned_model(path, model_class, what):
    """The `model_class` instance saved in the `.keras` file at `path` (the model.keras of electra-finetune
    --save_models); `what` names it in errors."""
    import keras

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


def is_pair_classifier(path, text_inputs="auto"):
    """Whether the raw-text signature takes sentence pairs: `text_inputs` ("single"/"pair"), or for "auto" what the
    fine-tuning run's results.json (one directory above `trial_<k>/model.keras`) says: the GLUE task's kind, or for
    the user's own files whether a text pair column was given."""
    if text_inputs not in TEXT_INPUTS:
        raise ConfigError(
            f"text_inputs must be one of {', '.join(TEXT_INPUTS)}, got {text_inputs!r}", arguments=("text_inputs",)
        )
    if text_inputs != "auto":
        return text_inputs == "pair"
    from finetune.glue.tasks import glue_task_spec
    from finetune.own_data.task import own_data_tasks

    results_file = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "results.json")
    try:
        with open(results_file, encoding="utf-8") as handle:
            results = json.load(handle)
        task, job = results["task"], results.get("job") or {}
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(
            f"cannot tell whether {path} classifies single sentences or pairs (no task in "
            f"{results_file}): pass text_inputs=single or text_inputs=pair",
            arguments=("text_inputs",),
        ) from None
    if task in own_data_tasks():
        return bool(job.get("text_pair_column"))
    return glue_task_spec(task).is_pair_task
