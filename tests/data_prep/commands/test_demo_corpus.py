import subprocess
import sys

from tests.conftest import REPO_ROOT


def test_command_line(tmp_path):
    output = tmp_path / "corpus.txt"
    result = subprocess.run(
        [sys.executable, "-m", "data_prep.commands.demo_corpus", f"--output={output}", "--max_bytes=20000"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert output.stat().st_size >= 20000 and f"wrote {output}" in result.stdout
