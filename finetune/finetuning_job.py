"""One fine-tuning run: a GLUE task, a pre-trained checkpoint, `num_trials` seeds, results and predictions on disk.

`run_finetuning.py` turns its flags into a `FinetuningJob` and calls `run()`; tests and notebooks can do the same.
Outputs in `output_dir`:

* `results.json`: the job, the hyperparameters used, each trial's dev metrics, and per metric the median (what
  the paper reports), mean and std over trials; rewritten after every trial.
* `trial_<k>/dev_predictions.tsv` (MNLI: `dev_matched_predictions.tsv`, `dev_mismatched_predictions.tsv`): dev
  predictions in the format `finetune.glue_eval` scores.
* `trial_<k>/submission/<TASK>.tsv`: test predictions in GLUE submission format, when the task's test file exists.
* `trial_<k>/model.keras` with `--save_models`: the fine-tuned `ElectraTextClassifier` (raw strings in).
"""

import dataclasses
import json
import math
import os

from electra_tf.errors import CheckpointError, ConfigError, DataError
from electra_tf.io_utils import atomic_write_json, write_text_files
from finetune.checkpoints import load_discriminator
from finetune.glue.readers import task_file
from finetune.glue.tasks import ADAM_EPSILON, WARMUP_FRACTION, WEIGHT_DECAY, get_task
from finetune.hyperparameters import check_positive, reference_hyperparameters
from finetune.layerwise_lr import layerwise_lr_multipliers
from finetune.results import format_summary, summarize_trials

RESULTS_FILE = "results.json"
DATA_SOURCES = ("tsv", "tfds")


@dataclasses.dataclass
class FinetuningJob:
    """Everything a fine-tuning run needs; field names are the flag names of `run_finetuning.py`.

    Hyperparameters left as None take the reference's value for `task` and `model_size`
    (`finetune.hyperparameters.reference_hyperparameters`).
    """

    task: str
    init_checkpoint: str
    output_dir: str
    data_dir: str = None
    model_size: str = "small"
    num_trials: int = 1
    seed: int = 0
    learning_rate: float = None
    num_train_epochs: int = None
    train_batch_size: int = None
    eval_batch_size: int = 128
    max_seq_length: int = None
    layerwise_lr_decay: float = None
    layerwise_lr_variant: str = "reference"
    weight_decay: float = WEIGHT_DECAY["reference"]
    warmup_fraction: float = WARMUP_FRACTION
    adam_epsilon: float = ADAM_EPSILON
    bias_correction: bool = False
    vocab_file: str = None  # default: the checkpoint's vocab.txt
    do_lower_case: bool = True
    data_source: str = "tsv"
    tfds_data_dir: str = None
    tfds_download: bool = False
    strategy: str = "default"
    tpu: str = None
    num_cpu_devices: int = 0
    mixed_precision: str = "float32"
    save_models: bool = False
    progress_bar: bool = True

    def validate(self):
        get_task(self.task)  # unknown task: ConfigError naming the known ones
        self._validate_checkpoint_and_output()
        if self.data_source not in DATA_SOURCES:
            raise ConfigError(f"unknown --data_source={self.data_source!r}; choose one of {', '.join(DATA_SOURCES)}")
        if self.data_source == "tsv":
            if not self.data_dir:
                raise ConfigError("--data_dir is required with --data_source=tsv: the GLUE directory holding "
                                  f"{get_task(self.task).directory}/train.tsv")
            spec = get_task(self.task)
            for split in ("train",) + spec.dev_splits:
                path = task_file(self.data_dir, spec.name, split)
                if not os.path.isfile(path):
                    raise DataError(f"GLUE file {path} does not exist: pass --data_dir=<directory holding "
                                    f"{spec.directory}/> as written by download_glue_data.py")
        check_positive(num_trials=self.num_trials, eval_batch_size=self.eval_batch_size)
        self._validate_hyperparameters()

    def _validate_checkpoint_and_output(self):
        if not self.init_checkpoint:
            raise ConfigError("--init_checkpoint is required: the pre-trained model directory (run_pretraining.py "
                              "writes <model_dir>/pretrained)")
        if not os.path.exists(self.init_checkpoint):
            raise CheckpointError(f"--init_checkpoint={self.init_checkpoint} does not exist; pass the pre-trained "
                                  "model directory (run_pretraining.py writes <model_dir>/pretrained)")
        if not self.output_dir:
            raise ConfigError("--output_dir is required")

    def _validate_hyperparameters(self):
        hyperparameters = self.hyperparameters()
        check_positive(learning_rate=hyperparameters.learning_rate, num_train_epochs=hyperparameters.num_train_epochs,
                       train_batch_size=hyperparameters.train_batch_size,
                       max_seq_length=hyperparameters.max_seq_length)
        # Checks the decay's range and the variant.
        layerwise_lr_multipliers([], 1, hyperparameters.layerwise_lr_decay, self.layerwise_lr_variant)
        if self.weight_decay < 0:
            raise ConfigError(f"--weight_decay must be >= 0, got {self.weight_decay}")

    def hyperparameters(self):
        return reference_hyperparameters(
            self.task, self.model_size, learning_rate=self.learning_rate, num_train_epochs=self.num_train_epochs,
            max_seq_length=self.max_seq_length, layerwise_lr_decay=self.layerwise_lr_decay,
            train_batch_size=self.train_batch_size)


def _json_safe(value):
    """JSON has no NaN (an undefined correlation): write null instead."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_safe(item) for item in value]
    return None if isinstance(value, float) and math.isnan(value) else value


def run(job, extra_files=None):
    """Fine-tunes `job.num_trials` models and writes the outputs listed in the module docstring; returns the results
    dict that `results.json` holds."""
    # TensorFlow is imported here, not at the top: validating a job (and reporting bad flags) stays fast.
    import keras

    from electra_tf.tokenizer import ElectraTokenizer
    from electra_tf.training import distribution
    from finetune.task_data import load_task_data
    from finetune.trial import run_trial

    job.validate()
    hyperparameters = job.hyperparameters()
    distribution.set_precision(job.mixed_precision)
    strategy = distribution.create_strategy(job.strategy, job.tpu, job.num_cpu_devices)
    pretrained = load_discriminator(job.init_checkpoint)
    if job.vocab_file:
        pretrained.vocab_file = job.vocab_file
    if not pretrained.vocab_file:
        raise ConfigError(f"{job.init_checkpoint} holds no vocabulary: pass --vocab_file=<the vocab.txt it was "
                          "pre-trained with>")
    tokenizer = ElectraTokenizer(pretrained.vocab_file, do_lower_case=job.do_lower_case)
    pretrained.model.electra_config.check_vocabulary(tokenizer.vocab_size, pretrained.vocab_file)
    pretrained.model.electra_config.check_sequence_length(hyperparameters.max_seq_length)
    data = load_task_data(job.task, job.data_dir, tokenizer, hyperparameters.max_seq_length, source=job.data_source,
                          tfds_data_dir=job.tfds_data_dir, tfds_download=job.tfds_download)
    os.makedirs(job.output_dir, exist_ok=True)
    write_text_files(job.output_dir, extra_files or {})  # e.g. flags.txt: only once every input has checked out
    print(f"hyperparameters: {json.dumps(dataclasses.asdict(hyperparameters), sort_keys=True)}", flush=True)

    results = {"task": data.task, "job": dataclasses.asdict(job),
               "hyperparameters": dataclasses.asdict(hyperparameters),
               "num_train_examples": len(data.train), "trials": []}
    for trial in range(job.num_trials):
        metrics = run_trial(job, trial, pretrained, data, hyperparameters, strategy)
        results["trials"].append({"trial": trial, "seed": job.seed + trial, "metrics": metrics})
        print(f"trial {trial}: {json.dumps(_json_safe(metrics), sort_keys=True)}", flush=True)
        results["summary"] = summarize_trials([entry["metrics"] for entry in results["trials"]])
        atomic_write_json(os.path.join(job.output_dir, RESULTS_FILE), _json_safe(results))
    for line in format_summary(results["summary"]):
        print(line, flush=True)
    keras.backend.clear_session(free_memory=False)
    return results
