"""Scores a GLUE-format predictions file against a task's dev labels and prints the metrics as one JSON object.

    python -m finetune.commands.glue_eval --task=MRPC --data_dir=/path/to/glue --predictions=dev_predictions.tsv
    {"accuracy": 86.27, "f1": 90.1}

The predictions file has a header `index<TAB>prediction` and one row per dev example, the index being the
example's 0-based position in the dev file and the prediction a label as written in the task's files (a float for
STS-B). `electra-finetune` writes this format with `finetune.glue.predictions.write_predictions`.
"""

import json

from absl import flags

from electra_tf import cli  # defines --verbose; must precede the flag definitions below
from electra_tf.io_utils import json_safe
from finetune.glue.tasks import TASKS
from finetune.glue_eval import evaluate_predictions_file

flags.DEFINE_string("task", None, f"GLUE task: one of {', '.join(TASKS)}.")
flags.DEFINE_string("data_dir", None, "GLUE directory holding <TASK>/dev.tsv (as written by download_glue_data.py).")
flags.DEFINE_string("predictions", None, "Predictions file: header 'index<TAB>prediction', one row per example.")
flags.DEFINE_string(
    "split", "dev", "Labelled split to score against; for MNLI 'dev' (= dev_matched) or 'dev_mismatched'."
)


def main(argv):
    del argv
    cli.require_flags("task", "data_dir", "predictions")
    metrics = evaluate_predictions_file(
        flags.FLAGS.task, flags.FLAGS.data_dir, flags.FLAGS.predictions, flags.FLAGS.split
    )
    # A correlation of constant predictions is undefined: printed as null.
    print(json.dumps(json_safe(metrics), sort_keys=True))


def console_main():
    """Runs the program (`python -m finetune.commands.glue_eval`)."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
