"""Fine-tuning on the user's own files: CSV / TSV / JSON lines readers, string labels kept from training file to
predictions file to the exported model's output, and one-line errors."""

import csv
import json
import os

import numpy as np
import pytest

from electra_tf.errors import DataError
from finetune.finetuning_spec import FinetuningJob
from finetune.own_data.readers import label_names, read_labelled_file
from finetune.runner import run
from tests.finetune.synthetic_glue import keyword_examples

NAMES = {0: "negative", 1: "positive"}


def _write_csv(path, examples):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["review", "sentiment"])
        for text, label in examples:
            writer.writerow([text, NAMES[label]])
    return str(path)


def test_the_three_formats_read_the_same_examples(tmp_path):
    rows = [('a, "quoted" text', "positive"), ("line\nbreak", "negative")]
    _write_csv(tmp_path / "x.csv", [(text, 1 if label == "positive" else 0) for text, label in rows])
    (tmp_path / "x.tsv").write_text(
        "review\tsentiment\n" + "".join(f"{text.replace(chr(10), ' ')}\t{label}\n" for text, label in rows),
        encoding="utf-8",
    )
    (tmp_path / "x.jsonl").write_text(
        "".join(json.dumps({"review": text, "sentiment": label}) + "\n" for text, label in rows), encoding="utf-8"
    )
    read = {
        kind: read_labelled_file(str(tmp_path / f"x.{kind}"), "review", label_column="sentiment")
        for kind in ("csv", "tsv", "jsonl")
    }
    assert [(e.text_a, e.label) for e in read["csv"]] == rows
    assert [(e.text_a, e.label) for e in read["jsonl"]] == rows
    assert [e.label for e in read["tsv"]] == ["positive", "negative"]
    assert [e.line for e in read["jsonl"]] == [1, 2]


def test_label_order_is_deterministic_and_integer_labels_keep_their_values():
    assert label_names(["pos", "neg", "pos"]) == ["neg", "pos"]
    assert label_names(["10", "2", "1"]) == ["1", "2", "10"]


@pytest.mark.parametrize(
    "content, name, message",
    [
        ("review,sentiment\n", "empty.csv", "holds no example"),
        ("review,sentiment\ngood,positive,extra\n", "fields.csv", "line 2 has 3 fields where the header has 2"),
        ('{"review": "good", "sentiment": "positive"}\n{"review": \n', "bad.jsonl", "line 2 is not valid JSON"),
        ("review,sentiment\n ,positive\n", "blank.csv", "line 2: empty text"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path, content, name, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        read_labelled_file(str(path), "review", label_column="sentiment")


@pytest.mark.parametrize(
    "content, name, where",
    [
        ("text,sentiment\ngood,positive\n", "column.csv", "line 1 (the header)"),
        ("text,sentiment\n", "header_only.csv", "line 1 (the header)"),
        ("text\tsentiment\ngood\tpositive\n", "column.tsv", "line 1 (the header)"),
        (
            '{"review": "good", "sentiment": "positive"}\n{"text": "bad", "sentiment": "negative"}\n',
            "column.jsonl",
            "line 2",
        ),
    ],
)
def test_a_missing_column_names_the_header_and_the_columns_there_are(tmp_path, content, name, where):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as raised:
        read_labelled_file(str(path), "review", label_column="sentiment")
    assert str(raised.value) == (
        f"{path} {where} has no column 'review' (text_column); its columns are 'text', "
        "'sentiment': pass text_column=<one of them>"
    )
    assert raised.value.arguments == ("text_column",)


def test_a_missing_label_column_is_named_only_when_labels_are_needed(tmp_path):
    path = tmp_path / "unlabelled.csv"
    path.write_text("review\ngood\n", encoding="utf-8")
    with pytest.raises(
        DataError,
        match=r"line 1 \(the header\) has no column 'sentiment' \(label_column\); its "
        r"columns are 'review': pass label_column=<one of them>",
    ):
        read_labelled_file(str(path), "review", label_column="sentiment")
    assert [
        e.label for e in read_labelled_file(str(path), "review", label_column="sentiment", require_labels=False)
    ] == [None]


def test_regression_labels_must_be_numbers(tmp_path):
    path = tmp_path / "scores.tsv"
    path.write_text("a\tb\tscore\nx\ty\t0.5\nx\ty\thigh\n", encoding="utf-8")
    with pytest.raises(DataError, match=f"{path} line 3: label 'high' is not a number"):
        read_labelled_file(str(path), "a", "b", "score", regression=True)


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("own")
    return (
        _write_csv(root / "train.csv", keyword_examples(480, seed=0)),
        _write_csv(root / "dev.csv", keyword_examples(100, seed=1)),
    )


def test_string_labels_from_csv_to_predictions_and_the_exported_model(pretrained_tiny, csv_files, tmp_path):
    import keras

    from tests.serving_session import run_like_tf_serving

    train, dev = csv_files
    # No model_size: the checkpoint's architecture says "tiny".
    job = FinetuningJob(
        task="classification",
        init_checkpoint=pretrained_tiny,
        output_dir=str(tmp_path / "out"),
        train_file=train,
        dev_file=dev,
        text_column="review",
        label_column="sentiment",
        learning_rate=1e-3,
        num_train_epochs=3,
        train_batch_size=16,
        max_seq_length=16,
        save_models=True,
        progress_bar=False,
        keep_best_epoch=True,
    )
    results = run(job)
    assert results["job"]["model_size"] == "tiny" and results["hyperparameters"]["layerwise_lr_decay"] == 0.8
    # Dev evaluated after every epoch; the kept epoch is the one of lowest dev loss, and its weights are the ones
    # scored (Keras' dev accuracy of that epoch is the official accuracy).
    trial = results["trials"][0]
    losses = trial["validation_per_epoch"]["loss"]
    assert len(losses) == 3 and trial["kept_epoch"] == int(np.argmin(losses)) + 1
    kept_accuracy = trial["validation_per_epoch"]["accuracy"][trial["kept_epoch"] - 1]
    assert trial["metrics"]["classification"]["accuracy"] == pytest.approx(100 * kept_accuracy, abs=1e-4)
    assert sorted(os.listdir(tmp_path / "out" / "trial_0" / "logs")) == ["train", "validation"]
    assert results["label_names"] == ["negative", "positive"]
    assert results["trials"][0]["metrics"]["classification"]["accuracy"] >= 90.0
    rows = (tmp_path / "out" / "trial_0" / "dev_predictions.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "line\tlabel\tprediction"
    assert {row.split("\t")[2] for row in rows[1:]} <= {"negative", "positive"}
    assert sum(row.split("\t")[1] == row.split("\t")[2] for row in rows[1:]) >= 90
    model = keras.saving.load_model(tmp_path / "out" / "trial_0" / "model.keras")
    assert model.labels == ["negative", "positive"]
    model.export(str(tmp_path / "export"))
    outputs = run_like_tf_serving(str(tmp_path / "export"), "serve_text", {"texts": ["w0 w50 w60", "w50 w60 w70"]})
    assert outputs["labels"] == ["positive", "negative"]


def test_a_dev_label_never_seen_in_training_is_refused(pretrained_tiny, csv_files, tmp_path):
    dev = tmp_path / "dev.csv"
    dev.write_text("review,sentiment\nw1 w2,positive\nw3 w4,neutral\n", encoding="utf-8")
    job = FinetuningJob(
        task="classification",
        init_checkpoint=pretrained_tiny,
        output_dir=str(tmp_path / "out"),
        model_size="tiny",
        train_file=csv_files[0],
        dev_file=str(dev),
        text_column="review",
        label_column="sentiment",
    )
    with pytest.raises(DataError, match=f"{dev} line 3: label 'neutral' never occurs in train_file"):
        run(job)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "name, content, column",
    [
        ("train.csv", b'review,sentiment\n"Tr\xe8s bien",positive\n', 4),
        ("train.tsv", b"review\tsentiment\nTr\xe8s bien\tpositive\n", 3),
        ("train.jsonl", b'{"review": "Tr\xe8s bien", "sentiment": "positive"}\n', 15),
    ],
)
def test_latin1_files_name_file_line_column_and_read_with_their_encoding(tmp_path, name, content, column):
    path = tmp_path / name
    path.write_bytes(content)
    line = 1 if name.endswith(".jsonl") else 2
    with pytest.raises(
        DataError,
        match=rf"{name} line {line} is not valid utf-8 \(byte 0xe8 at column {column}\); "
        r"pass input_encoding=latin-1 \(or the file's encoding\) or "
        r"encoding_errors=replace",
    ):
        read_labelled_file(str(path), "review", label_column="sentiment")
    [example] = read_labelled_file(str(path), "review", label_column="sentiment", encoding="latin-1")
    assert (example.text_a, example.label, example.line) == ("Tr\u00e8s bien", "positive", line)
    [replaced] = read_labelled_file(str(path), "review", label_column="sentiment", encoding_errors="replace")
    assert replaced.text_a == "Tr\ufffds bien"
