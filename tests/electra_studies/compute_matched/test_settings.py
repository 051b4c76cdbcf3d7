"""The compute-matched experiment's settings: a resumed run's recorded job, one-line errors naming fields (and
flags from the command), and the CPU recipe's flag file."""

import dataclasses
import json
import re

import pytest

from electra_studies.compute_matched import settings as experiment_settings
from electra_studies.compute_matched import settings_record
from electra_tf.errors import ConfigError
from tests.console_commands import run_command
from tests.electra_studies.compute_matched.common import experiment_settings_with


def _cli(capfd, *args):
    """(exit status, stderr lines) of electra-compute-matched run in this process with `args`."""
    capfd.readouterr()
    status = run_command("electra-compute-matched", *args)
    return status, capfd.readouterr().err.strip().splitlines()


def test_a_job_recorded_before_a_field_was_added_resumes_at_the_fields_default(tmp_path):
    from electra_tf.training.pretraining_spec import PretrainingJob

    job = PretrainingJob(
        pretrain_tfrecords="data/*.tfrecord", model_dir=str(tmp_path / "run"), learning_rate=1e-3, progress_bar=False
    )
    settings_record.check_or_record_job(job)
    path = tmp_path / "run" / "experiment_job.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert "progress_bar" not in recorded and recorded["learning_rate"] == 1e-3
    # Written before these fields existed (a plain default, a tuple's and a default factory's).
    added = ("allow_embedding_mismatch", "checkpoint_steps", "model_overrides")
    older = {key: value for key, value in recorded.items() if key not in added}
    path.write_text(json.dumps(older), encoding="utf-8")
    settings_record.check_or_record_job(job)
    assert json.loads(path.read_text(encoding="utf-8")) == older
    # How often a run saves does not change what it computes: it resumes under other values.
    settings_record.check_or_record_job(dataclasses.replace(job, save_checkpoints_steps=7, keep_checkpoint_max=1))
    # Away from its default, a field the file lacks is a change; so is any other setting.
    for changed, message in (
        ({"allow_embedding_mismatch": True}, "allow_embedding_mismatch: False -> True"),
        (
            {"checkpoint_steps": (10,), "learning_rate": 5e-4},
            r"checkpoint_steps: \[\] -> \[10\], learning_rate: 0.001 -> 0.0005",
        ),
    ):
        with pytest.raises(
            ConfigError,
            match=f"^{tmp_path / 'run'} holds a pre-training run made with other "
            rf"settings \({message}\); use another output_dir, or the settings of "
            "that run to resume it$",
        ):
            settings_record.check_or_record_job(dataclasses.replace(job, **changed))


def test_unknown_objective_is_a_one_line_error(tmp_path, capfd):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Some text.\n", encoding="utf-8")
    status, lines = _cli(
        capfd,
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus}",
        f"--glue_dir={tmp_path}",
        "--objectives=electra,bert",
    )
    assert status == 2
    assert lines[-1].startswith("error: unknown objective 'bert' in --objectives")
    assert not any("Traceback" in line for line in lines)
    assert not (tmp_path / "out").exists()


def test_missing_corpus_too_few_files_and_unknown_task_are_one_line_errors(tmp_path, capfd):
    status, lines = _cli(
        capfd, f"--output_dir={tmp_path / 'out'}", f"--corpus={tmp_path / 'missing.txt'}", f"--glue_dir={tmp_path}"
    )
    assert status == 2 and lines[-1].startswith("error: --corpus entry")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Some text.\n", encoding="utf-8")
    # One file: nothing to hold out.
    status, lines = _cli(capfd, f"--output_dir={tmp_path / 'out'}", f"--corpus={corpus}", f"--glue_dir={tmp_path}")
    assert status == 2
    assert lines[-1].startswith(
        "error: --heldout_files=1 needs at least 2 files (the last 1 by name are held out) and --corpus has 1"
    )
    status, lines = _cli(
        capfd,
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus}",
        f"--glue_dir={tmp_path}",
        "--heldout_files=0",
        "--tasks=sst-2,nope",
    )
    assert status == 2 and lines[-1].startswith("error: unknown GLUE task")
    assert not (tmp_path / "out").exists()


def test_the_settings_errors_name_fields_and_the_command_shows_them_as_flags(tmp_path, shared_data, capfd):
    with pytest.raises(ConfigError, match="^output_dir is required$") as raised:
        experiment_settings.validate(experiment_settings_with(tmp_path, output_dir=""))
    assert raised.value.arguments == ("output_dir",)
    corpus = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in corpus:
        path.write_text("Some text.\n", encoding="utf-8")
    settings = (
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus[0]},{corpus[1]}",
        f"--glue_dir={shared_data / 'glue'}",
        "--dry_run",
    )
    for arguments, error in (
        (["--output_dir="], r"--output_dir is required"),
        (["--warmup_steps=-1"], r"--warmup_steps must be >= 0, got -1"),
        (
            ["--heldout_files=2"],
            r"--heldout_files=2 needs at least 3 files \(the last 2 by name are held out\) and --corpus has 2; pass "
            r"more files in --corpus, or a smaller --heldout_files \(0: no held-out evaluation\)",
        ),
        (
            ["--electra_steps=1", "--eval_fractions=0.1,1"],
            r"the budget \(--electra_steps=1: \S+ FLOPs\) gives objective 'electra' no step at evaluation fraction "
            r"0.1 \(one step costs \S+ FLOPs\); raise the budget or the smallest --eval_fractions",
        ),
        (
            ["--budget_minutes=0.1"],
            r"--budget_minutes=0.1 leaves no time for a pre-training step \(starting a run alone takes about 15 s\); "
            "raise it",
        ),
    ):
        assert run_command("electra-compute-matched", *settings, *arguments) == 2
        errors = [line for line in capfd.readouterr().err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and re.fullmatch(f"error: {error}", errors[0]), errors
    assert not (tmp_path / "out").exists()


def test_the_recipes_flag_file_plans_the_recipe(tmp_path, shared_data, capfd):
    """configs/compute_matched_cpu.flags: ELECTRA from the masked-LM run's step 1,750 plus 6,000 steps, and the
    masked-LM twin of equal FLOPs."""
    corpus = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in corpus:
        path.write_text("Some text.\n\nMore text.\n", encoding="utf-8")
    status = run_command(
        "electra-compute-matched",
        "--flagfile=configs/compute_matched_cpu.flags",
        f"--output_dir={tmp_path / 'out'}",
        f"--corpus={corpus[0]},{corpus[1]}",
        f"--glue_dir={shared_data / 'glue'}",
        "--dry_run",
    )
    output = capfd.readouterr()
    assert status == 0, output.err[-3000:]
    assert re.search(r"electra: mlm's 1750 steps \(\S+ FLOPs\) \+ 6000 steps x ", output.out), output.out
    assert re.search(r"mlm: 105\d\d steps x ", output.out), output.out  # the vocabulary's size moves it by a few
    assert not (tmp_path / "out").exists()
