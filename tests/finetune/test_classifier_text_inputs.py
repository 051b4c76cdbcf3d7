"""A fine-tuned classifier's raw-text inputs, single texts or pairs, told by its run's results.json or by the
caller."""

import json

import pytest

from electra_tf.errors import ConfigError
from finetune.classifier_text_inputs import is_pair_classifier


@pytest.mark.parametrize(
    "task, job, pair",
    [
        ("classification", {"text_pair_column": None}, False),
        ("regression", {"text_pair_column": "sentence2"}, True),
        ("SST-2", {}, False),
        ("MRPC", {}, True),
    ],
)
def test_export_tells_single_from_pair_inputs_by_the_runs_results(tmp_path, task, job, pair):
    (tmp_path / "trial_0").mkdir()
    (tmp_path / "results.json").write_text(json.dumps({"task": task, "job": {"task": task, **job}}))
    assert is_pair_classifier(str(tmp_path / "trial_0" / "model.keras")) is pair
    assert is_pair_classifier(str(tmp_path / "trial_0" / "model.keras"), "single") is False


def test_errors_name_the_argument_and_the_results_file(tmp_path):
    (tmp_path / "trial_0").mkdir()
    path = str(tmp_path / "trial_0" / "model.keras")
    with pytest.raises(ConfigError, match=r"^text_inputs must be one of auto, single, pair, got 'pairs'$"):
        is_pair_classifier(path, "pairs")
    assert is_pair_classifier(path, "pair") is True
    with pytest.raises(ConfigError) as raised:
        is_pair_classifier(path)
    assert str(raised.value) == (
        f"cannot tell whether {path} classifies single sentences or pairs (no task in "
        f"{tmp_path / 'results.json'}): pass text_inputs=single or text_inputs=pair"
    )
