"""GLUE as a fine-tuning `Task`: sentence (pair) classification or regression on the [CLS] vector.

Outputs per trial: `dev_predictions.tsv` (MNLI: `dev_matched_predictions.tsv`, `dev_mismatched_predictions.tsv`) in
the format `finetune.glue_eval` scores, `submission/<TASK>.tsv` in GLUE submission format when the task's test file
exists, and with `save_models` an `ElectraTextClassifier` (raw strings in) as `model.keras`.
"""

import os

import numpy as np

from electra_tf.errors import ConfigError, DataError
from finetune.glue import tasks as specs
from finetune.glue.readers import task_file
from finetune.hyperparameters import size_defaults
from finetune.task import Task

# Loading, training and evaluating import what they need where they start, TensorFlow among it: a job is
# validated with this module (`finetune.registry`) before TensorFlow is imported.

DATA_SOURCES = ("tsv", "tfds")


def predict_labels(classifier, features, batch_size, pad_to_max_length=False):
    """Class ids (argmax of the logits) or, for regression, the scores of `features`, predicted in length buckets
    (`finetune.batching.predict_in_buckets`)."""
    from finetune.batching import predict_in_buckets

    outputs = predict_in_buckets(classifier, features.inputs(), batch_size, pad_to_max_length=pad_to_max_length)
    return outputs if classifier.regression else np.argmax(outputs, axis=-1)


def dev_predictions_name(split):
    return f"{split}_predictions.tsv"


class GlueTask(Task):
    """One GLUE task, described by its `finetune.glue.tasks.TaskSpec`."""

    def __init__(self, spec):
        self.spec = spec
        self.name = spec.name

    def default_hyperparameters(self, model_size):
        return size_defaults(model_size, self.spec.epochs, self.spec.max_seq_length, self.spec.learning_rates)

    def validate(self, job):
        if job.data_source not in DATA_SOURCES:
            raise ConfigError(
                f"unknown data_source={job.data_source!r}; choose one of {', '.join(DATA_SOURCES)}",
                arguments=("data_source",),
            )
        if job.data_source != "tsv":
            return
        if not job.data_dir:
            raise ConfigError(
                "data_dir is required with data_source=tsv: the GLUE directory holding "
                f"{self.spec.directory}/train.tsv",
                arguments=("data_dir", "data_source"),
            )
        for split in ("train",) + self.spec.dev_splits:
            path = task_file(job.data_dir, self.spec, split)
            if not os.path.isfile(path):
                raise DataError(
                    f"GLUE file {path} does not exist: pass data_dir=<directory holding "
                    f"{self.spec.directory}/> as written by download_glue_data.py",
                    arguments=("data_dir",),
                )

    def load_data(self, job, tokenizer, max_seq_length):
        from finetune.glue.task_data import load_task_data

        return load_task_data(
            self.spec,
            job.data_dir,
            tokenizer,
            max_seq_length,
            source=job.data_source,
            tfds_data_dir=job.tfds_data_dir,
            tfds_download=job.tfds_download,
            max_train_examples=job.max_train_examples,
            max_eval_examples=job.max_eval_examples,
            encoding=job.input_encoding,
            encoding_errors=job.encoding_errors,
        )

    def describe_data(self, data):
        return {"num_train_examples": len(data.train)}

    def describe_training(self, data):
        return f"{len(data.train)} train examples"

    def build_model(self, pretrained_model, hyperparameters, job, data):
        from electra_tf.models import clone_backbone
        from finetune.models import ElectraTextClassifier

        return ElectraTextClassifier(
            clone_backbone(pretrained_model.backbone),
            num_classes=self.spec.num_labels,
            regression=self.spec.is_regression,
        )

    def compile_model(self, model, optimizer, **micro_batches):
        # The classifier's own loss and metrics (`ElectraTextClassifier.compile`): build_model made it regress or
        # classify as the task does.
        model.compile(optimizer=optimizer, **micro_batches)

    def train_examples(self, model, data):
        from finetune.glue.features import features_to_dataset

        return features_to_dataset(data.train)

    def validation_dataset(self, model, data, batch_size, pad_to_max_length=False):
        from finetune.glue.features import features_to_dataset

        # The first labelled dev split (MNLI: matched), as the reference's per-epoch evaluation would pick.
        labelled = [features for features in data.dev.values() if features.is_labelled()]
        if not labelled:
            return None
        return features_to_dataset(labelled[0], batch_size, pad_to_max_length=pad_to_max_length, in_length_order=True)

    def evaluate(self, model, data, trial_dir, job):
        from finetune.glue.metrics import score_key, task_metrics
        from finetune.glue.predictions import write_predictions
        from finetune.glue.task_data import submission_file_name

        results = {}
        for split, features in data.dev.items():
            predictions = predict_labels(model, features, job.eval_batch_size, job.pad_to_max_length)
            results[score_key(self.spec, split)] = task_metrics(self.spec, features.label_ids, predictions)
            write_predictions(os.path.join(trial_dir, dev_predictions_name(split)), predictions, self.spec)
        for split, features in data.test.items():
            predictions = predict_labels(model, features, job.eval_batch_size, job.pad_to_max_length)
            write_predictions(
                os.path.join(trial_dir, "submission", submission_file_name(self.spec, split)), predictions, self.spec
            )
        return results

    def save_model(self, model, path, tokenizer, max_seq_length):
        from finetune.models import ElectraTextClassifierPreprocessor

        model.preprocessor = ElectraTextClassifierPreprocessor.from_tokenizer(tokenizer, max_seq_length)
        model.save(path)


def glue_tasks():
    """{name: GlueTask} for the nine GLUE tasks."""
    return {name: GlueTask(spec) for name, spec in specs.TASKS.items()}
