"""Whether a fine-tuned classifier reads single texts or sentence pairs, as its fine-tuning run's results.json tells
(the raw-text signature of its export takes `texts`, or `text_a` and `text_b`)."""

import json
import os

from electra_tf.errors import ConfigError
from finetune.glue.tasks import glue_task_spec
from finetune.own_data.task import own_data_tasks

TEXT_INPUTS = ("auto", "single", "pair")


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
