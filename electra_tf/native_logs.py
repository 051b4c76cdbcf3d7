"""TensorFlow's native notices that are no user's business, kept off a command's stderr for as long as it runs.

TensorFlow's C++ runtime writes to file descriptor 2 lines that say nothing to a user of a machine without a GPU, or
only that oneDNN is on: some before it reads TF_CPP_MIN_LOG_LEVEL ("All log messages before absl::InitializeLog()",
"Could not find cuda drivers"), so that no level hides them, and some at error level, which level 2 keeps ("failed
call to cuInit" when the devices are initialised, "oneDNN supports DT_INT64 only on platforms with AVX-512" the first
time oneDNN meets an int64 op, such as a transpose, whenever that comes). A filter on the descriptor is the only way
to drop them.

`import electra_tf` calls `quiet_tensorflow()` (`finetune`, `data_prep` and `electra_studies` import `electra_tf`
first, so the entry points, the scripts and the Python API all pass here before TensorFlow loads), and every entry
point calls `quiet_tensorflow(owns_stderr=True)` (`electra_tf.cli.run`) before it imports TensorFlow:

- TF_CPP_MIN_LOG_LEVEL=2 unless it is set (TensorFlow's INFO and WARNING logs; a value of your own is kept, and only
  counts when set before TensorFlow is imported);
- descriptor 2 becomes a pipe to a filter process that drops the lines of `NATIVE_NOISE` (TensorFlow's own log lines,
  by their prefix and source file) and passes every other byte on as soon as it is read, in order, until exit. A
  command owns its process, so its stderr is filtered whatever it is: a terminal, a log file, a pipe to `tee` or to a
  caller's `capture_output`. The Python API filters a terminal only: a file or a pipe may be a test harness's or a
  caller's that the same process replaces or reads (pytest's capture), and gets every line as it is written.

`ELECTRA_TF_NATIVE_LOGS=1`, or a TF_CPP_MIN_LOG_LEVEL of 0 or 1 of your own (TensorFlow's INFO or WARNING logs asked
for), shows every notice.
"""

import atexit
import os
import re
import subprocess
import sys

OPT_OUT = "ELECTRA_TF_NATIVE_LOGS"

# The prefix of TensorFlow's (absl's) log lines: severity, date, time (before absl is initialised, "0000 00:00:<epoch
# seconds>"), thread id. Only lines that start with it, from the named source files, are dropped.
_LOG_PREFIX = r"[IWEF]\d{4} [\d:.]+ +\d+ "
_STARTUP_BANNER = r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR\s*$"
_NOTICES = (
    r"cudart_stub\.cc:\d+\] Could not find cuda drivers on your machine",
    r"cuda_platform\.cc:\d+\] failed call to cuInit",
    r"port\.cc:\d+\] oneDNN custom operations are on",
    r"util\.cc:\d+\] oneDNN supports DT_\w+ only on platforms with AVX-512",
    r"cuda_(?:dnn|fft|blas)\.cc:\d+\] Unable to register cu(?:DNN|FFT|BLAS) factory",
    r"computation_placer\.cc:\d+\] computation placer already registered",
)
NATIVE_NOISE = re.compile(f"^(?:{_STARTUP_BANNER}|{_LOG_PREFIX}(?:{'|'.join(_NOTICES)}))")

# What the filter process runs (`python -I -S -c`: the standard library only, nothing of the caller's environment):
# each line read from stdin that the pattern in argv[1] does not match goes to stdout as soon as it is read. A line
# that arrives in two reads is passed on in two parts, each checked on its own: TensorFlow writes a notice in one
# write, which a pipe delivers whole; a part that is not a whole notice does not match (the pattern is anchored at
# the start of TensorFlow's log prefix), so at worst a notice shows, never is a line lost.
_FORWARD = """\
import os, re, sys
noise = re.compile(sys.argv[1].encode())
try:
    while chunk := os.read(0, 1 << 16):
        kept = b"".join(line for line in chunk.splitlines(keepends=True) if not noise.match(line))
        while kept:
            kept = kept[os.write(1, kept):]
except (OSError, KeyboardInterrupt):  # the terminal is gone: nothing more can be shown
    pass
"""

# How long `stop` waits for the filter to pass on what is left. It ends as soon as every writer has closed the pipe,
# which takes milliseconds unless a process started from here, still running, holds it.
_STOP_TIMEOUT_SECONDS = 5


class NativeStderrFilter:
    """Routes file descriptor 2 of this process (and of the processes it starts, which inherit it) through a filter
    process from `start` to `stop`, which runs at exit at the latest.

    A process, not a thread: a thread ends with a process that TensorFlow aborts (a failed check), before it has
    passed on the line that says why; the filter process reads the pipe to its end, and ends when every writer has
    (so also when this process is killed). Python's own stderr writes to the same descriptor, so its warnings and
    tracebacks pass through too."""

    def __init__(self, pattern=NATIVE_NOISE):
        self.pattern = pattern
        self.process = None
        self.saved_descriptor = None
        self.pipe = None  # (device, inode) of the pipe while it is descriptor 2
        self.owner = None  # the process that started the filter (a fork of it must not stop it)

    @property
    def active(self):
        return self.process is not None and self.owner == os.getpid()

    def start(self):
        if self.process is not None:
            return
        if sys.stderr is not None:
            sys.stderr.flush()
        saved = os.dup(2)
        try:
            # Its own session: Ctrl-C and a signal to the process group (a preemption's SIGTERM) reach this process,
            # which reports them on stderr, and not the filter, which passes the report on and ends after it.
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _FORWARD, self.pattern.pattern],
                stdin=subprocess.PIPE,
                stdout=saved,
                stderr=saved,
                start_new_session=True,
            )
        except (OSError, ValueError):  # no interpreter to run it (an embedded Python): stderr stays as it is
            os.close(saved)
            return
        os.dup2(process.stdin.fileno(), 2)
        process.stdin.close()
        status = os.fstat(2)
        self.process, self.saved_descriptor, self.owner = process, saved, os.getpid()
        self.pipe = (status.st_dev, status.st_ino)
        atexit.register(self.stop)

    def stop(self):
        """Gives descriptor 2 back and waits until the filter has passed on everything written before."""
        if not self.active:
            return
        if sys.stderr is not None:
            sys.stderr.flush()
        status = os.fstat(2)
        if (status.st_dev, status.st_ino) == self.pipe:  # not since replaced by someone else
            os.dup2(self.saved_descriptor, 2)
        os.close(self.saved_descriptor)
        try:
            self.process.wait(timeout=_STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:  # a process started from here still holds the pipe: the filter ends with it
            pass
        self.process = None


_FILTER = NativeStderrFilter()


def quiet_tensorflow(owns_stderr=False):
    """TF_CPP_MIN_LOG_LEVEL=2 unless set (or TensorFlow already imported), and the filter of `NATIVE_NOISE` unless
    ELECTRA_TF_NATIVE_LOGS is set or TF_CPP_MIN_LOG_LEVEL asks for TensorFlow's INFO or WARNING logs: on any stderr
    when `owns_stderr` (the caller is the program, an entry point), else on a terminal only; see the module
    docstring."""
    if os.environ.get(OPT_OUT):
        return
    if "tensorflow" not in sys.modules:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip() in ("0", "1"):
        return
    if os.name == "posix" and (owns_stderr or os.isatty(2)):
        _FILTER.start()


def stop_filter():
    """Ends the filter now (before `os._exit`, which skips the exit handlers)."""
    _FILTER.stop()
