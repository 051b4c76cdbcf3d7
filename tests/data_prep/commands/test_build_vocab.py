import os
import subprocess
import sys

from tests.command_output import unexpected_lines, users_environment
from tests.conftest import REPO_ROOT
from tests.console_commands import run_command
from tests.data_prep.helpers import write_corpus


def _run(args):
    return subprocess.run(
        [sys.executable, "-m", "data_prep.commands.build_vocab", *args],
        cwd=REPO_ROOT,
        env=users_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_learns_a_vocabulary_from_a_corpus(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt", 100)
    output = tmp_path / "sub" / "vocab.txt"
    result = _run([f"--corpus={corpus}", "--vocab_size=120", f"--output={output}"])
    assert result.returncode == 0, result.stderr
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]  # a normal run, in a user's environment
    vocab = output.read_text(encoding="utf-8").splitlines()
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    # The corpus has 21 distinct words: they, their characters and ## suffixes are all the learner can find.
    assert len(vocab) <= 120 and "discriminator" in vocab and "##s" in vocab
    assert f"wrote {output}: {len(vocab)} tokens" in result.stdout
    assert [p for p in os.listdir(output.parent)] == ["vocab.txt"]  # written atomically, no temporary left


def test_accepts_an_existing_bert_vocab_and_rejects_a_bad_one(tmp_path, shared_data, capfd):
    """The command in this process (`tests.console_commands`): what it writes and prints is checked here."""
    bert = shared_data / "vocab" / "bert-uncased-vocab.txt"
    output = tmp_path / "vocab.txt"
    status = run_command("electra-build-vocab", f"--vocab_file={bert}", f"--output={output}")
    result = capfd.readouterr()
    assert status == 0, result.err
    assert output.read_bytes() == bert.read_bytes()
    assert "existing vocabulary of 30522 tokens" in result.out
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n")
    status = run_command("electra-build-vocab", f"--vocab_file={bad}", f"--output={tmp_path}/out.txt")
    assert status == 2
    assert capfd.readouterr().err.strip().splitlines()[-1] == (
        f"error: --vocab_file={bad} lacks [PAD] [UNK] [CLS] [SEP] [MASK]; it must be a BERT-style vocab.txt"
    )
