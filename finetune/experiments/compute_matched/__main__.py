"""Entry point of the compute-matched experiment (`finetune.experiments.compute_matched.experiment` says what it does).

    python -m finetune.experiments.compute_matched --output_dir=runs/compute_matched \\
        --corpus=../shared/data/corpus/nltk-gutenberg --glue_dir=../shared/data/glue
"""

import os
import shlex
import sys

from absl import flags

from electra_tf import cli
from electra_tf.job_flags import define_job_flags, job_arguments
from finetune.experiments.compute_matched.experiment import run_experiment
from finetune.experiments.compute_matched.plan import Settings

FLAGS = flags.FLAGS

define_job_flags(Settings)


# ====================================================================== settings


def settings_from_flags():
    return Settings(**job_arguments(Settings))


def command_line(argv=None):
    argv = list(sys.argv if argv is None else argv)
    if len(argv) > 1 and argv[1] == "--verbosity=-1":  # inserted by electra_tf.cli.run
        argv.pop(1)
    script = os.path.relpath(argv[0]) if argv and os.path.isabs(argv[0]) else (argv[0] if argv else "")
    if script.endswith(os.path.join("compute_matched", "__main__.py")):
        return " ".join(["python -m finetune.experiments.compute_matched"] + [shlex.quote(arg) for arg in argv[1:]])
    return " ".join(["python", shlex.quote(script)] + [shlex.quote(arg) for arg in argv[1:]])


def main(argv):
    from absl import app

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    run_experiment(settings_from_flags(), command=command_line())


if __name__ == "__main__":
    cli.run(main)
