"""scripts/word_order_probe.py run as users run it, for a few steps: benchmarks (`pytest -m benchmark`), a process of
its own for each stack; the layers it compares have their own tests."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.benchmark


@pytest.mark.parametrize(
    "stack_flags",
    [
        ("--stack=electra",),
        ("--stack=electra", "--alibi"),
        ("--stack=keras_hub", "--token_type", "--embedding_dropout=0.1"),
    ],
)
def test_the_probe_trains_and_reports_its_masked_accuracy(stack_flags):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "word_order_probe.py"), *stack_flags, "--steps=20"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [line["step"] for line in lines] == [20]
    # 20 steps from a fresh network: near chance over 300 ids, nowhere near copying the twin.
    assert 0.0 <= lines[0]["masked_accuracy"] < 0.1
