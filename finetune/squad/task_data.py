"""A SQuAD task's train and dev questions read and featurised once for all fine-tuning trials."""

import dataclasses
import os

from electra_tf.errors import ConfigError, DataError
from finetune.squad import features as features_lib
from finetune.squad import readers

# task name -> (SQuAD version, official file names, tensorflow-datasets config)
SQUAD_TASKS = {
    "squadv1": ("1.1", {"train": "train-v1.1.json", "dev": "dev-v1.1.json"}, "squad/v1.1"),
    "squad": ("2.0", {"train": "train-v2.0.json", "dev": "dev-v2.0.json"}, "squad/v2.0"),
}
TFDS_SPLITS = {"train": "train", "dev": "validation"}


def squad_file(data_dir, task, split):
    return os.path.join(data_dir, SQUAD_TASKS[task.lower()][1][split])


@dataclasses.dataclass
class SquadTaskData:
    task: str
    version: str
    train: readers.SquadData
    train_features: features_lib.SquadFeatures
    dev: readers.SquadData
    dev_features: features_lib.SquadFeatures
    dev_json: dict  # the dev file's JSON restricted to the dev questions kept (what the official scripts score)


def _read(task, split, data_dir, source, tfds_data_dir, tfds_download, encoding, encoding_errors):
    version, _, tfds_config = SQUAD_TASKS[task]
    if source == "tfds":
        data = readers.read_tfds(TFDS_SPLITS[split], tfds_data_dir, tfds_download, config=tfds_config)
        dataset_json = None
    else:
        path = squad_file(data_dir, task, split)
        data = readers.read_squad_json(path, encoding, encoding_errors)
        dataset_json = readers.load_json(path, encoding, encoding_errors)
    if data.version != version:
        raise DataError(
            f"task={task} is SQuAD {version} but the {split} data is SQuAD {data.version}; use "
            f"task={'squad' if data.version == '2.0' else 'squadv1'}",
            arguments=("task",),
        )
    return data, dataset_json


def load_squad_data(
    task,
    data_dir,
    tokenizer,
    max_seq_length,
    doc_stride,
    max_query_length,
    source="json",
    tfds_data_dir=None,
    tfds_download=False,
    max_train_examples=None,
    max_eval_examples=None,
    encoding="utf-8",
    encoding_errors="strict",
):
    """Reads and featurises `task`'s train and dev files (only their first `max_train_examples` /
    `max_eval_examples` questions when given), decoding them with `encoding` / `encoding_errors`."""
    task = task.lower()
    if task not in SQUAD_TASKS:
        raise ConfigError(f"unknown SQuAD task={task!r}; choose one of {', '.join(SQUAD_TASKS)}", arguments=("task",))
    train, _ = _read(task, "train", data_dir, source, tfds_data_dir, tfds_download, encoding, encoding_errors)
    dev, dev_json = _read(task, "dev", data_dir, source, tfds_data_dir, tfds_download, encoding, encoding_errors)
    train, dev = train.sliced(max_train_examples), dev.sliced(max_eval_examples)
    if dev_json is None:  # tfds: rebuild the official layout the scorer reads
        dev_json = {
            "version": f"v{dev.version}",
            "data": [
                {
                    "title": "",
                    "paragraphs": [
                        {
                            "context": dev.contexts[q.context_index],
                            "qas": [
                                {
                                    "id": q.qas_id,
                                    "question": q.question_text,
                                    "is_impossible": q.is_impossible,
                                    "answers": [{"text": text, "answer_start": -1} for text in q.gold_answers],
                                }
                            ],
                        }
                        for q in dev.questions
                    ],
                }
            ],
        }
    dev_json = readers.restrict_dataset_json(dev_json, [q.qas_id for q in dev.questions])

    def featurized(data):
        return features_lib.featurize(data, tokenizer, max_seq_length, doc_stride, max_query_length)

    return SquadTaskData(task, SQUAD_TASKS[task][0], train, featurized(train), dev, featurized(dev), dev_json)
