"""One SQuAD fine-tuning run (`run_finetuning.py --task=squad|squadv1`): a pre-trained checkpoint, `num_trials`
seeds, the official prediction files and scores on disk.

Outputs in `output_dir`: `results.json` (the job, hyperparameters, each trial's official dev metrics and training
losses, median/mean/std per metric; rewritten after every trial) and per trial `trial_<k>/predictions.json`,
`nbest_predictions.json` and, for 2.0, `null_odds.json` in the official formats (`finetune.squad_eval` scores them).
"""

import dataclasses
import json
import os

from electra_tf.errors import ConfigError, DataError
from electra_tf.io_utils import atomic_write_json, write_text_files
from finetune.finetuning_job import FinetuningJob
from finetune.glue.tasks import LAYERWISE_LR_DECAY, REFERENCE_LEARNING_RATES, TRAIN_BATCH_SIZE
from finetune.hyperparameters import FinetuningHyperparameters, check_positive, size_family
from finetune.squad import features as features_lib
from finetune.squad import postprocess as postprocess_lib
from finetune.squad.heads import HEADS
from finetune.squad.task_data import SQUAD_TASKS, squad_file

RESULTS_FILE = "results.json"
SQUAD_EPOCHS = 2
FILE_SOURCES = ("json", "tsv")  # "tsv" is run_finetuning.py's default --data_source: files in --data_dir


@dataclasses.dataclass
class SquadJob(FinetuningJob):
    """Everything a SQuAD run needs; field names are `run_finetuning.py` flag names. Hyperparameters left None take
    the reference's values for SQuAD and `model_size` (lr 3e-4/1e-4/5e-5, 2 epochs, length 512, batch 32)."""

    data_source: str = "json"
    squad_head: str = "joint"
    doc_stride: int = features_lib.DOC_STRIDE
    max_query_length: int = features_lib.MAX_QUERY_LENGTH
    n_best_size: int = postprocess_lib.N_BEST_SIZE
    max_answer_length: int = postprocess_lib.MAX_ANSWER_LENGTH
    null_score_threshold: float = 0.0
    max_train_questions: int = None
    max_dev_questions: int = None

    def validate(self):
        if self.task.lower() not in SQUAD_TASKS:
            raise ConfigError(f"unknown SQuAD task {self.task!r}; choose one of {', '.join(SQUAD_TASKS)}")
        self._validate_checkpoint_and_output()
        if self.squad_head not in HEADS:
            raise ConfigError(f"unknown --squad_head={self.squad_head!r}; choose one of {', '.join(HEADS)}")
        if self.data_source in FILE_SOURCES:
            if not self.data_dir:
                raise ConfigError(f"--data_dir is required: the directory holding "
                                  f"{' and '.join(SQUAD_TASKS[self.task.lower()][1].values())}")
            for split in ("train", "dev"):
                path = squad_file(self.data_dir, self.task, split)
                if not os.path.isfile(path):
                    raise DataError(f"SQuAD file {path} does not exist: pass --data_dir=<directory holding the "
                                    "official JSON files>")
        elif self.data_source != "tfds":
            raise ConfigError(f"unknown --data_source={self.data_source!r} for SQuAD; choose json or tfds")
        check_positive(num_trials=self.num_trials, eval_batch_size=self.eval_batch_size, doc_stride=self.doc_stride,
                       max_query_length=self.max_query_length, n_best_size=self.n_best_size,
                       max_answer_length=self.max_answer_length)
        for name in ("max_train_questions", "max_dev_questions"):
            if getattr(self, name) is not None:
                check_positive(**{name: getattr(self, name)})
        self._validate_hyperparameters()

    def hyperparameters(self):
        family = size_family(self.model_size)

        def given(value, default):
            return default if value is None else value

        return FinetuningHyperparameters(
            learning_rate=given(self.learning_rate, REFERENCE_LEARNING_RATES[family]),
            num_train_epochs=given(self.num_train_epochs, SQUAD_EPOCHS),
            max_seq_length=given(self.max_seq_length, features_lib.MAX_SEQ_LENGTH),
            layerwise_lr_decay=given(self.layerwise_lr_decay, LAYERWISE_LR_DECAY[family]),
            train_batch_size=given(self.train_batch_size, TRAIN_BATCH_SIZE))


def run(job, extra_files=None):
    """Fine-tunes `job.num_trials` models and writes the outputs in the module docstring; returns results.json's
    content."""
    import keras

    from electra_tf.tokenizer import ElectraTokenizer
    from electra_tf.training import distribution
    from finetune.checkpoints import load_discriminator
    from finetune.results import format_summary, summarize_trials
    from finetune.squad.task_data import load_squad_data
    from finetune.squad.trial import run_squad_trial

    job.validate()
    hyperparameters = job.hyperparameters()
    distribution.set_precision(job.mixed_precision)
    strategy = distribution.create_strategy(job.strategy, job.tpu, job.num_cpu_devices)
    pretrained = load_discriminator(job.init_checkpoint)
    vocab_file = job.vocab_file or pretrained.vocab_file
    if not vocab_file:
        raise ConfigError(f"{job.init_checkpoint} holds no vocabulary: pass --vocab_file=<the vocab.txt it was "
                          "pre-trained with>")
    config = pretrained.model.electra_config
    tokenizer = ElectraTokenizer(vocab_file, do_lower_case=job.do_lower_case)
    config.check_vocabulary(tokenizer.vocab_size, vocab_file)
    config.check_sequence_length(hyperparameters.max_seq_length)
    source = "json" if job.data_source in FILE_SOURCES else job.data_source
    data = load_squad_data(job.task, job.data_dir, tokenizer, hyperparameters.max_seq_length, job.doc_stride,
                           job.max_query_length, source=source, tfds_data_dir=job.tfds_data_dir,
                           tfds_download=job.tfds_download, max_train_questions=job.max_train_questions,
                           max_dev_questions=job.max_dev_questions)
    os.makedirs(job.output_dir, exist_ok=True)
    write_text_files(job.output_dir, extra_files or {})  # e.g. flags.txt: only once every input has checked out
    print(f"hyperparameters: {json.dumps(dataclasses.asdict(hyperparameters), sort_keys=True)}", flush=True)
    results = {"task": data.task, "version": data.version, "job": dataclasses.asdict(job),
               "hyperparameters": dataclasses.asdict(hyperparameters),
               "num_train_questions": len(data.train.questions), "num_train_windows": len(data.train_features),
               "num_dev_questions": len(data.dev.questions), "trials": []}
    for trial in range(job.num_trials):
        metrics, losses = run_squad_trial(job, trial, pretrained, data, hyperparameters, strategy)
        results["trials"].append({"trial": trial, "seed": job.seed + trial, "metrics": metrics,
                                  "train_loss_per_epoch": losses})
        print(f"trial {trial}: {json.dumps(metrics, sort_keys=True)}", flush=True)
        results["summary"] = summarize_trials([entry["metrics"] for entry in results["trials"]])
        atomic_write_json(os.path.join(job.output_dir, RESULTS_FILE), results)
    for line in format_summary(results["summary"]):
        print(line, flush=True)
    keras.backend.clear_session(free_memory=False)
    return results
