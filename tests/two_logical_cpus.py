"""Scripts run in a fresh process whose CPU is split into two logical devices: what a test of a MirroredStrategy of
two replicas needs, since the split must come before TensorFlow starts (it cannot in the test's own process)."""

import subprocess
import sys

from tests.conftest import REPO_ROOT

SPLIT_THE_CPU = """
import tensorflow as tf
from electra_tf.training.distribution import split_cpu
split_cpu(2)
"""


def run_in_a_fresh_python(script, *arguments):
    """The standard output of `script` (given `arguments` as sys.argv[1:]), run by a fresh Python from the repository
    root; fails the test with the script's standard error if it exits non-zero."""
    result = subprocess.run(
        [sys.executable, "-c", script, *arguments], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def run_on_two_logical_cpus(script):
    """`run_in_a_fresh_python` of `script` after `SPLIT_THE_CPU`."""
    return run_in_a_fresh_python(SPLIT_THE_CPU + script)
