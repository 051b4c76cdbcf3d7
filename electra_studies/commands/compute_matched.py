"""Entry point of the compute-matched experiment (`electra_studies.compute_matched.experiment` says what it does).

    electra-compute-matched --output_dir=runs/compute_matched \\
        --corpus=../shared/data/corpus/nltk-gutenberg --glue_dir=../shared/data/glue
"""

from absl import flags

from electra_studies.compute_matched.experiment import run_experiment
from electra_studies.compute_matched.settings import Settings
from electra_tf import cli
from electra_tf.job_flags import define_job_flags, job_arguments

FLAGS = flags.FLAGS

define_job_flags(Settings)


# ====================================================================== settings


def settings_from_flags():
    return Settings(**job_arguments(Settings))


def main(argv):
    from absl import app

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    run_experiment(settings_from_flags(), command=cli.command_line())


def console_main():
    """The installed console command (electra-compute-matched)."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
