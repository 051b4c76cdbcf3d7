"""Predictions files and `python -m finetune.commands.glue_eval` on the real dev sets."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from electra_tf.errors import ConfigError, DataError
from finetune.glue import metrics
from finetune.glue.predictions import read_predictions, write_predictions
from finetune.glue.readers import read_examples
from finetune.glue.tasks import glue_task_spec
from finetune.glue_eval import evaluate_predictions_file

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def glue_dir(shared_data):
    return str(shared_data / "glue")


def _dev_labels(glue_dir, task):
    spec = glue_task_spec(task)
    examples = read_examples(glue_dir, task, "dev")
    if spec.is_regression:
        return np.array([e.label for e in examples])
    return np.array([spec.labels.index(e.label) for e in examples])


def test_written_file_is_glue_submission_format(tmp_path):
    path = tmp_path / "out" / "RTE.tsv"
    write_predictions(str(path), [1, 0, "entailment"], "RTE")
    assert path.read_text() == "index\tprediction\n0\tnot_entailment\n1\tentailment\n2\tentailment\n"
    assert os.listdir(path.parent) == ["RTE.tsv"]  # no temporary file left behind
    write_predictions(str(tmp_path / "sts.tsv"), np.array([0.5, 4.25]), "STS-B")
    assert (tmp_path / "sts.tsv").read_text() == "index\tprediction\n0\t0.5\n1\t4.25\n"
    with pytest.raises(ValueError, match="neither a label nor a label id"):
        write_predictions(str(tmp_path / "bad.tsv"), [2], "RTE")
    assert not (tmp_path / "bad.tsv").exists()


def test_rewriting_replaces_the_file_atomically(tmp_path):
    path = str(tmp_path / "p.tsv")
    write_predictions(path, [0, 1], "CoLA")
    with pytest.raises(ValueError):
        write_predictions(path, [0, "maybe"], "CoLA")
    assert read_predictions(path, "CoLA", 2).tolist() == [0, 1]  # the failed rewrite left the old file intact
    assert sorted(os.listdir(tmp_path)) == ["p.tsv"]


@pytest.mark.parametrize("task", ["CoLA", "MRPC", "RTE", "STS-B", "WNLI"])
def test_scores_equal_metrics_on_the_same_predictions(glue_dir, tmp_path, task):
    labels = _dev_labels(glue_dir, task)
    rng = np.random.default_rng(0)
    if glue_task_spec(task).is_regression:
        predictions = np.clip(labels + rng.normal(0, 1, len(labels)), 0, 5)
    else:
        predictions = np.where(rng.random(len(labels)) < 0.7, labels, 1 - labels)
    path = str(tmp_path / f"{task}.tsv")
    write_predictions(path, predictions, task)
    scored = evaluate_predictions_file(task, glue_dir, path)
    expected = metrics.task_metrics(task, labels, predictions)
    assert scored.keys() == expected.keys()
    for name in expected:
        assert scored[name] == pytest.approx(expected[name], abs=1e-9)


def test_rows_may_come_in_any_order(glue_dir, tmp_path):
    labels = _dev_labels(glue_dir, "RTE")
    order = np.random.default_rng(1).permutation(len(labels))
    path = str(tmp_path / "shuffled.tsv")
    write_predictions(path, labels[order], "RTE", indices=order)
    assert evaluate_predictions_file("RTE", glue_dir, path) == {"accuracy": 100.0}


def _lines(tmp_path, rows, header="index\tprediction"):
    path = tmp_path / "p.tsv"
    path.write_text("\n".join([header] + rows) + "\n")
    return str(path)


def test_bad_predictions_files_name_the_file_and_line(glue_dir, tmp_path):
    wnli = _dev_labels(glue_dir, "WNLI")
    good = [f"{i}\t{label}" for i, label in enumerate(wnli)]
    cases = [
        (good[:-1], r"p\.tsv has 70 rows but the WNLI split being scored has 71 examples"),
        (good[:5] + ["5\tentailment"] + good[6:], r"p\.tsv, line 7: unknown WNLI label 'entailment'"),
        (good[:3] + ["2\t0"] + good[4:], r"p\.tsv, line 5: index 2 appears twice"),
        (good[:3] + ["three\t0"] + good[4:], r"p\.tsv, line 5: index 'three' is not an integer"),
        (good[:3] + ["71\t0"] + good[4:], r"p\.tsv, line 5: index 71 is outside 0\.\.70"),
        (good[:3] + ["3 0"] + good[4:], r"p\.tsv, line 5: expected 'index<TAB>prediction'"),
    ]
    for rows, message in cases:
        with pytest.raises(DataError, match=message):
            evaluate_predictions_file("WNLI", glue_dir, _lines(tmp_path, rows))
    with pytest.raises(DataError, match=r"p\.tsv, line 1: expected the header"):
        evaluate_predictions_file("WNLI", glue_dir, _lines(tmp_path, good, header="id\tlabel"))
    with pytest.raises(DataError, match=r"nothing\.tsv does not exist"):
        evaluate_predictions_file("WNLI", glue_dir, str(tmp_path / "nothing.tsv"))
    with pytest.raises(ConfigError, match="no labels to score"):
        evaluate_predictions_file("WNLI", glue_dir, _lines(tmp_path, good), split="test")


def test_stsb_rejects_non_numbers(glue_dir, tmp_path):
    rows = [f"{i}\t3.0" for i in range(1500)]
    rows[10] = "10\tinf"
    with pytest.raises(DataError, match=r"line 12: STS-B prediction 'inf' is not a finite number"):
        evaluate_predictions_file("STS-B", glue_dir, _lines(tmp_path, rows))


def _run_cli(*args):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    return subprocess.run(
        [sys.executable, "-m", "finetune.commands.glue_eval", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=120,
    )


def test_cli_prints_one_json_object_and_one_line_errors(glue_dir, tmp_path):
    labels = _dev_labels(glue_dir, "MRPC")
    predictions = labels.copy()
    predictions[:8] = 1 - predictions[:8]
    path = str(tmp_path / "mrpc.tsv")
    write_predictions(path, predictions, "MRPC")
    done = _run_cli("--task=MRPC", f"--data_dir={glue_dir}", f"--predictions={path}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == pytest.approx(metrics.task_metrics("MRPC", labels, predictions))
    assert json.loads(done.stdout)["accuracy"] == pytest.approx(100 * 400 / 408)

    constant = str(tmp_path / "sts-b.tsv")
    write_predictions(constant, np.full(len(_dev_labels(glue_dir, "STS-B")), 2.5), "STS-B")
    done = _run_cli("--task=STS-B", f"--data_dir={glue_dir}", f"--predictions={constant}")
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"pearson": null, "spearman": null}\n'  # correlations of constant predictions: undefined

    broken = _lines(tmp_path, ["0\t1"])
    done = _run_cli("--task=MRPC", f"--data_dir={glue_dir}", f"--predictions={broken}")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: predictions file {broken} has 1 rows but the MRPC split being scored has 408 examples; "
        "predict every example of that split"
    ]
