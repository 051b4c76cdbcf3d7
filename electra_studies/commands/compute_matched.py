"""Entry point of the compute-matched experiment (`electra_studies.compute_matched.experiment` says what it does).

    electra-compute-matched --output_dir=runs/compute_matched \\
        --corpus=../shared/data/corpus/nltk-gutenberg --glue_dir=../shared/data/glue
"""

import os
import shlex
import sys

from absl import flags

from electra_studies.compute_matched.experiment import run_experiment
from electra_studies.compute_matched.plan import Settings
from electra_tf import cli
from electra_tf.job_flags import define_job_flags, job_arguments

FLAGS = flags.FLAGS

define_job_flags(Settings)


# ====================================================================== settings


def settings_from_flags():
    return Settings(**job_arguments(Settings))


def command_line(argv=None):
    """The command as it was typed, recorded with the results: the console command, `python -m` this module, or
    `python <script>`."""
    argv = list(sys.argv if argv is None else argv)
    if len(argv) > 1 and argv[1] == "--verbosity=-1":  # inserted by electra_tf.cli.run
        argv.pop(1)
    script = os.path.relpath(argv[0]) if argv and os.path.isabs(argv[0]) else (argv[0] if argv else "")
    if script.endswith(os.path.join("electra_studies", "commands", "compute_matched.py")):
        program = "python -m electra_studies.commands.compute_matched"
    elif script.endswith(".py"):
        program = f"python {shlex.quote(script)}"
    else:
        program = os.path.basename(script)  # the console command
    return " ".join([program] + [shlex.quote(arg) for arg in argv[1:]])


def main(argv):
    from absl import app

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    run_experiment(settings_from_flags(), command=command_line())


def console_main():
    """The installed console command (electra-compute-matched)."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
