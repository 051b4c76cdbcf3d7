"""The `run_finetuning.py` entry point, run as users run it (subprocesses): fine-tuning from the command line; its
command `electra-finetune` run in the test process where a process of its own is not what a test is about
(`tests.console_commands`)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from finetune.glue_eval import evaluate_predictions_file
from tests.command_output import unexpected_lines, users_environment
from tests.conftest import REPO_ROOT
from tests.console_commands import run_command


def _run(*args, timeout=300, env=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3") if env is None else env
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "run_finetuning.py"), *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _common(pretrained_tiny, glue_dir, output_dir, *extra):
    return (
        f"--init_checkpoint={pretrained_tiny}",
        f"--data_dir={glue_dir}",
        f"--output_dir={output_dir}",
        "--model_size=tiny",
        "--noprogress_bar",
        *extra,
    )


def test_three_trials_learn_the_task_and_report_the_median(pretrained_tiny, keyword_glue_dir, tmp_path):
    """The tiny pre-trained model fine-tunes to high dev accuracy in each of three
    trials; results.json reports per-trial metrics and their median, mean and std; predictions files are written."""
    flagfile = tmp_path / "keyword.flags"
    flagfile.write_text(
        "--task=SST-2\n--learning_rate=1e-3\n--num_train_epochs=2\n--train_batch_size=16\n--max_seq_length=16\n",
        encoding="utf-8",
    )
    output_dir = tmp_path / "out"
    result = _run(
        f"--flagfile={flagfile}",
        *_common(pretrained_tiny, keyword_glue_dir, output_dir),
        "--num_trials=3",
        "--seed=7",
        env=users_environment(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]  # a normal run, in a user's environment
    results = json.loads((output_dir / "results.json").read_text())
    accuracies = [trial["metrics"]["SST-2"]["accuracy"] for trial in results["trials"]]
    print(f"run_finetuning.py dev accuracies: {accuracies}")
    assert [trial["seed"] for trial in results["trials"]] == [7, 8, 9]
    assert min(accuracies) >= 90.0
    summary = results["summary"]["SST-2"]["accuracy"]
    assert summary["median"] == pytest.approx(float(np.median(accuracies)))
    assert summary["mean"] == pytest.approx(float(np.mean(accuracies)))
    assert summary["std"] == pytest.approx(float(np.std(accuracies)))
    assert f"SST-2 accuracy: median {summary['median']:.2f}" in result.stdout
    assert results["hyperparameters"] == {
        "learning_rate": 1e-3,
        "num_train_epochs": 2,
        "max_seq_length": 16,
        "layerwise_lr_decay": 0.8,
        "train_batch_size": 16,
    }
    for trial, accuracy in enumerate(accuracies):
        trial_dir = output_dir / f"trial_{trial}"
        # Dev predictions are in glue_eval's format and score what results.json says.
        scored = evaluate_predictions_file("SST-2", str(keyword_glue_dir), str(trial_dir / "dev_predictions.tsv"))
        assert scored["accuracy"] == pytest.approx(accuracy)
        submission = (trial_dir / "submission" / "SST-2.tsv").read_text().splitlines()
        assert submission[0] == "index\tprediction" and len(submission) == 21
        assert {line.split("\t")[1] for line in submission[1:]} <= {"0", "1"}
    assert "--num_trials=3" in (output_dir / "flags.txt").read_text()


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            ["--task=SST-2", "--init_checkpoint=/nonexistent/pretrained"],
            "--init_checkpoint=/nonexistent/pretrained does not exist",
        ),
        (
            ["--task=SST-5"],
            "unknown --task='SST-5'; choose one of CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE, "
            "WNLI, squadv1, squad",
        ),
        (["--task=MRPC"], "MRPC/train.tsv does not exist"),
        (["--task=SST-2", "--layerwise_lr_decay=1.5"], "layer-wise learning-rate decay must be in (0, 1]"),
        (
            ["--task=SST-2", "--train_batch_size=10", "--gradient_accumulation_steps=4"],
            "--train_batch_size=10 does not split into --gradient_accumulation_steps=4 equal micro-batches",
        ),
        (
            ["--task=SST-2", "--gradient_accumulation_steps=2", "--concurrent_micro_batches=2"],
            "--gradient_accumulation_steps=2 and --concurrent_micro_batches=2: set one of them, the other to 1",
        ),
        (["--task=SST-2", "--lora_alpha=8"], "--lora_alpha scales LoRA's weights: pass --lora_rank=<rank> with it"),
    ],
)
def test_bad_input_gives_one_line_error(pretrained_tiny, keyword_glue_dir, tmp_path, capfd, extra, message):
    """The command in this process (`tests.console_commands`): what it prints, not its start-up, is checked here."""
    status = run_command("electra-finetune", *_common(pretrained_tiny, keyword_glue_dir, tmp_path / "out"), *extra)
    stderr = capfd.readouterr().err
    assert status == 2, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], stderr[-3000:]
    assert "Traceback" not in stderr


def _short_sst2_run(pretrained_tiny, glue_dir, output_dir, *extra):
    """(results.json, the saved trial model) of a one-epoch SST-2 run of a few batches in a process of its own."""
    import keras

    import finetune.models  # noqa: F401  (registers the task models with Keras)

    result = _run(
        *_common(pretrained_tiny, glue_dir, output_dir),
        "--task=SST-2",
        "--num_train_epochs=1",
        "--max_seq_length=16",
        "--max_train_examples=96",
        "--max_eval_examples=40",
        "--save_models",
        *extra,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads((output_dir / "results.json").read_text())
    assert len(results["trials"]) == 1
    return results, keras.saving.load_model(str(output_dir / "trial_0" / "model.keras"))


# A benchmark (`pytest -m benchmark`): a second fine-tuning process, under MirroredStrategy, takes half a minute. In the
# suite, replicas' gradients add up to one device's (tests/electra_tf/training/test_replica_updates.py), accumulation
# gives the whole batch's update (tests/electra_tf/training/test_gradient_accumulation.py), and the layers' bfloat16
# computations are checked against float32 (tests/electra_tf/layers).
@pytest.mark.benchmark
def test_runs_under_mirrored_strategy_and_mixed_precision(pretrained_tiny, keyword_glue_dir, tmp_path):
    """The pre-training strategy, precision and gradient accumulation flags work here too (two logical CPUs, bfloat16
    compute, each replica's 16 examples of a batch as 2 micro-batches; a few batches of the data are enough)."""
    results, restored = _short_sst2_run(
        pretrained_tiny,
        keyword_glue_dir,
        tmp_path / "out",
        "--train_batch_size=32",
        "--strategy=mirrored",
        "--num_cpu_devices=2",
        "--mixed_precision=mixed_bfloat16",
        "--gradient_accumulation_steps=2",
    )
    assert results["job"]["strategy"] == "mirrored" and results["job"]["gradient_accumulation_steps"] == 2
    assert restored.gradient_accumulation_steps == 2


# A benchmark (`pytest -m benchmark`): its threads must be set before TensorFlow's first op, so it runs in a process of
# its own (half a minute). In the suite, concurrent micro-batches train, evaluate and predict as the whole batch
# (tests/electra_tf/training/test_gradient_accumulation.py).
@pytest.mark.benchmark
def test_runs_with_concurrent_micro_batches(pretrained_tiny, keyword_glue_dir, tmp_path):
    results, restored = _short_sst2_run(
        pretrained_tiny, keyword_glue_dir, tmp_path / "out", "--concurrent_micro_batches=2"
    )
    assert results["job"]["concurrent_micro_batches"] == 2 and restored.concurrent_micro_batches == 2
