import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
# The shared tiny pre-training run stops here instead of configs/tiny.flags' 600 steps: on the topic corpus its
# discriminator has AUC 0.906, precision 0.946 and accuracy 0.952 (all-original baseline 0.857) at step 400 of a
# 400-step schedule, 0.863 / 0.938 / 0.900 at step 300 of a 300-step one.
TINY_RUN_STEPS = 400


def pytest_terminal_summary(terminalreporter):
    # A checkout without ../shared (a worktree elsewhere, say) would otherwise skip the real-data tests without a word.
    if not SHARED_DATA.is_dir() and terminalreporter.stats.get("skipped"):
        message = f"{SHARED_DATA} is absent: the tests on real data were among the skipped"
        terminalreporter.write_line(message, yellow=True)


@pytest.fixture(scope="session")
def shared_data():
    """Path to ../shared/data (real vocab, GLUE, SQuAD, corpus); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def pretraining_data(tmp_path_factory):
    """(tfrecord path, vocab path) of a small learnable corpus at max_seq_length 32."""
    from tests import synthetic_data

    directory = tmp_path_factory.mktemp("pretraining_data")
    return (
        synthetic_data.write_tfrecords(directory / "train.tfrecord"),
        synthetic_data.write_vocab(directory / "vocab.txt"),
    )


def shared_across_workers(tmp_path_factory, name, build):
    """`<root>/name`, made once per test session by `build(directory)` however many pytest-xdist workers ask for it:
    the first takes a file lock and builds, the others wait and reuse it (session fixtures are otherwise per worker)."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's directory, above each worker's own basetemp
    directory, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            directory.mkdir(exist_ok=True)
            build(directory)
            done.touch()
    return directory


@pytest.fixture(scope="session")
def pretrained_tiny(pretraining_data, tmp_path_factory):
    """`<model_dir>/pretrained` of a tiny model pre-trained briefly by the pre-training job (as run_pretraining.py)."""
    from electra_tf.training.pretraining_job import run
    from electra_tf.training.pretraining_spec import PretrainingJob

    def pretrain(model_dir):
        records, vocab = pretraining_data
        run(
            PretrainingJob(
                pretrain_tfrecords=records,
                model_dir=str(model_dir),
                model_size="tiny",
                max_seq_length=32,
                train_batch_size=8,
                learning_rate=1e-3,
                num_train_steps=20,
                num_warmup_steps=2,
                save_checkpoints_steps=0,
                log_every_steps=10,
                vocab_file=vocab,
                bias_correction=True,
                progress_bar=False,
            )
        )

    return str(shared_across_workers(tmp_path_factory, "pretrained_tiny", pretrain) / "pretrained")


@pytest.fixture(scope="session")
def tiny_preset_run(pretraining_data, tmp_path_factory):
    """`<model_dir>` of `electra-pretrain --flagfile=configs/tiny.flags` on the topic corpus at max_seq_length 32,
    shortened to TINY_RUN_STEPS (batch 32), run as the command (in this process: `tests.console_commands`); one run
    serves the whole session. Its output is in the report of the test that first asked for it."""

    def pretrain(model_dir):
        from tests.console_commands import run_command

        records, vocab = pretraining_data
        status = run_command(
            "electra-pretrain",
            f"--flagfile={REPO_ROOT / 'configs' / 'tiny.flags'}",
            f"--pretrain_tfrecords={records}",
            f"--vocab_file={vocab}",
            f"--model_dir={model_dir}",
            "--model_size=tiny",
            "--max_seq_length=32",
            "--train_batch_size=32",
            f"--num_train_steps={TINY_RUN_STEPS}",
            "--noprogress_bar",
        )
        assert status == 0, f"electra-pretrain exited with {status}: its output is above"

    return shared_across_workers(tmp_path_factory, "tiny_preset_run", pretrain)


@pytest.fixture(scope="session")
def pretrained_detector(tiny_preset_run):
    """`<model_dir>/pretrained` of a tiny model whose discriminator has learnt replaced-token detection on the topic
    corpus (`tiny_preset_run`; test_run_pretraining asserts its AUC and precision above 0.8 at its end)."""
    return str(tiny_preset_run / "pretrained")


@pytest.fixture(scope="session")
def keyword_glue_dir(tmp_path_factory):
    """A GLUE directory whose SST-2 is the synthetic keyword task (train 480, dev 200, test 20)."""
    from tests.finetune.synthetic_glue import write_sst2_task

    glue_dir = tmp_path_factory.mktemp("glue")
    write_sst2_task(glue_dir)
    return glue_dir


# The test files that take longest (from the suite's --durations), in the order pytest-xdist should start them:
# `--dist loadfile` hands each worker whole files in collection order (the Makefile passes --no-loadscope-reorder,
# which keeps this order; xdist's own puts files with the most tests first, so files of a few slow tests came last
# and ran alone while the other worker idled). Longest first; every other file keeps its place after them.
LONGEST_FILES = (
    "tests/test_run_pretraining.py",
    "tests/electra_tf/training/test_continued_pretraining.py",
    "tests/electra_tf/training/test_gradient_accumulation.py",
    "tests/electra_tf/training/test_pretraining_job.py",
    "tests/test_run_finetuning.py",
    "tests/finetune/tagging/test_tagging_task.py",
    "tests/electra_tf/training/test_replica_updates.py",
    "tests/finetune/squad/test_run_finetuning_squad.py",
    "tests/electra_tf/training/test_pretrainer.py",
    "tests/finetune/models/test_token_classifier.py",
    "tests/finetune/models/test_serving.py",
    "tests/test_convert_checkpoint.py",
    "tests/finetune/models/test_saved_models.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {path: index for index, path in enumerate(LONGEST_FILES)}
    ordered = sorted(enumerate(items), key=lambda pair: (rank.get(pair[1].nodeid.split("::")[0], len(rank)), pair[0]))
    items[:] = [item for _, item in ordered]
