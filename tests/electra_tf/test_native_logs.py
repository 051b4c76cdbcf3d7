"""`import electra_tf` sets TensorFlow's log level unless the user has, and, when stderr is a terminal, routes it
through a filter of TensorFlow's native notices for as long as the process runs; a file or pipe gets every line. An
entry point (`electra_tf.cli.run`) filters its stderr whatever it is."""

import signal
import subprocess
import sys

from electra_tf.native_logs import NATIVE_NOISE
from tests.command_output import run_with_terminal_stderr, users_environment
from tests.conftest import REPO_ROOT

# Native notices as TensorFlow writes them and real lines, written to descriptor 2 after `import electra_tf`; then the
# process ends as a failed check of TensorFlow's ends it (an abort), or with a Python exception.
WRITTEN = [
    "I0000 00:00:1 1 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.",
    "a real warning",
    "E0000 00:00:1 1 util.cc:131] oneDNN supports DT_INT64 only on platforms with AVX-512. Falling back",
    "python's own stderr, quoting E0000 00:00:1 1 util.cc:131] oneDNN supports DT_INT64 only",
    "last words",
]
KEPT = [line for index, line in enumerate(WRITTEN) if index not in (0, 2)]
SCRIPT = f"""
import os, sys
import electra_tf
os.write(2, {(WRITTEN[0] + chr(10)).encode()!r})
os.write(2, {(WRITTEN[1] + chr(10)).encode()!r})
os.write(2, {(WRITTEN[2] + chr(10)).encode()!r})
print({WRITTEN[3]!r}, file=sys.stderr)
print(os.environ.get("TF_CPP_MIN_LOG_LEVEL"), flush=True)
os.write(2, {(WRITTEN[4] + chr(10)).encode()!r})
"""
ENDINGS = {"abort": "os.abort()", "exception": "raise RuntimeError('boom')"}
# The same, as the main of an entry point.
COMMAND = "from electra_tf import cli\n\ndef main(argv):\n{}\ncli.run(main)\n"


def _program(ending, command):
    if not command:
        return SCRIPT + ENDINGS[ending]
    return COMMAND.format("\n".join(f"    {line}" for line in (SCRIPT + ENDINGS[ending]).strip().splitlines()))


def _run(ending, terminal, command=False, stderr=None, **env):
    args = [sys.executable, "-c", _program(ending, command)]
    options = dict(cwd=REPO_ROOT, timeout=120, env={**users_environment(), **env})
    if terminal:
        return run_with_terminal_stderr(args, **options)
    if stderr is not None:
        result = subprocess.run(args, stdout=subprocess.PIPE, stderr=stderr, text=True, **options)
        stderr.seek(0)
        return subprocess.CompletedProcess(args, result.returncode, result.stdout, stderr.read().decode())
    return subprocess.run(args, capture_output=True, text=True, **options)


def test_on_a_terminal_only_the_known_notices_are_dropped_in_order_and_the_last_lines_outlive_an_abort():
    result = _run("abort", terminal=True)
    assert result.returncode == -signal.SIGABRT
    assert result.stderr.splitlines() == KEPT, result.stderr
    assert result.stdout.split() == ["2"]


def test_on_a_terminal_a_traceback_passes_whole_before_the_process_ends():
    result = _run("exception", terminal=True)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[: len(KEPT) + 1] == KEPT + ["Traceback (most recent call last):"], result.stderr
    assert lines[-1] == "RuntimeError: boom", result.stderr


def test_a_pipe_gets_every_line_as_written():
    result = _run("abort", terminal=False)
    assert result.returncode == -signal.SIGABRT
    assert result.stderr.splitlines() == WRITTEN
    assert result.stdout.split() == ["2"]  # the level is set all the same


def test_a_users_level_is_kept_and_the_switch_shows_every_line_on_a_terminal():
    assert _run("abort", terminal=False, TF_CPP_MIN_LOG_LEVEL="3").stdout.split() == ["3"]
    shown = _run("abort", terminal=True, ELECTRA_TF_NATIVE_LOGS="1")
    assert shown.stdout.split() == ["None"]
    assert shown.stderr.splitlines() == WRITTEN


def test_a_command_drops_the_notices_from_a_pipe_too_and_its_last_lines_outlive_an_abort():
    result = _run("abort", terminal=False, command=True)
    assert result.returncode == -signal.SIGABRT
    lines = result.stderr.splitlines()
    # absl's faulthandler reports the abort after the program's lines, through the filter too.
    assert lines[: len(KEPT) + 1] == KEPT + ["Fatal Python error: Aborted"], result.stderr
    assert not [line for line in lines if NATIVE_NOISE.match(line)]
    assert result.stdout.split() == ["2"]


def test_a_commands_log_file_gets_every_line_but_the_notices_and_the_whole_traceback(tmp_path):
    with open(tmp_path / "log", "w+b") as log:
        result = _run("exception", terminal=False, command=True, stderr=log)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[: len(KEPT) + 1] == KEPT + ["Traceback (most recent call last):"], result.stderr
    assert lines[-1] == "RuntimeError: boom", result.stderr


def test_a_users_info_or_warning_level_shows_every_notice_of_a_command():
    for level in ("0", "1"):
        shown = _run("exception", terminal=False, command=True, TF_CPP_MIN_LOG_LEVEL=level)
        assert shown.stdout.split() == [level]
        assert shown.stderr.splitlines()[: len(WRITTEN)] == WRITTEN, (level, shown.stderr)
    assert _run("abort", terminal=True, TF_CPP_MIN_LOG_LEVEL="0").stderr.splitlines() == WRITTEN
    quieter = _run("exception", terminal=False, command=True, TF_CPP_MIN_LOG_LEVEL="3")
    assert quieter.stderr.splitlines()[: len(KEPT)] == KEPT, quieter.stderr


def test_tensorflows_own_notices_are_the_ones_dropped():
    """TensorFlow itself, with the library imported first: on a pipe every line it writes at start-up, at device
    initialisation and at an int64 transpose is one of NATIVE_NOISE's (none on a machine that has nothing to say);
    on a terminal none is shown."""
    code = (
        "import electra_tf, tensorflow as tf\ntf.config.list_physical_devices()\n"
        "print(tf.transpose(tf.constant([[1, 2]], tf.int64)).numpy().tolist())"
    )
    args, options = [sys.executable, "-c", code], dict(cwd=REPO_ROOT, env=users_environment())
    piped = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)
    on_terminal = run_with_terminal_stderr(args, timeout=300, **options)
    stdout, stderr = piped.communicate(timeout=300)
    for result in (on_terminal, subprocess.CompletedProcess(args, piped.returncode, stdout, stderr)):
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.split() == ["[[1],", "[2]]"]
    assert [line for line in stderr.splitlines() if not NATIVE_NOISE.match(line)] == [], stderr
    assert on_terminal.stderr == ""
