"""The `run_pretraining.py` entry point, run as users run it (subprocesses), and its command `electra-pretrain` run in
the test process where a process of its own is not what a test is about (`tests.console_commands`)."""

import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from tests.command_output import unexpected_lines, users_environment
from tests.conftest import REPO_ROOT, TINY_RUN_STEPS
from tests.console_commands import run_command


def _run(*args, timeout=300, env=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3") if env is None else env
    return subprocess.run(
        [sys.executable, str(REPO_ROOT / "run_pretraining.py"), *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _common(pretraining_data, model_dir, *extra):
    records, vocab = pretraining_data
    return (
        f"--pretrain_tfrecords={records}",
        f"--vocab_file={vocab}",
        f"--model_dir={model_dir}",
        "--model_size=tiny",
        "--max_seq_length=32",
        "--train_batch_size=8",
        "--noprogress_bar",
        *extra,
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--pretrain_tfrecords=/nonexistent/*.tfrecord"], "matches no file"),
        (["--num_train_steps=0"], "--num_train_steps must be positive"),
        (["--two_stage_steps=2", "--strategy=mirrored", "--num_cpu_devices=2"], "single device"),
        (["--init_checkpoint=/nonexistent/model.ckpt"], "--init_checkpoint=/nonexistent/model.ckpt does not exist"),
        (["--init_checkpoint=/nonexistent/model.ckpt", "--init_checkpoint_format=tf1"], "does not exist"),
        (["--mode=eval"], "--mode=eval needs --eval_tfrecords"),
        (["--eval_every_steps=5"], "--eval_every_steps needs --eval_tfrecords"),
        (
            ["--gradient_accumulation_steps=3"],
            "--train_batch_size=8 does not split into --gradient_accumulation_steps=3 "
            "equal micro-batches: --train_batch_size is the batch of one optimizer "
            "update and must be a multiple of 3",
        ),
        # Found once TensorFlow is imported (the data, the model's settings).
        (["--max_seq_length=64"], "max_seq_length"),
        (["--tpu=grpc://10.0.0.1:8470"], "only used with --strategy=tpu"),
        (["--model_size=medium"], "unknown model size"),
        (["--objective=mlm", "--untied_embeddings"], "--objective=mlm and --untied_embeddings cannot be combined"),
    ],
)
def test_bad_input_gives_one_line_error(pretraining_data, tmp_path, capfd, extra, message):
    """The command in this process (`tests.console_commands`): what it prints, not its start-up, is checked here."""
    status = run_command("electra-pretrain", *_common(pretraining_data, tmp_path / "model"), *extra)
    _assert_one_line_error(status, capfd.readouterr().err, message, tmp_path / "model")


def _assert_one_line_error(status, stderr, message, model_dir):
    """Exit status 2, one `error:` line holding `message`, no traceback and no checkpoint written."""
    assert status == 2, stderr[-2000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], stderr[-2000:]
    assert "Traceback" not in stderr
    assert not (model_dir / "checkpoint").exists()


def test_micro_batches_that_do_not_split_over_the_replicas_give_one_line_error(pretraining_data, tmp_path):
    """In a fresh process: the two logical CPUs of `--num_cpu_devices=2` can only be made before TensorFlow starts."""
    extra = ("--gradient_accumulation_steps=8", "--strategy=mirrored", "--num_cpu_devices=2")
    result = _run(*_common(pretraining_data, tmp_path / "model", *extra))
    message = (
        "--train_batch_size=8 does not split into --gradient_accumulation_steps=8 equal micro-batches on each of 2 "
        "replicas"
    )
    _assert_one_line_error(result.returncode, result.stderr, message, tmp_path / "model")


# A short run with held-out evaluation and a log line after every step. Clipping is active (clip_norm 0.05) and dropout
# off, for the comparison with MirroredStrategy below.
DEFAULT_RUN_STEPS, DEFAULT_RUN_EVAL_BATCHES = 3, 3


def _default_run_settings(pretraining_data):
    return (
        f"--num_train_steps={DEFAULT_RUN_STEPS}",
        "--num_warmup_steps=0",
        "--learning_rate=1e-3",
        "--clip_norm=0.05",
        "--hidden_dropout=0",
        "--attention_dropout=0",
        "--log_every_steps=1",
        f"--save_checkpoints_steps={DEFAULT_RUN_STEPS}",
        f"--eval_tfrecords={pretraining_data[0]}",
        "--eval_every_steps=1",
        f"--num_eval_steps={DEFAULT_RUN_EVAL_BATCHES}",
    )


@pytest.fixture(scope="module")
def default_run(pretraining_data, tmp_path_factory):
    """(model_dir, completed process) of one run with `_default_run_settings` from a flagfile, in a user's environment,
    on the default strategy; shared by the tests below that only read it (each launch pays TensorFlow's start-up)."""
    directory = tmp_path_factory.mktemp("default_run")
    flagfile = directory / "run.flags"
    flagfile.write_text("\n".join(_default_run_settings(pretraining_data)) + "\n", encoding="utf-8")
    model_dir = directory / "model"
    result = _run(f"--flagfile={flagfile}", *_common(pretraining_data, model_dir), env=users_environment())
    assert result.returncode == 0, result.stderr[-3000:]
    return model_dir, result


def test_trains_from_a_flagfile_and_reports_the_initial_loss(default_run):
    model_dir, result = default_run
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]  # a normal run, in a user's environment
    expected = math.log(200) + 50 * math.log(2)  # the synthetic vocabulary has 200 entries
    assert "step 1: loss" in result.stdout and f"should start near {expected:.2f}" in result.stdout
    for name in (
        "flags.txt",
        "electra_config.json",
        "pretraining_job.json",
        "metrics.jsonl",
        f"ckpt-{DEFAULT_RUN_STEPS}.index",
        "pretrained/task.json",
        "pretrained/model.weights.h5",
    ):
        assert (model_dir / name).exists(), name
    assert f"--num_train_steps={DEFAULT_RUN_STEPS}" in (model_dir / "flags.txt").read_text()
    assert os.listdir(model_dir / "train"), "TensorBoard events are written"


def test_init_checkpoint_beside_a_checkpoint_in_model_dir_is_reported_with_what_to_do(
    pretraining_data, default_run, tmp_path, capfd
):
    model_dir = tmp_path / "model"
    shutil.copytree(default_run[0], model_dir)  # the run below may write to its --model_dir
    pretrained = model_dir / "pretrained"
    status = run_command(
        "electra-pretrain",
        *_common(pretraining_data, model_dir, *_default_run_settings(pretraining_data)),
        f"--init_checkpoint={pretrained}",
    )
    stderr = capfd.readouterr().err
    assert status == 0, stderr[-3000:]
    assert (
        f"--model_dir={model_dir} holds {model_dir}/ckpt-{DEFAULT_RUN_STEPS}: resuming from it; "
        f"--init_checkpoint={pretrained} was not used (to start from --init_checkpoint, use a new "
        "--model_dir)"
    ) in stderr


def test_objective_and_generator_flags_reach_the_model_config(pretraining_data, tmp_path, capfd):
    model_dir = tmp_path / "model"
    # --generator_hidden_fraction is the old name of --generator_hidden_size (an absl alias: the same flag), given
    # here so that one run shows both that the old name still works and that the flag's value reaches the config.
    status = run_command(
        "electra-pretrain",
        *_common(pretraining_data, model_dir),
        "--num_train_steps=2",
        "--objective=electra_15",
        "--generator_hidden_fraction=0.5",
        "--generator_layers=0.5",
        "--embedding_sharing=gdes",
        "--generator_training=adversarial",
        "--adversarial_temperature_end=0.5",
    )
    assert status == 0, capfd.readouterr().err[-3000:]
    config = json.loads((model_dir / "electra_config.json").read_text())
    assert (
        config["objective"],
        config["generator_hidden_fraction"],
        config["generator_layers_fraction"],
        config["embedding_sharing"],
        config["generator_training"],
        config["adversarial_temperature_end"],
    ) == ("electra_15", 0.5, 0.5, "gdes", "adversarial", 0.5)
    assert "--generator_hidden_size=0.5" in (model_dir / "flags.txt").read_text()


def _final_weights(model_dir):
    path = tf.train.latest_checkpoint(str(model_dir))
    return {
        name: tf.train.load_variable(path, name)
        for name, _ in tf.train.list_variables(path)
        if name not in ("_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter/.ATTRIBUTES/VARIABLE_VALUE")
    }


# A benchmark (`pytest -m benchmark`): a second launch of the command, under MirroredStrategy, takes most of a minute.
# In the suite, three Mirrored replicas' gradients and updates equal one device's
# (tests/electra_tf/training/test_replica_updates.py), and the fine-tuning command runs under MirroredStrategy
# (tests/test_run_finetuning.py).
@pytest.mark.benchmark
def test_mirrored_on_two_cpus_equals_the_default_strategy(pretraining_data, default_run, tmp_path):
    """Mirrored on two CPUs: same global batch, same updated weights. Clipping is active (clip_norm 0.05), so
    clipping per replica instead of on the cross-replica gradient would show here. Dropout is off: Keras draws dropout
    masks per replica. The held-out evaluations, summed over replicas, are the same numbers."""
    mirrored = _run(
        *_common(pretraining_data, tmp_path / "mirrored", *_default_run_settings(pretraining_data)),
        "--strategy=mirrored",
        "--num_cpu_devices=2",
    )
    assert mirrored.returncode == 0, mirrored.stderr[-3000:]
    expected, actual = _final_weights(default_run[0]), _final_weights(tmp_path / "mirrored")
    assert len(expected) > 200 and expected.keys() == actual.keys()  # weights, Adam slots and the step
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, atol=1e-5, err_msg=name)
    assert_same_evaluations(
        default_run[0],
        tmp_path / "mirrored",
        eval_batches=DEFAULT_RUN_EVAL_BATCHES,
        steps=list(range(1, DEFAULT_RUN_STEPS + 1)),
    )


def assert_same_evaluations(expected_dir, actual_dir, eval_batches, steps):
    """Both run directories hold held-out evaluations of `eval_batches` batches at `steps`, with the same numbers."""
    expected, actual = (
        [json.loads(line) for line in (path / "eval_metrics.jsonl").read_text().splitlines()]
        for path in (expected_dir, actual_dir)
    )
    assert [entry["step"] for entry in expected] == [entry["step"] for entry in actual] == steps
    for want, got in zip(expected, actual):
        assert got.keys() == want.keys() and got["eval_batches"] == eval_batches
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-4, err_msg=f"step {want['step']}: {name}")


def assert_same_single_evaluation(expected_dir, actual_dir, eval_batches):
    """Each run directory holds one held-out evaluation of `eval_batches` batches, with the same numbers."""
    steps = [json.loads(line)["step"] for line in (expected_dir / "eval_metrics.jsonl").read_text().splitlines()]
    assert len(steps) == 1, steps
    assert_same_evaluations(expected_dir, actual_dir, eval_batches, steps)


def test_tiny_preset_learns_replaced_token_detection(tiny_preset_run):
    """Within the shared tiny run's steps the discriminator beats the all-original baseline by far.

    The synthetic topic corpus (tests/synthetic_data.py) makes the generator's early mistakes detectable from context;
    on real text a model this small needs thousands of steps before detection goes beyond token frequency.
    """
    with open(tiny_preset_run / "metrics.jsonl", encoding="utf-8") as handle:
        entries = [json.loads(line) for line in handle]
    assert [e["step"] for e in entries][-1] == TINY_RUN_STEPS
    last = entries[-1]
    baseline = 1.0 - last["disc_replaced_fraction"]
    assert last["disc_accuracy"] > baseline + 0.5 * (1.0 - baseline), last  # at least half the baseline's errors gone
    assert last["disc_auc"] > 0.8 and last["disc_precision"] > 0.8, last
    assert entries[0]["disc_auc"] < 0.6, "a fresh discriminator ranks replaced tokens at chance"


def test_float16_loss_scaling_skips_updates_but_not_steps(pretraining_data, tmp_path, capfd):
    """Dynamic loss scaling skips the first updates (the scale starts at 2^15); steps, logs and checkpoints still count
    every batch, so the run ends at --num_train_steps and resumes at the right data position."""
    status = run_command(
        "electra-pretrain",
        *_common(pretraining_data, tmp_path / "model"),
        "--mixed_precision=mixed_float16",
        "--num_train_steps=6",
        "--log_every_steps=2",
        "--save_checkpoints_steps=3",
    )
    assert status == 0, capfd.readouterr().err[-3000:]
    with open(tmp_path / "model" / "metrics.jsonl", encoding="utf-8") as handle:
        assert [json.loads(line)["step"] for line in handle] == [1, 2, 4, 6]
    path = str(tmp_path / "model" / "ckpt-6")
    assert tf.train.load_variable(path, "model/steps_trained/.ATTRIBUTES/VARIABLE_VALUE") == 6
    updates = tf.train.load_variable(path, "optimizer/inner_optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE")
    assert 0 < updates < 6, "the first float16 updates overflow and are skipped"


def test_the_cpu_recipe_starts_evaluates_and_writes_its_curve(pretraining_data, tmp_path, capfd):
    """configs/cpu.flags as shipped (preset and architecture, bfloat16, held-out evaluation), only shortened: a smoke
    check, not the recipe's result (docs/cpu_budget.md has that). The recipe starts from a masked-LM run; that hand-over
    is checked at the tiny size (tests/electra_tf/training/test_continued_pretraining.py), a second launch at this size
    would double the test's time."""
    records, _ = pretraining_data
    shortened = (
        "--flagfile=configs/cpu.flags",
        f"--pretrain_tfrecords={records}",
        f"--vocab_file={pretraining_data[1]}",
        f"--eval_tfrecords={records}",
        "--max_seq_length=32",
        "--train_batch_size=8",
        "--num_warmup_steps=1",
        "--eval_every_steps=2",
        "--num_eval_steps=2",
        "--noprogress_bar",
    )
    model_dir = tmp_path / "model"
    status = run_command("electra-pretrain", *shortened, "--num_train_steps=4", f"--model_dir={model_dir}")
    assert status == 0, capfd.readouterr().err[-3000:]
    config = json.loads((model_dir / "electra_config.json").read_text())
    assert (config["hidden_size"], config["num_layers"], config["generator_hidden_fraction"]) == (256, 6, 0.25)
    assert (config["alibi"], config["embedding_size"], config["type_vocab_size"]) == (True, 256, 0)
    assert json.loads((model_dir / "pretraining_job.json").read_text())["mixed_precision"] == "mixed_bfloat16"
    evaluations = [json.loads(line) for line in (model_dir / "eval_metrics.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in evaluations] == [2, 4]
    for entry in evaluations:
        assert all(math.isfinite(entry[name]) for name in ("loss", "disc_auc", "masked_lm_accuracy")), entry


def test_held_out_evaluation_and_init_checkpoint_flags(pretraining_data, default_run, tmp_path, capfd):
    """--eval_tfrecords/--eval_every_steps/--num_eval_steps during training; then --mode=eval of --init_checkpoint in a
    new --model_dir gives the numbers of the source's last evaluation."""
    records, _ = pretraining_data
    source, default = default_run
    assert f"evaluation at step {DEFAULT_RUN_STEPS} ({DEFAULT_RUN_EVAL_BATCHES} batches)" in default.stdout
    evaluations = [json.loads(line) for line in (source / "eval_metrics.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in evaluations] == list(range(1, DEFAULT_RUN_STEPS + 1))

    status = run_command(
        "electra-pretrain",
        *_common(pretraining_data, tmp_path / "evaluated"),
        "--mode=eval",
        f"--init_checkpoint={source}",
        f"--eval_tfrecords={records}",
        f"--num_eval_steps={DEFAULT_RUN_EVAL_BATCHES}",
    )
    evaluation = capfd.readouterr()
    assert status == 0, evaluation.err[-3000:]
    assert f"initialised from {source} (ours" in evaluation.out
    (evaluated,) = [
        json.loads(line) for line in (tmp_path / "evaluated" / "eval_metrics.jsonl").read_text().splitlines()
    ]
    assert evaluated["step"] == 0
    for name, value in evaluations[-1].items():
        if name != "step":
            np.testing.assert_allclose(evaluated[name], value, rtol=1e-6, err_msg=name)
    # An evaluation writes its results only: no run is started in the new model_dir.
    assert sorted(os.listdir(tmp_path / "evaluated")) == ["eval", "eval_metrics.jsonl"]
