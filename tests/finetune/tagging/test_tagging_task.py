"""Tagging through the fine-tuning runner: CoNLL files in, a learnt tagger, windows for long sentences, predictions in
CoNLL format, errors for bad files; and the same through the electra-finetune and electra-export commands."""

import json

import numpy as np
import pytest

from electra_tf.errors import ConfigError, DataError
from finetune.finetuning_spec import FinetuningJob
from finetune.runner import run
from tests.command_output import unexpected_program_lines
from tests.console_commands import run_command

TAGS = ("B-LOW", "I-LOW", "B-HIGH", "I-HIGH", "O")


def _tag(number):
    """The tag of word w<number>: fixed per word, so that a tiny model learns it in a few epochs (conlleval reads the
    resulting sequences, well-formed or not, by its rules)."""
    for limit, tag in ((40, "B-LOW"), (80, "I-LOW"), (120, "B-HIGH"), (160, "I-HIGH")):
        if number < limit:
            return tag
    return "O"


def _sentence(rng, length):
    numbers = rng.integers(0, 195, size=length)
    return [f"w{number}" for number in numbers], [_tag(number) for number in numbers]


def write_conll(path, sentences, pos_column=True):
    """`word POS tag` lines (CoNLL-2000's layout), -DOCSTART- first, a blank line between sentences."""
    lines = ["-DOCSTART- -X- O", ""]
    for words, tags in sentences:
        lines.extend(f"{word} NN {tag}" if pos_column else f"{word} {tag}" for word, tag in zip(words, tags))
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def conll_files(tmp_path_factory):
    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("conll")
    train = [_sentence(rng, int(rng.integers(4, 14))) for _ in range(400)]
    # One dev sentence far longer than a window (max_seq_length 16 -> 14 pieces): split and put back together.
    dev = [_sentence(rng, int(rng.integers(4, 14))) for _ in range(60)] + [_sentence(rng, 40)]
    return write_conll(root / "train.txt", train), write_conll(root / "dev.txt", dev), dev


def _job(pretrained_tiny, conll_files, output_dir, **overrides):
    train, dev, _ = conll_files
    settings = dict(
        task="chunk",
        init_checkpoint=pretrained_tiny,
        output_dir=str(output_dir),
        model_size="tiny",
        train_file=train,
        dev_file=dev,
        learning_rate=1e-3,
        num_train_epochs=3,
        train_batch_size=16,
        max_seq_length=16,
        progress_bar=False,
    )
    settings.update(overrides)
    return FinetuningJob(**settings)


@pytest.fixture(scope="module")
def chunk_run(pretrained_tiny, conll_files, tmp_path_factory):
    output_dir = tmp_path_factory.mktemp("chunk_run")
    return run(_job(pretrained_tiny, conll_files, output_dir, save_models=True)), output_dir


def test_chunking_learns_and_writes_conll_predictions_that_score_as_reported(chunk_run, conll_files):
    from finetune.tagging.metrics import span_f1

    results, output_dir = chunk_run
    assert results["task"] == "chunk" and results["tags"] == sorted(TAGS)
    f1 = results["trials"][0]["metrics"]["chunk"]["f1"]
    assert f1 > 90.0, results["trials"][0]["metrics"]
    lines = (output_dir / "trial_0" / "dev_predictions.txt").read_text(encoding="utf-8").split("\n")
    sentences, current = [], []
    for line in lines:
        if line:
            current.append(line.split(" "))
        elif current:
            sentences.append(current)
            current = []
    dev = conll_files[2]
    assert [[word for word, _, _ in sentence] for sentence in sentences] == [words for words, _ in dev]
    assert len(sentences[-1]) == 40, "the long sentence is whole"
    rescored = span_f1([[gold for _, gold, _ in s] for s in sentences], [[pred for _, _, pred in s] for s in sentences])
    assert rescored["f1"] == pytest.approx(f1)
    assert "train_file" in results["job"] and "doc_stride" not in results["job"]


def test_the_saved_tagger_tags_raw_text(chunk_run):
    import keras

    _, output_dir = chunk_run
    tagger = keras.saving.load_model(output_dir / "trial_0" / "model.keras")
    (tagged,) = tagger.tag(["w1 w50 w100 w150 w190"])
    assert [tag for _, tag, _, _ in tagged] == ["B-LOW", "I-LOW", "B-HIGH", "I-HIGH", "O"]


# A benchmark (`pytest -m benchmark`): the export command is tests/finetune/models/test_serving.py's on classifiers,
# and the tagger's export served as TF Serving loads it is tests/finetune/models/test_token_classifier.py's.
@pytest.mark.benchmark
def test_export_model_exports_the_saved_tagger_for_serving(chunk_run, tmp_path, capfd):
    """The command in this process (`tests.console_commands`), and what it wrote loaded here too: the tagger's export
    served in a process of its own, as TF Serving loads it, is tests/finetune/models/test_token_classifier.py's."""
    import tensorflow as tf

    from finetune.models.saved_classifier import load_text_classifier

    _, output_dir = chunk_run
    model_file = output_dir / "trial_0" / "model.keras"
    status = run_command(
        "electra-export", f"--init_checkpoint={model_file}", "--model=tagger", f"--output_dir={tmp_path / 'export'}"
    )
    stderr = capfd.readouterr().err
    assert status == 0, stderr[-3000:]
    # The trained model.keras holds its optimizer's state, which an export (compile=False) leaves unread, unwarned.
    assert unexpected_program_lines(stderr) == [], stderr[-3000:]
    serve_text = tf.saved_model.load(str(tmp_path / "export")).signatures["serve_text"]
    outputs = {name: value.numpy().tolist() for name, value in serve_text(texts=tf.constant(["w1 w150  w190"])).items()}
    assert outputs["words"] == [[b"w1", b"w150", b"w190"]]
    assert outputs["tags"] == [[b"B-LOW", b"I-HIGH", b"O"]]
    assert outputs["word_starts"] == [[0, 3, 9]]
    with pytest.raises(Exception, match="holds a ElectraTokenClassifier, not a fine-tuned ElectraTextClassifier"):
        load_text_classifier(str(model_file))


def test_a_dev_tag_never_seen_in_training_is_scored_as_a_miss_and_reported(
    pretrained_tiny, conll_files, tmp_path, caplog
):
    # As CoNLL-2000's test set does (I-LST): the benchmark must still run, and the miss must count.
    from finetune.tagging.metrics import span_f1

    dev = tmp_path / "dev.txt"
    dev.write_text("w1 NN B-LOW\nw2 NN B-ODD\n\nw3 NN B-ODD\n", encoding="utf-8")
    results = run(_job(pretrained_tiny, conll_files, tmp_path / "out", dev_file=str(dev), num_train_epochs=1))
    assert results["unseen_tags"] == {"dev": {"B-ODD": 2}}
    assert any(
        f"tag 'B-ODD' on 2 word(s) (first at {dev} line 2) never occurs in train_file" in record.getMessage()
        for record in caplog.records
    )
    lines = (tmp_path / "out" / "trial_0" / "dev_predictions.txt").read_text(encoding="utf-8").split("\n")
    predicted = [line.split(" ")[2] for line in lines if line]
    assert [line.split(" ")[1] for line in lines if line] == ["B-LOW", "B-ODD", "B-ODD"]
    expected = span_f1([["B-LOW", "B-ODD"], ["B-ODD"]], [predicted[:2], predicted[2:]])
    assert results["trials"][0]["metrics"]["chunk"] == pytest.approx(expected)
    assert expected["recall"] <= 100 / 3 + 1e-9


def test_missing_files_are_refused_before_anything_is_loaded(pretrained_tiny, conll_files, tmp_path):
    with pytest.raises(ConfigError, match="task=chunk needs dev_file"):
        _job(pretrained_tiny, conll_files, tmp_path / "out", dev_file=None).validate()
    with pytest.raises(DataError, match="train_file=.*missing.txt does not exist"):
        _job(pretrained_tiny, conll_files, tmp_path / "out", train_file=str(tmp_path / "missing.txt")).validate()


def test_run_finetuning_tags_from_the_command_line(pretrained_tiny, conll_files, tmp_path, capfd):
    """The command in this process (`tests.console_commands`)."""
    train, dev, _ = conll_files
    status = run_command(
        "electra-finetune",
        "--task=tagging",
        f"--init_checkpoint={pretrained_tiny}",
        f"--train_file={train}",
        f"--dev_file={dev}",
        f"--test_file={dev}",
        "--tag_column=2",
        "--word_column=0",
        f"--output_dir={tmp_path / 'out'}",
        "--model_size=tiny",
        "--num_train_epochs=1",
        "--max_seq_length=16",
        "--noprogress_bar",
    )
    assert status == 0, capfd.readouterr().err[-3000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(results["trials"][0]["metrics"]) == {"tagging", "tagging-test"}
    assert (tmp_path / "out" / "trial_0" / "test_predictions.txt").exists()
    capfd.readouterr()
    status = run_command(
        "electra-finetune",
        "--task=ged",
        f"--init_checkpoint={pretrained_tiny}",
        f"--train_file={train}",
        f"--output_dir={tmp_path / 'out2'}",
    )
    stderr = capfd.readouterr().err
    assert status == 2
    assert [line for line in stderr.splitlines() if line.startswith("error:")] == [
        "error: --task=ged needs --dev_file: a CoNLL-style file of grammatical error detection (c/i labels per token)"
    ]


def _mock_conll2003(num_sentences):
    """tfds's mock_data with conll2003's real features and our records: word w<n> tagged by `_tag`'s rule mapped onto
    CoNLL-2003's entity names, so the test knows every tag name the reader must produce."""
    import tensorflow as tf
    import tensorflow_datasets as tfds

    entity = {"B-LOW": "B-PER", "I-LOW": "I-PER", "B-HIGH": "B-LOC", "I-HIGH": "I-LOC", "O": "O"}
    rng = np.random.default_rng(1)
    sentences = [_sentence(rng, int(rng.integers(3, 9))) for _ in range(num_sentences)]

    def as_dataset(self, *args, **kwargs):
        names = self.info.features["ner"].names
        records = [
            {
                "tokens": words,
                "pos": [0] * len(words),
                "chunks": [0] * len(words),
                "ner": [names.index(entity[tag]) for tag in tags],
            }
            for words, tags in sentences
        ]
        return tf.data.Dataset.from_generator(
            lambda: iter(records),
            output_signature={
                "tokens": tf.TensorSpec([None], tf.string),
                "pos": tf.TensorSpec([None], tf.int64),
                "chunks": tf.TensorSpec([None], tf.int64),
                "ner": tf.TensorSpec([None], tf.int64),
            },
        )

    gold = [(words, [entity[tag] for tag in tags]) for words, tags in sentences]
    return tfds.testing.mock_data(as_dataset_fn=as_dataset), gold


def test_the_tfds_reader_maps_class_ids_to_conll2003_tag_names():
    from finetune.tagging.readers import read_tfds_tagged

    mock, gold = _mock_conll2003(5)
    with mock:
        sentences = read_tfds_tagged("ner", "dev")
    assert [(list(s.words), list(s.tags)) for s in sentences] == gold
    assert sentences[0].source == "tfds:conll2003/dev"


def test_ner_reads_conll2003_from_tensorflow_datasets(pretrained_tiny, tmp_path):
    job = FinetuningJob(
        task="ner",
        data_source="tfds",
        init_checkpoint=pretrained_tiny,
        output_dir=str(tmp_path),
        model_size="tiny",
        num_train_epochs=1,
        max_seq_length=16,
        progress_bar=False,
    )
    job.validate()
    mock, gold = _mock_conll2003(40)
    with mock:
        results = run(job)
    assert results["tags"] == ["B-LOC", "B-PER", "I-LOC", "I-PER", "O"]
    assert {"precision", "recall", "f1"} <= set(results["trials"][0]["metrics"]["ner"])
    written = (tmp_path / "trial_0" / "dev_predictions.txt").read_text(encoding="utf-8").strip().split("\n\n")
    assert [[line.split(" ")[:2] for line in sentence.split("\n")] for sentence in written] == [
        [[word, tag] for word, tag in zip(words, tags)] for words, tags in gold
    ]
    with pytest.raises(ConfigError, match="task=ged has no tensorflow-datasets source"):
        FinetuningJob(
            task="ged", data_source="tfds", init_checkpoint=pretrained_tiny, output_dir=str(tmp_path), model_size="tiny"
        ).validate()
