"""Entry points speak flags: an error's Python argument names become `--name` when they are the program's flags."""

import os
import subprocess
import sys
import textwrap

import pytest
from absl import flags

from electra_tf.cli import QUIET_VERBOSITY, NoticeFlags, command_line, message_for_command_line, program_name
from electra_tf.errors import CheckpointError, ConfigError, ElectraError
from tests.conftest import REPO_ROOT


def _flag_values(*names):
    flag_values = flags.FlagValues()
    for name in names:
        flags.DEFINE_string(name, None, "test flag", flag_values=flag_values)
    return flag_values


def test_listed_arguments_that_are_flags_become_flags():
    error = CheckpointError(
        "init_checkpoint=/x does not exist; pass init_checkpoint=<model_dir>/pretrained", arguments=("init_checkpoint",)
    )
    assert (
        message_for_command_line(error, _flag_values("init_checkpoint"))
        == "--init_checkpoint=/x does not exist; pass --init_checkpoint=<model_dir>/pretrained"
    )


def test_only_whole_words_outside_paths_and_identifiers_are_rewritten():
    error = ConfigError(
        "data_dir is required: not /tmp/data_dir/x, data_dir.txt, my_data_dir, data_dir_2, or "
        "--data_dir; set data_dir.",
        arguments=("data_dir",),
    )
    assert message_for_command_line(error, _flag_values("data_dir")) == (
        "--data_dir is required: not /tmp/data_dir/x, data_dir.txt, my_data_dir, data_dir_2, or --data_dir; "
        "set --data_dir."
    )


def test_values_that_look_like_arguments_stay_values():
    error = ConfigError(
        "strategy=tpu needs tpu=<TPU name>; 'tpu' and \"tpu\" are values", arguments=("strategy", "tpu")
    )
    assert (
        message_for_command_line(error, _flag_values("strategy", "tpu"))
        == "--strategy=tpu needs --tpu=<TPU name>; 'tpu' and \"tpu\" are values"
    )


def test_arguments_that_are_not_flags_and_unlisted_names_stay_plain():
    error = ConfigError("num_layers=0 with model_size=tiny", arguments=("num_layers",))
    assert (
        message_for_command_line(error, _flag_values("num_layers_x", "model_size"))
        == "num_layers=0 with model_size=tiny"
    )
    assert ElectraError("plain").arguments == ()
    assert message_for_command_line(ValueError("model_size"), _flag_values("model_size")) == "model_size"


def test_an_argument_to_pass_that_is_no_flag_is_named_with_the_remedy():
    error = CheckpointError(
        "pair: embeddings differ (pass allow_embedding_mismatch=True to keep the discriminator's).",
        arguments=("allow_embedding_mismatch",),
        without_flag={"allow_embedding_mismatch": "convert the pair first"},
    )
    assert message_for_command_line(error, _flag_values("init_checkpoint"), program="electra-rerank") == (
        "pair: embeddings differ (pass allow_embedding_mismatch=True to keep the discriminator's). electra-rerank "
        "has no --allow_embedding_mismatch flag: convert the pair first"
    )
    assert (
        message_for_command_line(error, _flag_values("allow_embedding_mismatch"), program="electra-convert")
        == "pair: embeddings differ (pass --allow_embedding_mismatch=True to keep the discriminator's)."
    )
    # Named without being asked for: nothing to add.
    unasked = ConfigError("kind=generator holds no head", arguments=("kind",))
    assert message_for_command_line(unasked, _flag_values(), program="electra-rerank") == "kind=generator holds no head"
    without_remedy = ConfigError("pass vocab_file=<vocab.txt>", arguments=("vocab_file",))
    assert (
        message_for_command_line(without_remedy, _flag_values(), program="electra-analyze")
        == "pass vocab_file=<vocab.txt>. electra-analyze has no --vocab_file flag"
    )


def test_a_message_asks_for_an_argument_with_pass_use_load_set_give_or_choose():
    error = CheckpointError(
        "/x holds Electric's cloze generator: load kind=pretrainer (or kind=discriminator)", arguments=("kind",)
    )
    assert (
        message_for_command_line(error, _flag_values(), program="electra-score")
        == "/x holds Electric's cloze generator: load kind=pretrainer (or kind=discriminator). electra-score has no "
        "--kind flag"
    )
    either = ConfigError(
        "a regression model has no labels: pass labels=... or regression=True, not both",
        arguments=("labels", "regression"),
    )
    assert message_for_command_line(either, _flag_values(), program="electra-finetune") == (
        "a regression model has no labels: pass labels=... or regression=True, not both. electra-finetune has no "
        "--labels flag. electra-finetune has no --regression flag"
    )
    # The model's setting, not an argument to give: nothing to add.
    described = ConfigError(
        "the discriminator was pre-trained with objective='mlm': pass the discriminator of an objective=electric run",
        arguments=("objective",),
    )
    assert message_for_command_line(described, _flag_values(), program="electra-score") == str(described)


def test_an_error_quoting_the_one_it_replaced_keeps_that_ones_arguments_and_remedies():
    try:
        try:
            raise CheckpointError(
                "pair differs (pass allow_embedding_mismatch=True)",
                arguments=("allow_embedding_mismatch",),
                without_flag={"allow_embedding_mismatch": "convert it first"},
            )
        except CheckpointError as error:
            raise CheckpointError(f"scorers=disc needs the discriminator: {error}", arguments=("scorers",)) from None
    except CheckpointError as wrapped:
        assert message_for_command_line(wrapped, _flag_values("scorers"), program="electra-rerank") == (
            "--scorers=disc needs the discriminator: pair differs (pass allow_embedding_mismatch=True). "
            "electra-rerank has no --allow_embedding_mismatch flag: convert it first"
        )


def test_a_library_notice_names_the_programs_flags():
    import logging

    record = logging.LogRecord(
        "absl",
        logging.WARNING,
        __file__,
        1,
        "model_dir=%s holds %s; init_checkpoint=%s was not used (num_layers stays)",
        ("/m", "/m/ckpt-1", "/x"),
        None,
    )
    record.arguments = ("model_dir", "init_checkpoint", "num_layers")
    assert NoticeFlags(flag_values=_flag_values("model_dir", "init_checkpoint")).filter(record)
    assert record.getMessage() == "--model_dir=/m holds /m/ckpt-1; --init_checkpoint=/x was not used (num_layers stays)"
    plain = logging.LogRecord("absl", logging.WARNING, __file__, 1, "model_dir %s", ("/m",), None)
    assert NoticeFlags(flag_values=_flag_values("model_dir")).filter(plain) and plain.getMessage() == "model_dir /m"


def test_the_program_and_command_line_are_named_as_typed():
    assert program_name("/repo/electra_tf/commands/score.py", "electra_tf.commands.score") == (
        "python -m electra_tf.commands.score"
    )
    assert program_name("/env/bin/electra-score") == "electra-score"
    assert program_name("bench/plan.py") == "python bench/plan.py"
    assert program_name(os.path.abspath("bench/plan.py")) == "python bench/plan.py"
    typed = command_line(["/env/bin/electra-compute-matched", QUIET_VERBOSITY, "--corpus=a b.txt"])
    assert typed == "electra-compute-matched '--corpus=a b.txt'"
    assert command_line(["/repo/x/y.py", "--verbosity=1"], "x.y") == "python -m x.y --verbosity=1"


@pytest.mark.parametrize("launch", ["module", "script"])
def test_a_running_program_knows_how_it_was_started(tmp_path, launch):
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "__init__.py").write_text("")
    (tmp_path / "tool" / "say.py").write_text(
        textwrap.dedent("""
        from electra_tf import cli

        cli.run(lambda argv: print(cli.program_name(), "|", cli.command_line()))
    """)
    )
    started = ["-m", "tool.say"] if launch == "module" else ["tool/say.py"]
    result = subprocess.run(
        [sys.executable, *started, "--verbose"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": ""},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    program = "python -m tool.say" if launch == "module" else "python tool/say.py"
    assert result.stdout == f"{program} | {program} --verbose\n"


def test_entry_point_prints_the_translated_message_on_one_line(tmp_path):
    script = tmp_path / "entry.py"
    script.write_text(
        textwrap.dedent("""
        from electra_tf import cli
        from absl import flags
        from electra_tf.errors import ConfigError

        flags.DEFINE_string("output_dir", None, "where")

        def main(argv):
            raise ConfigError("output_dir is required (num_layers is not a flag)",
                              arguments=("output_dir", "num_layers"))

        cli.run(main)
    """)
    )
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": ""},
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "error: --output_dir is required (num_layers is not a flag)"


@pytest.mark.parametrize("verbose", [False, True])
def test_a_lost_worker_ends_the_process_at_once_without_the_exit_handlers(tmp_path, verbose):
    """TensorFlow's exit handlers wait for the lost peer; here an exit handler that would hang stands for them."""
    script = tmp_path / "entry.py"
    script.write_text(
        textwrap.dedent("""
        import atexit, time
        from absl import flags
        from electra_tf import cli
        from electra_tf.errors import WorkerLostError

        flags.DEFINE_float("collective_timeout_seconds", 0, "limit")

        def main(argv):
            atexit.register(lambda: time.sleep(600))
            raise WorkerLostError("worker 1 (h:2) did not answer within collective_timeout_seconds=20 during step 3",
                                  arguments=("collective_timeout_seconds",))

        cli.run(main)
    """)
    )
    result = subprocess.run(
        [sys.executable, str(script), *(["--verbose"] if verbose else [])],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": ""},
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert (
        result.stderr.strip().splitlines()[-1]
        == "error: worker 1 (h:2) did not answer within --collective_timeout_seconds=20 during step 3"
    )
    assert ("Traceback" in result.stderr) == verbose


def test_help_from_another_directory_exits_0_without_cuda_notices(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "run_finetuning.py"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "--task" in result.stdout and "--train_file" in result.stdout
    assert not [line for line in result.stderr.splitlines() if "cuda" in line.lower() or "cuInit" in line]
    missing = subprocess.run(
        [sys.executable, str(REPO_ROOT / "run_finetuning.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [missing.stderr.splitlines()[0]]
    assert missing.stderr.startswith("error: --task is required; choose one of CoLA, SST-2")


@pytest.mark.parametrize(
    "program, expected",
    [
        (["run_pretraining.py"], "error: --pretrain_tfrecords is required"),
        (["export_model.py"], "error: --init_checkpoint and --output_dir are required"),
        (["convert_checkpoint.py"], "error: --from and --to are required"),
        (["-m", "electra_tf.commands.score"], "error: --model_dir is required"),
        (["-m", "data_prep.commands.build_vocab"], "error: --output is required"),
        (
            ["-m", "data_prep.commands.build_data", "--corpus=a.txt"],
            "error: --vocab_file and --output_dir are required",
        ),
    ],
)
def test_every_entry_point_without_its_required_flags_gives_one_line(tmp_path, program, expected):
    # Scripts by path, modules by name, both from another directory.
    command = [str(REPO_ROOT / program[0]), *program[1:]] if program[0].endswith(".py") else program
    result = subprocess.run(
        [sys.executable, *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(expected), result.stderr
