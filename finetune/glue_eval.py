"""A GLUE-format predictions file scored against a task's labels (`python -m finetune.commands.glue_eval` prints
it): a header `index<TAB>prediction`, one row per example of the split, the prediction a label as written in the
task's files (a float for STS-B), as `finetune.glue.predictions.write_predictions` writes it."""

from finetune.glue.metrics import task_metrics
from finetune.glue.predictions import read_predictions
from finetune.glue.readers import split_labels
from finetune.glue.tasks import glue_task_spec


def evaluate_predictions_file(task, data_dir, predictions_path, split="dev"):
    """The task's metrics ({name: value in 0-100}) for a GLUE-format predictions file against `split`'s labels."""
    spec = glue_task_spec(task)
    labels = split_labels(data_dir, spec, split)
    predictions = read_predictions(predictions_path, spec, len(labels))
    return task_metrics(spec, labels, predictions)
