"""`electra-finetune --task=squadv1|squad` (run in the test process: `tests.console_commands`) fine-tunes the tiny
pre-trained model on a synthetic SQuAD-format task over its `w*` vocabulary (the BERT vocabulary would make every word
[UNK] for this model), the training loss falls, and the dev path writes the official files, which
`python -m finetune.commands.squad_eval` scores as results.json says."""

import json
import os
import subprocess
import sys

import pytest

from finetune.squad_eval import evaluate_files
from tests.command_output import unexpected_program_lines
from tests.conftest import REPO_ROOT
from tests.console_commands import run_command
from tests.finetune.squad.synthetic_squad import write_task


# SQuAD 1.1 with the simple head is a benchmark (`pytest -m benchmark`): SQuAD 2.0 with the joint head runs the same
# command and writes the same files and the null odds besides; the simple head's spans are checked in
# tests/finetune/squad.
@pytest.mark.parametrize(
    "task, head", [pytest.param("squadv1", "simple", marks=pytest.mark.benchmark), ("squad", "joint")]
)
def test_squad_fine_tuning_learns_and_writes_official_files(pretrained_tiny, tmp_path, capfd, task, head):
    version_2 = task == "squad"
    (tmp_path / "data").mkdir()
    data_dir = write_task(tmp_path / "data", version_2=version_2)
    output_dir = tmp_path / "out"
    status = run_command(
        "electra-finetune",
        f"--flagfile={REPO_ROOT / 'configs' / ('squad.flags' if version_2 else 'squadv1.flags')}",
        f"--init_checkpoint={pretrained_tiny}",
        f"--data_dir={data_dir}",
        f"--output_dir={output_dir}",
        "--model_size=tiny",
        f"--squad_head={head}",
        "--learning_rate=5e-4",
        "--num_train_epochs=5",
        "--train_batch_size=16",
        "--max_seq_length=40",
        "--doc_stride=16",
        "--max_query_length=8",
        "--max_eval_examples=40",
        "--noprogress_bar",
    )
    stderr = capfd.readouterr().err
    assert status == 0, stderr[-3000:]
    # Keras warned that fit ignores shuffle=True on a dataset: the runner shuffles each epoch's batches itself.
    assert unexpected_program_lines(stderr) == [], stderr[-3000:]
    results = json.loads((output_dir / "results.json").read_text())
    assert results["version"] == ("2.0" if version_2 else "1.1") and results["job"]["doc_stride"] == 16
    trial = results["trials"][0]
    losses = trial["train_loss_per_epoch"]
    print(
        f"{task} ({head} head): train windows {results['num_train_windows']}, losses {losses}, dev {trial['metrics']}"
    )
    assert results["num_train_windows"] > results["num_train_questions"]  # contexts span several windows
    assert losses[-1] < 0.9 * losses[0]
    trial_dir = output_dir / "trial_0"
    predictions = json.loads((trial_dir / "predictions.json").read_text())
    nbest = json.loads((trial_dir / "nbest_predictions.json").read_text())
    assert len(predictions) == results["num_dev_questions"] == 40 and set(nbest) == set(predictions)
    for entries in nbest.values():
        assert {"text", "probability", "start_logit", "end_logit"} <= set(entries[0])
        assert sum(entry["probability"] for entry in entries) == pytest.approx(1.0, abs=1e-6)
    null_odds_file = trial_dir / "null_odds.json"
    assert null_odds_file.exists() == version_2
    # The evaluation CLI on the whole dev file scores the 40 questions the run evaluated, as results.json says.
    key = "SQuAD2.0" if version_2 else "SQuAD1.1"
    dev_file = data_dir / ("dev-v2.0.json" if version_2 else "dev-v1.1.json")
    total = sum(
        len(paragraph["qas"])
        for article in json.loads(dev_file.read_text())["data"]
        for paragraph in article["paragraphs"]
    )
    assert total > 40
    evaluation = subprocess.run(
        [
            sys.executable,
            "-m",
            "finetune.commands.squad_eval",
            str(dev_file),
            str(trial_dir / "predictions.json"),
            *([f"--na_prob_file={null_odds_file}"] if version_2 else []),
        ],
        cwd=REPO_ROOT,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert evaluation.returncode == 0, evaluation.stderr
    assert evaluation.stderr.splitlines() == [
        f"{trial_dir / 'predictions.json'} answers the first 40 of the {total} questions of {dev_file} (a run with "
        "--max_eval_examples=40): scoring those 40"
    ]
    scored = json.loads(evaluation.stdout)
    assert scored == pytest.approx(trial["metrics"][key])
    assert scored == pytest.approx(
        evaluate_files(str(dev_file), str(trial_dir / "predictions.json"), str(null_odds_file) if version_2 else None)
    )
    if version_2:
        assert {"best_exact", "best_f1", "HasAns_exact", "NoAns_exact"} <= set(scored)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--task=squad", "--data_dir={tmp}"], "train-v2.0.json does not exist"),
        (
            ["--task=squadv1", "--data_dir={tmp}", "--data_source=json", "--squad_head=simple", "--doc_stride=0"],
            "train-v1.1.json does not exist",
        ),
    ],
)
def test_bad_squad_input_gives_one_line_error(pretrained_tiny, tmp_path, capfd, extra, message):
    """The command in this process (`tests.console_commands`): what it prints, not its start-up, is checked here."""
    status = run_command(
        "electra-finetune",
        f"--init_checkpoint={pretrained_tiny}",
        f"--output_dir={tmp_path / 'out'}",
        *[arg.format(tmp=tmp_path) for arg in extra],
    )
    stderr = capfd.readouterr().err
    assert status == 2, stderr[-3000:]
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1].startswith("error: ") and message in stderr


# A benchmark (`pytest -m benchmark`): the command on real SQuAD text takes a quarter of a minute; in the suite, the
# features of the real dev sets map back to every gold answer (tests/finetune/squad/test_gold_span_round_trip.py).
@pytest.mark.benchmark
def test_fine_tuning_on_a_slice_of_real_squad(shared_data, tmp_path, capfd):
    """Fine-tuning on real SQuAD text: a tiny model with the BERT vocabulary trains on real 1.1 questions (a slice of
    the dev file stands in for train, which is not in ../shared) and its loss falls; the dev path writes the official
    files. The model is randomly initialised: the pre-trained tiny model only knows the synthetic w* vocabulary."""
    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator, save_checkpoint

    vocab = str(shared_data / "vocab" / "bert-uncased-vocab.txt")
    save_checkpoint(build_discriminator(ElectraConfig.from_preset("tiny")), str(tmp_path / "model"), vocab_file=vocab)
    squad = json.loads((shared_data / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "train-v1.1.json").write_text(json.dumps({"version": "1.1", "data": squad["data"][:1]}))
    (data_dir / "dev-v1.1.json").write_text(json.dumps({"version": "1.1", "data": squad["data"][1:2]}))
    output_dir = tmp_path / "out"
    status = run_command(
        "electra-finetune",
        f"--flagfile={REPO_ROOT / 'configs' / 'squadv1.flags'}",
        f"--init_checkpoint={tmp_path / 'model'}",
        f"--data_dir={data_dir}",
        f"--output_dir={output_dir}",
        "--model_size=tiny",
        "--squad_head=simple",
        "--learning_rate=1e-3",
        "--num_train_epochs=4",
        "--train_batch_size=16",
        "--max_seq_length=128",
        "--doc_stride=64",
        "--max_query_length=32",
        "--max_train_examples=64",
        "--max_eval_examples=16",
        "--noprogress_bar",
    )
    assert status == 0, capfd.readouterr().err[-3000:]
    results = json.loads((output_dir / "results.json").read_text())
    losses = results["trials"][0]["train_loss_per_epoch"]
    print(f"real SQuAD slice: {results['num_train_windows']} windows, losses {losses}")
    assert losses[-1] < 0.9 * losses[0]
    assert {"predictions.json", "nbest_predictions.json"} <= set(os.listdir(output_dir / "trial_0"))
