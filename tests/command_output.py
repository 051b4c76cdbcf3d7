"""What a normal run may write to stderr, checked on the runs of the commands that the tests make anyway (a command
keeps TensorFlow's native notices off its stderr, a pipe too: `electra_tf.native_logs`); and running a program with
its stderr on a terminal, as in a user's shell, where the Python API filters them too (the README's example,
tests/finetune/models/test_saved_models.py; tests/electra_tf/test_native_logs.py)."""

import os
import re
import subprocess
import threading

from electra_tf.native_logs import NATIVE_NOISE

# TensorFlow's and absl's error and warning lines ("E0000 00:00:...", "W1126 12:00:00..."), absl's banner before it
# is initialised, Python's warnings ("file.py:12: UserWarning: ...") and tracebacks.
ERROR_OR_WARNING = re.compile(r"^[EW]\d{4} \d\d:\d\d:\d\d|^WARNING|\b[A-Z]\w*Warning: |Traceback")
# Such lines that a normal run may still write, as {pattern: why they are let through}.
USERS_BUSINESS = {
    r"triggered tf\.function retracing": "TensorFlow's retracing notice when several fine-tuning trials each predict "
    "with a model of their own (--num_trials > 1); not avoided yet",
}


def users_environment():
    """The test session's environment without the settings a user's shell lacks: the tests' TensorFlow log level,
    and the switch that shows TensorFlow's native notices."""
    return {
        key: value for key, value in os.environ.items() if key not in ("TF_CPP_MIN_LOG_LEVEL", "ELECTRA_TF_NATIVE_LOGS")
    }


def program_lines(stderr):
    """The lines of a captured `stderr` less TensorFlow's native notices (`NATIVE_NOISE`), which a program writes when
    ELECTRA_TF_NATIVE_LOGS is set or the Python API's stderr is no terminal: what the program itself wrote."""
    return [line for line in stderr.splitlines() if not NATIVE_NOISE.match(line)]


def unexpected_lines(stderr):
    """The error and warning lines of `stderr`, and TensorFlow's native notices (`NATIVE_NOISE`, at any level), that
    are not the user's business."""
    return [
        line
        for line in stderr.splitlines()
        if (ERROR_OR_WARNING.search(line) or NATIVE_NOISE.match(line))
        and not any(re.search(pattern, line) for pattern in USERS_BUSINESS)
    ]


def unexpected_program_lines(stderr):
    """`unexpected_lines` among what the program itself wrote (`program_lines`): for a command run in the test process
    (`tests.console_commands`), whose TensorFlow notices are the test process's, written once for all its tests."""
    return unexpected_lines("\n".join(program_lines(stderr)))


def run_with_terminal_stderr(args, timeout=300, **kwargs):
    """`subprocess.run(args, capture_output=True, text=True, ...)` with stderr on a pseudo-terminal (raw: no line
    ending translation) instead of a pipe, as in a user's shell. The terminal's output is read until every process
    holding it has closed it (the command's stderr filter too): a reader still waiting after `timeout` is an error."""
    import pty
    import tty

    master, slave = pty.openpty()
    tty.setraw(slave)
    chunks = []

    def read():
        while True:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # EIO: no process holds the terminal any more
                return
            if not data:
                return
            chunks.append(data)

    try:
        process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, text=True, **kwargs
        )
    finally:
        os.close(slave)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        stdout, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    reader.join(timeout)
    alive = reader.is_alive()
    os.close(master)
    assert not alive, f"a process started by {args} still holds its stderr {timeout}s after it ended"
    return subprocess.CompletedProcess(args, process.returncode, stdout, b"".join(chunks).decode("utf-8", "replace"))
