"""The settings a cached stage was made with, recorded beside its output: a rerun with the same settings resumes, one
with other settings is refused."""

import dataclasses
import os

from electra_tf.training.resumption import check_or_write_settings, dataclass_defaults

# Job fields that change how often a run saves, not what it computes: a run resumes under other values.
IGNORED = ("save_checkpoints_steps", "keep_checkpoint_max")


def check_or_record_job(job):
    """Writes `job` (a `PretrainingJob`) to <model_dir>/experiment_job.json, or refuses a model_dir whose recorded job
    has other settings (all of them but `IGNORED`: another number of steps is another experiment); a field the file
    lacks (added to `PretrainingJob` since) is unchanged at its default."""
    recorded = {key: value for key, value in dataclasses.asdict(job).items() if key != "progress_bar"}
    check_or_write_settings(
        os.path.join(job.model_dir, "experiment_job.json"),
        recorded,
        "a pre-training run",
        "output_dir",
        dataclass_defaults(type(job)),
        ignore=IGNORED,
    )
