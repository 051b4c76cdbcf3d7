"""The repository passes its linter and its formatter: `ruff check` and `ruff format --check` with pyproject.toml's
settings find nothing to change (run `ruff check --fix .` and `ruff format .` to fix what they name)."""

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None,
    reason="ruff is not installed: it is in requirements.txt and the `test` extra (pip install -e '.[test]')",
)


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff_finds_nothing_to_change(command):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout}{result.stderr}"
