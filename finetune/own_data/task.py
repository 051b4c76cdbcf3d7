"""Fine-tuning on the user's own files: `classification` (string labels) and `regression` (a number per example), on
single sentences or pairs, through the same runner as GLUE.

String labels are ordered by `readers.label_names`, mapped to class ids by the `finetune.models.labels.LabelMapping`
the Python API uses, and saved with the model (`ElectraTextClassifier.labels`), so predictions files and the exported
model's outputs carry the original strings. Outputs per trial: `dev_predictions.tsv` (and `test_predictions.tsv`):
`line`, `label` (gold) and `prediction`, the line being the example's line in its file; with `save_models`, the
classifier as `model.keras`.
"""

import dataclasses
import os

import numpy as np

from electra_tf.errors import ConfigError, DataError
from finetune.hyperparameters import size_defaults
from finetune.task import Task, first_examples

# Loading, training and evaluating import what they need where they start, TensorFlow among it: a job is
# validated with this module (`finetune.registry`) before TensorFlow is imported, and `electra-export --help`
# imports it.

EPOCHS = 3
MAX_SEQ_LENGTH = 128


@dataclasses.dataclass
class OwnData:
    labels: object  # finetune.models.labels.LabelMapping; None for regression
    train: object  # GlueFeatures
    evaluation: dict  # split -> (examples, GlueFeatures)


class OwnDataTask(Task):
    options = ("train_file", "dev_file", "test_file", "text_column", "text_pair_column", "label_column")

    def __init__(self, name, regression):
        self.name = name
        self.regression = regression

    def default_hyperparameters(self, model_size):
        return size_defaults(model_size, EPOCHS, MAX_SEQ_LENGTH)

    def validate(self, job):
        for argument in ("train_file", "dev_file", "text_column"):
            if not getattr(job, argument):
                raise ConfigError(f"task={self.name} needs {argument}", arguments=(argument, "task"))
        from electra_tf.preflight import require_file
        from finetune.own_data.readers import file_format

        for argument in ("train_file", "dev_file", "test_file"):
            if getattr(job, argument):
                file_format(getattr(job, argument), argument)
                require_file(getattr(job, argument), argument)

    def _read(self, job, argument):
        from finetune.own_data.readers import read_labelled_file

        examples = read_labelled_file(
            getattr(job, argument),
            job.text_column,
            job.text_pair_column,
            job.label_column,
            regression=self.regression,
            argument=argument,
            require_labels=argument != "test_file",
            encoding=job.input_encoding,
            encoding_errors=job.encoding_errors,
        )
        return first_examples(examples, job.max_train_examples if argument == "train_file" else job.max_eval_examples)

    def load_data(self, job, tokenizer, max_seq_length):
        from finetune.models.labels import LabelMapping
        from finetune.own_data import readers

        train = self._read(job, "train_file")
        labels = None
        if not self.regression:
            names = readers.label_names([example.label for example in train])
            if len(names) < 2:
                raise DataError(
                    f"train_file={job.train_file} has the one label {names}: a classifier needs two or "
                    "more (task=regression for numbers)",
                    arguments=("train_file", "task"),
                )
            labels = LabelMapping(names)
        evaluation = {}
        for split in ("dev", "test"):
            if getattr(job, f"{split}_file"):
                examples = self._read(job, f"{split}_file")
                if labels:
                    readers.check_known_labels(examples, labels, getattr(job, f"{split}_file"), f"{split}_file")
                evaluation[split] = (examples, self._encode(examples, labels, tokenizer, max_seq_length))
        return OwnData(labels, self._encode(train, labels, tokenizer, max_seq_length), evaluation)

    def _encode(self, examples, labels, tokenizer, max_seq_length):
        from finetune.glue.features import GlueFeatures

        if self.regression:
            labels = np.array([np.nan if e.label is None else e.label for e in examples], np.float32)
        else:
            labels = labels.ids([e.label for e in examples])
        return GlueFeatures.of_texts(tokenizer, examples, max_seq_length, labels)

    def describe_data(self, data):
        return {"num_train_examples": len(data.train), "label_names": data.labels.names if data.labels else None}

    def describe_training(self, data):
        return f"{len(data.train)} train examples"

    def build_model(self, pretrained_model, hyperparameters, job, data):
        from electra_tf.models import clone_backbone
        from finetune.models import ElectraTextClassifier

        return ElectraTextClassifier(
            clone_backbone(pretrained_model.backbone),
            regression=self.regression,
            labels=data.labels.names if data.labels else None,
        )

    def compile_model(self, model, optimizer, **micro_batches):
        model.compile(optimizer=optimizer, **micro_batches)

    def train_examples(self, model, data):
        from finetune.glue.features import features_to_dataset

        return features_to_dataset(data.train)

    def validation_dataset(self, model, data, batch_size, pad_to_max_length=False):
        from finetune.glue.features import features_to_dataset

        if "dev" not in data.evaluation:
            return None
        return features_to_dataset(
            data.evaluation["dev"][1], batch_size, pad_to_max_length=pad_to_max_length, in_length_order=True
        )

    def evaluate(self, model, data, trial_dir, job):
        from finetune.batching import predict_in_buckets
        from finetune.glue import metrics

        results = {}
        for split, (examples, features) in data.evaluation.items():
            outputs = predict_in_buckets(
                model, features.inputs(), job.eval_batch_size, pad_to_max_length=job.pad_to_max_length
            )
            predictions = model.output_labels(outputs)
            _write_predictions(os.path.join(trial_dir, f"{split}_predictions.tsv"), examples, predictions)
            if split == "test" and any(example.label is None for example in examples):
                continue
            key = self.name if split == "dev" else f"{self.name}-{split}"
            if self.regression:
                gold = features.label_ids
                results[key] = {"pearson": metrics.pearson(gold, outputs), "spearman": metrics.spearman(gold, outputs)}
            else:
                gold = features.label_ids
                predicted = np.argmax(outputs, axis=-1)
                results[key] = {
                    "accuracy": metrics.accuracy(gold, predicted),
                    "macro_f1": float(
                        np.mean(
                            [metrics.f1(gold, predicted, positive=label) for label in range(len(data.labels.names))]
                        )
                    ),
                }
        return results

    def save_model(self, model, path, tokenizer, max_seq_length):
        from finetune.models import ElectraTextClassifierPreprocessor

        model.preprocessor = ElectraTextClassifierPreprocessor.from_tokenizer(tokenizer, max_seq_length)
        model.save(path)


def _write_predictions(path, examples, predictions):
    from electra_tf.io_utils import atomic_write_text

    rows = ["line\tlabel\tprediction"]
    rows.extend(
        f"{example.line}\t{'' if example.label is None else example.label}\t{prediction}"
        for example, prediction in zip(examples, predictions)
    )
    atomic_write_text(path, "\n".join(rows) + "\n")


def own_data_tasks():
    return {
        "classification": OwnDataTask("classification", regression=False),
        "regression": OwnDataTask("regression", regression=True),
    }
