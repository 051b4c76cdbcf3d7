"""`import finetune.models` is the one import after which `keras.saving.load_model` restores a task model trained on
string labels in a fresh process, predicting the same label strings; the README's example runs as written."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import keras
import pytest

from finetune.models import ElectraTokenClassifier
from tests.command_output import unexpected_lines, users_environment
from tests.docs_examples import EXAMPLE_PRESET, run_example, runnable_blocks
from tests.finetune.synthetic_glue import keyword_examples

NAMES = {0: "negative", 1: "positive"}
LOAD_AND_PREDICT = """
import json, sys
import keras
import pytest
import finetune.models
model = keras.saving.load_model(sys.argv[1])
print(json.dumps({"class": type(model).__name__, "predictions": model.predict_labels(json.loads(sys.argv[2]))}))
"""
README = Path(__file__).resolve().parents[3] / "README.md"


def _in_fresh_process(path, texts):
    """(class name, predict_labels) of the model at `path`, loaded by a new Python with only `finetune.models`."""
    result = subprocess.run(
        [sys.executable, "-c", LOAD_AND_PREDICT, str(path), json.dumps(texts)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded["class"], loaded["predictions"]


def test_text_classifier_trained_on_label_strings_reloads_in_a_fresh_process(pretrained_tiny, tmp_path):
    from finetune.models import ElectraTextClassifier

    keras.utils.set_random_seed(0)
    train, dev = keyword_examples(160, seed=20), keyword_examples(40, seed=21)
    classifier = ElectraTextClassifier.from_preset(pretrained_tiny, labels=["negative", "positive"], max_seq_length=16)
    classifier.compile()
    classifier.fit(
        [text for text, _ in train], [NAMES[label] for _, label in train], batch_size=16, epochs=5, verbose=0
    )
    texts = [text for text, _ in dev]
    expected = classifier.predict_labels(texts)
    assert set(expected) == {"negative", "positive"}
    assert sum(p == NAMES[label] for p, (_, label) in zip(expected, dev)) >= 30, "it learnt from the strings"
    classifier.save(tmp_path / "classifier.keras")
    assert _in_fresh_process(tmp_path / "classifier.keras", texts) == ("ElectraTextClassifier", expected)


# A benchmark (`pytest -m benchmark`): the classifier above shows that a fresh process finds the task models' classes,
# and the tagger's reload is checked in process (tests/finetune/models/test_token_classifier.py).
@pytest.mark.benchmark
def test_tagger_reloads_in_a_fresh_process(pretrained_tiny, tmp_path):
    keras.utils.set_random_seed(0)
    tagger = ElectraTokenClassifier.from_preset(pretrained_tiny, tags=["LOW", "HIGH"], max_seq_length=16)
    tagger.compile()
    words = [[f"w{k}", f"w{k + 100}", f"w{k + 3}"] for k in range(0, 90, 3)]
    tagger.fit(words, [["LOW", "HIGH", "LOW"]] * len(words), batch_size=8, epochs=2, verbose=0)
    texts = ["w1 w150 w2", "w7"]
    expected = tagger.predict_labels(texts)
    assert [len(tags) for tags in expected] == [3, 1] and set(expected[0]) <= {"LOW", "HIGH"}
    tagger.save(tmp_path / "tagger.keras")
    assert _in_fresh_process(tmp_path / "tagger.keras", texts) == ("ElectraTokenClassifier", expected)


def test_the_readme_example_runs_as_written(pretrained_tiny, tmp_path):
    examples = runnable_blocks(README)
    assert len(examples) == 1, "README.md should have one runnable Python example"
    assert len(examples[0].strip().splitlines()) <= 15 and EXAMPLE_PRESET in examples[0]
    # On a terminal, as a user runs it: the Python API leaves a stderr that is a file or a pipe as it is.
    result = run_example(examples[0], pretrained_tiny, tmp_path, env=users_environment(), terminal=True)
    assert result.returncode == 0, result.stderr[-2000:]
    predictions = ast.literal_eval(result.stdout.strip().splitlines()[-1])
    assert len(predictions) == 2 and set(predictions) <= {"negative", "positive"}
    assert (tmp_path / "classifier.keras").is_file()
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]  # TensorFlow's notices, Keras' warnings
