"""SQuAD 1.1 (`squadv1`) and 2.0 (`squad`) as a fine-tuning `Task`: answer spans over sliding context windows.

Outputs per trial: `predictions.json`, `nbest_predictions.json` and, for 2.0, `null_odds.json` in the official formats
(`finetune.squad_eval` scores them); results.json also lists each trial's training loss per epoch. With
`save_models`, the span model as `model.keras`.
"""

import os

from electra_tf.errors import ConfigError, DataError
from finetune.hyperparameters import check_positive, size_defaults
from finetune.squad import features as features_lib
from finetune.squad.task_data import SQUAD_TASKS, squad_file
from finetune.task import Task

# Loading, training and evaluating import what they need where they start, TensorFlow among it: a job is
# validated with this module (`finetune.registry`) before TensorFlow is imported.

SQUAD_EPOCHS = 2
FILE_SOURCES = ("json", "tsv")  # "tsv" is electra-finetune's default data_source: files in data_dir


def smallest_width(model):
    """The narrowest batch the model takes: the joint head keeps `beam_size` positions per window."""
    from finetune.batching import SMALLEST_WIDTH

    return max(SMALLEST_WIDTH, getattr(model, "beam_size", 0))


def training_examples(model, features):
    """(inputs, labels) per window, in order; the joint head also sees the gold starts as an input (teacher
    forcing)."""
    import tensorflow as tf

    inputs = features.inputs()
    if model.uses_teacher_forcing:
        inputs = dict(inputs, start_positions=features.start_positions)
    return tf.data.Dataset.from_tensor_slices((inputs, features.labels()))


def span_candidates(model, features, batch_size, pad_to_max_length=False):
    """The model's candidate spans for every window of `features` (`postprocess.SpanCandidates`)."""
    from finetune.batching import predict_in_buckets
    from finetune.models.squad_heads import MASKED_LOGIT
    from finetune.squad.postprocess import beam_pairs, top_k_pairs

    outputs = predict_in_buckets(
        model,
        features.inputs(),
        batch_size,
        length_key="input_mask",
        pad_to_max_length=pad_to_max_length,
        sequence_outputs=("start_logits", "end_logits"),
        pad_value=MASKED_LOGIT,
        smallest_width=smallest_width(model),
    )
    if model.head_name == "simple":
        return top_k_pairs(outputs["start_logits"], outputs["end_logits"], k=model.beam_size)
    return beam_pairs(
        outputs["start_top_log_probs"],
        outputs["start_top_index"],
        outputs["end_top_log_probs"],
        outputs["end_top_index"],
        outputs.get("impossible_logits"),
    )


def score(dev_json, answers, version):
    """The official evaluation dict of `answers` (a `SquadPredictions`)."""
    from finetune.squad.metrics import evaluate_v1, evaluate_v2

    if version == "1.1":
        return evaluate_v1(dev_json, answers.predictions)
    return evaluate_v2(dev_json, answers.predictions, answers.null_odds)


class SquadTask(Task):
    """SQuAD `version` ("1.1" or "2.0") under the task name `name`."""

    records_train_loss = True
    options = (
        "squad_head",
        "doc_stride",
        "max_query_length",
        "n_best_size",
        "max_answer_length",
        "null_score_threshold",
    )

    def __init__(self, name):
        self.name = name
        self.version = SQUAD_TASKS[name][0]

    def default_hyperparameters(self, model_size):
        return size_defaults(model_size, SQUAD_EPOCHS, features_lib.MAX_SEQ_LENGTH)

    def validate(self, job):
        from finetune.models.squad_heads import HEADS

        if job.squad_head not in HEADS:
            raise ConfigError(
                f"unknown squad_head={job.squad_head!r}; choose one of {', '.join(HEADS)}", arguments=("squad_head",)
            )
        if job.data_source in FILE_SOURCES:
            if not job.data_dir:
                raise ConfigError(
                    f"data_dir is required: the directory holding {' and '.join(SQUAD_TASKS[self.name][1].values())}",
                    arguments=("data_dir",),
                )
            for split in ("train", "dev"):
                path = squad_file(job.data_dir, self.name, split)
                if not os.path.isfile(path):
                    raise DataError(
                        f"SQuAD file {path} does not exist: pass data_dir=<directory holding the official JSON files>",
                        arguments=("data_dir",),
                    )
        elif job.data_source != "tfds":
            raise ConfigError(
                f"unknown data_source={job.data_source!r} for SQuAD; choose json or tfds", arguments=("data_source",)
            )
        check_positive(
            doc_stride=job.doc_stride,
            max_query_length=job.max_query_length,
            n_best_size=job.n_best_size,
            max_answer_length=job.max_answer_length,
        )

    def load_data(self, job, tokenizer, max_seq_length):
        from finetune.squad.task_data import load_squad_data

        source = "json" if job.data_source in FILE_SOURCES else job.data_source
        return load_squad_data(
            self.name,
            job.data_dir,
            tokenizer,
            max_seq_length,
            job.doc_stride,
            job.max_query_length,
            source=source,
            tfds_data_dir=job.tfds_data_dir,
            tfds_download=job.tfds_download,
            max_train_examples=job.max_train_examples,
            max_eval_examples=job.max_eval_examples,
            encoding=job.input_encoding,
            encoding_errors=job.encoding_errors,
        )

    def describe_data(self, data):
        return {
            "version": data.version,
            "num_train_questions": len(data.train.questions),
            "num_train_windows": len(data.train_features),
            "num_dev_questions": len(data.dev.questions),
        }

    def describe_training(self, data):
        return f"{len(data.train.questions)} questions in {len(data.train_features)} windows"

    def build_model(self, pretrained_model, hyperparameters, job, data):
        from electra_tf.models import clone_backbone
        from finetune.models import ElectraSquadModel

        return ElectraSquadModel(
            clone_backbone(pretrained_model.backbone),
            head=job.squad_head,
            version_2=self.version == "2.0",
            beam_size=job.n_best_size,
        )

    def compile_model(self, model, optimizer, **micro_batches):
        # The model computes its own span losses.
        model.compile(optimizer=optimizer, **micro_batches)

    def train_examples(self, model, data):
        return training_examples(model, data.train_features)

    def bucketing(self, model):
        return {"length_key": "input_mask", "smallest_width": smallest_width(model)}

    def evaluate(self, model, data, trial_dir, job):
        from finetune.squad.postprocess import postprocess

        candidates = span_candidates(model, data.dev_features, job.eval_batch_size, job.pad_to_max_length)
        answers = postprocess(
            data.dev,
            data.dev_features,
            candidates,
            n_best_size=job.n_best_size,
            max_answer_length=job.max_answer_length,
            null_score_threshold=job.null_score_threshold,
        )
        answers.write(trial_dir)
        return {f"SQuAD{data.version}": score(data.dev_json, answers, data.version)}

    def save_model(self, model, path, tokenizer, max_seq_length):
        from electra_tf.checkpoints.tokenizer_files import write_tokenizer_files

        model.save(path)
        # The model takes ids: its tokenizer (vocabulary, casing) goes beside it, for electra-export.
        write_tokenizer_files(os.path.dirname(os.path.abspath(path)), tokenizer.vocab_file, tokenizer.settings)


def squad_tasks():
    """{name: SquadTask} for SQuAD 1.1 ("squadv1") and 2.0 ("squad")."""
    return {name: SquadTask(name) for name in SQUAD_TASKS}
