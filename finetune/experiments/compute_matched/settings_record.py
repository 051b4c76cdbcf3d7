"""The settings a cached stage was made with, recorded beside its output: a rerun with the same settings resumes, one
with other settings is refused."""

import dataclasses
import json
import os

from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_json


def check_or_write_settings(path, values, what, defaults=None):
    """Write `values` to `path`, or refuse when `path` holds other values (a cache built with other flags).
    `defaults` ({key: value}, e.g. a dataclass's field defaults): a key the file lacks (a setting added since it was
    written) counts as that value."""
    values = json.loads(json.dumps(values))
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            existing = json.load(handle)
        defaults = json.loads(json.dumps(defaults or {}))
        existing = {**{key: defaults[key] for key in values if key in defaults}, **existing}
        if existing != values:
            changed = sorted(key for key in set(existing) | set(values) if existing.get(key) != values.get(key))
            raise ConfigError(f"{os.path.dirname(path)} holds {what} made with other settings ({', '.join(changed)}); "
                              "use a new --output_dir, or the flags of that run")
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_json(path, values)


def check_or_record_job(job):
    """Writes `job` (a `PretrainingJob`) to <model_dir>/experiment_job.json, or refuses a model_dir whose recorded job
    has other settings; a field the file lacks (added to `PretrainingJob` since) is unchanged at its default."""
    recorded = {key: value for key, value in dataclasses.asdict(job).items() if key != "progress_bar"}
    defaults = {field.name: field.default for field in dataclasses.fields(job)
                if field.default is not dataclasses.MISSING}
    defaults.update({field.name: field.default_factory() for field in dataclasses.fields(job)
                     if field.default_factory is not dataclasses.MISSING})
    check_or_write_settings(os.path.join(job.model_dir, "experiment_job.json"), recorded, "a pre-training run",
                            defaults)
