"""Compares networks fine-tuned on GLUE tasks: each task's median over trials, the average over tasks, and paired
bootstrap intervals of the differences from the first network (`finetune.glue.comparison`).

    python -m finetune.commands.glue_compare --data_dir=/path/to/glue \\
        --runs=electra=out/electra,mlm=out/mlm,random=out/random --tasks=CoLA,STS-B,MRPC,RTE,SST-2

Each run directory holds one `electra-finetune` output directory per task (`<run>/<TASK>/trial_<k>/
dev_predictions.tsv`, as `--output_dir=<run>/<TASK>` writes). Prints a Markdown table, then one JSON object.
"""

import json

from absl import flags

from electra_tf import cli  # defines --verbose; must precede the flag definitions below
from electra_tf.io_utils import json_safe
from finetune.glue.comparison import compare, markdown, parse_runs

flags.DEFINE_string("data_dir", None, "GLUE directory holding <TASK>/dev.tsv.")
flags.DEFINE_list("runs", None, "name=directory pairs, one per network; the first is compared with every other.")
flags.DEFINE_list("tasks", ["CoLA", "SST-2", "MRPC", "STS-B", "RTE"], "GLUE tasks to compare.")
flags.DEFINE_integer("num_resamples", 1000, "Bootstrap resamples of the dev examples.")
flags.DEFINE_float("confidence", 0.95, "Confidence of the intervals.")
flags.DEFINE_integer("seed", 0, "Seed of the bootstrap.")


def main(argv):
    del argv
    cli.require_flags("data_dir", "runs")
    values = flags.FLAGS
    comparison = compare(
        values.data_dir, parse_runs(values.runs), values.tasks, values.num_resamples, values.confidence, values.seed
    )
    print(markdown(comparison))
    print(json.dumps(json_safe(comparison), sort_keys=True))


def console_main():
    """Runs the program (`python -m finetune.commands.glue_compare`)."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
