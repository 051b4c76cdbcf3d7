import glob
import json
import signal
import subprocess
import sys
import time

import pytest

from electra_tf.data import check_pretraining_data
from electra_tf.data.tfrecord_checks import check_framing
from electra_tf.errors import DataError
from tests.command_output import unexpected_lines, users_environment
from tests.conftest import REPO_ROOT
from tests.data_prep.helpers import write_corpus, write_vocab


def _run(args, **kwargs):
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO_ROOT,
        env=users_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def test_command_with_flagfile_builds_shards_and_manifest(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt", 40)
    vocab = write_vocab(tmp_path / "vocab.txt")
    out = tmp_path / "tfrecords"
    flagfile = tmp_path / "data.flags"
    flagfile.write_text(
        f"--corpus={corpus}\n--vocab_file={vocab}\n--output_dir={out}\n--max_seq_length=64\n"
        "--num_shards=2\n--num_processes=1\n--seed=3\n--noprogress\n"
    )
    result = _run(["-m", "data_prep.commands.build_data", f"--flagfile={flagfile}"])
    assert result.returncode == 0, result.stderr
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]  # a normal run, in a user's environment
    manifest = json.loads((out / "manifest.json").read_text())
    assert f"wrote {manifest['num_examples']} examples" in result.stdout
    assert manifest["max_seq_length"] == 64 and manifest["seed"] == 3 and manifest["num_shards"] == 2
    assert manifest["arguments"]["num_processes"] == 1
    assert len(glob.glob(f"{out}/*.tfrecord*")) == 2
    assert check_pretraining_data(f"{out}/*.tfrecord*", 64, vocab_file=vocab)["num_examples"] > 0


def test_command_reports_user_errors_in_one_line(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt", 5)
    result = _run(
        [
            "-m",
            "data_prep.commands.build_data",
            f"--corpus={corpus}",
            f"--vocab_file={tmp_path}/missing.txt",
            f"--output_dir={tmp_path}/out",
        ]
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: vocabulary file {tmp_path}/missing.txt does not exist: pass --vocab_file=<path to vocab.txt> "
        "(build one with electra-build-vocab)"
    )
    assert "Traceback" not in result.stderr


def test_killed_run_leaves_no_shard_that_looks_complete(tmp_path, shared_data):
    out = tmp_path / "out"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "data_prep.commands.build_data",
            f"--corpus={shared_data}/corpus/nltk-gutenberg/*.txt",
            f"--vocab_file={shared_data}/vocab/bert-uncased-vocab.txt",
            f"--output_dir={out}",
            "--num_shards=4",
            "--num_processes=1",
            "--encoding_errors=replace",
            "--noprogress",
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while not glob.glob(f"{out}/incomplete-*.tmp") and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # Let it write some records.
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert glob.glob(f"{out}/incomplete-*.tmp"), "the run was killed while writing"
    assert not (out / "manifest.json").exists()
    for path in glob.glob(f"{out}/*.tfrecord*"):  # anything the reader's glob sees is whole
        check_framing(path)
    with pytest.raises(DataError):
        check_pretraining_data(f"{out}/*.tfrecord*", 128)
