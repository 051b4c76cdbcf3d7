"""`max_train_examples` / `max_eval_examples`: every task keeps the first N examples of its training split and of each
evaluation split (GLUE and own files: rows; tagging: sentences; SQuAD: questions), and nothing else changes."""

import json

import numpy as np
import pytest

from electra_tf.errors import ConfigError
from finetune.finetuning_spec import FinetuningJob
from finetune.glue.features import encode_examples
from finetune.glue.readers import read_examples
from finetune.registry import get_task
from finetune.squad.readers import read_squad_json
from finetune.tagging.readers import read_conll


@pytest.fixture(scope="module")
def tokenizer(shared_data):
    from electra_tf.tokenizer import ElectraTokenizer

    return ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))


def _load(tokenizer, **fields):
    job = FinetuningJob(init_checkpoint="unused", output_dir="unused", **fields)
    return get_task(job.task).load_data(job, tokenizer, 32)


def test_glue_keeps_the_first_examples_before_adding_swapped_pairs(shared_data, tokenizer):
    glue = str(shared_data / "glue")
    data = _load(tokenizer, task="MRPC", data_dir=glue, max_train_examples=10, max_eval_examples=7)
    assert data.num_train_examples_before_swap == 10 and len(data.train) == 20
    dev = encode_examples(read_examples(glue, "MRPC", "dev")[:7], tokenizer, "MRPC", 32)
    np.testing.assert_array_equal(data.dev["dev"].input_ids, dev.input_ids)
    assert len(_load(tokenizer, task="MRPC", data_dir=glue).dev["dev"]) == len(read_examples(glue, "MRPC", "dev"))


def test_own_files_keep_their_first_rows(tokenizer, tmp_path):
    rows = "".join(f"{'good' if i % 2 else 'bad'} movie number {i}\t{'pos' if i % 2 else 'neg'}\n" for i in range(12))
    for name in ("train", "dev", "test"):
        (tmp_path / f"{name}.tsv").write_text("text\tlabel\n" + rows, encoding="utf-8")
    data = _load(
        tokenizer,
        task="classification",
        train_file=str(tmp_path / "train.tsv"),
        dev_file=str(tmp_path / "dev.tsv"),
        test_file=str(tmp_path / "test.tsv"),
        text_column="text",
        max_train_examples=5,
        max_eval_examples=3,
    )
    assert len(data.train) == 5
    for split in ("dev", "test"):
        examples, features = data.evaluation[split]
        assert [example.line for example in examples] == [2, 3, 4] and len(features) == 3


def test_tagging_keeps_the_first_sentences(shared_data, tokenizer):
    train, dev = (str(shared_data / "tagging" / "conll2000" / f"{name}.txt") for name in ("train", "test"))
    data = _load(tokenizer, task="chunk", train_file=train, dev_file=dev, max_train_examples=6, max_eval_examples=4)
    assert data.train_sentences == read_conll(train)[:6]
    assert data.evaluation["dev"][0] == read_conll(dev, argument="dev_file")[:4]


def test_squad_keeps_the_first_questions_and_scores_only_them(shared_data, tokenizer, tmp_path):
    squad = (shared_data / "squad" / "dev-v1.1.json").read_text(encoding="utf-8")
    for name in ("train-v1.1.json", "dev-v1.1.json"):
        (tmp_path / name).write_text(squad, encoding="utf-8")
    data = _load(
        tokenizer,
        task="squadv1",
        data_dir=str(tmp_path),
        max_query_length=16,
        doc_stride=8,
        max_train_examples=6,
        max_eval_examples=4,
    )
    questions = read_squad_json(str(tmp_path / "dev-v1.1.json")).questions
    assert [q.qas_id for q in data.train.questions] == [q.qas_id for q in questions[:6]]
    assert [q.qas_id for q in data.dev.questions] == [q.qas_id for q in questions[:4]]
    scored = [
        qa["id"] for article in data.dev_json["data"] for paragraph in article["paragraphs"] for qa in paragraph["qas"]
    ]
    assert scored == [q.qas_id for q in questions[:4]]
    assert json.loads(squad)["data"][0]["paragraphs"][0]["qas"][0]["id"] == scored[0]


@pytest.mark.parametrize("name", ["max_train_examples", "max_eval_examples", "save_checkpoints_steps"])
def test_limits_must_be_positive(pretrained_tiny, shared_data, name):
    job = FinetuningJob(
        task="MRPC",
        init_checkpoint=pretrained_tiny,
        output_dir="unused",
        data_dir=str(shared_data / "glue"),
        **{name: 0},
    )
    with pytest.raises(ConfigError, match=f"^{name} must be positive, got 0$") as raised:
        job.validate()
    assert raised.value.arguments == (name,)
