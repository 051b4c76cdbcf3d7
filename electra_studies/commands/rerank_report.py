"""One Markdown table of many `electra-rerank` runs, then a table of each scorer's cost
(`electra_studies.rerank.report`).

    python -m electra_studies.commands.rerank_report --runs=DIR

DIR holds `<model>/<set>/summary.json`: one `electra-rerank` output directory per model and n-best file.
"""

import os
import sys

from absl import flags

from electra_studies.rerank.report import SUMMARY, cost_table, read_runs, wer_table
from electra_tf import cli

flags.DEFINE_string("runs", None, "Directory of electra-rerank outputs, <model>/<set>/summary.json.")


def main(argv):
    runs_dir = flags.FLAGS.runs
    if len(argv) > 1:
        sys.exit(f"unexpected arguments: {' '.join(argv[1:])}")
    if runs_dir is None or not os.path.isdir(runs_dir):
        sys.exit(f"--runs={runs_dir} is not a directory: pass the directory of <model>/<set>/{SUMMARY}")
    runs = read_runs(runs_dir)
    if not runs:
        sys.exit(f"--runs={runs_dir} holds no <model>/<set>/{SUMMARY}: pass the directory of electra-rerank outputs")
    print(wer_table(runs) + "\n\n" + cost_table(runs))


def console_main():
    """Runs the program (`python -m electra_studies.commands.rerank_report`)."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
