"""Shared plumbing for the absl entry points: one-line errors and quiet TensorFlow logs.

Every entry point calls `run(main)` instead of `absl.app.run(main)`. A user error (`ElectraError`) is printed as a
single line naming the problem and the process exits with status 2; `--verbose` shows the traceback as well. The
error's `arguments` that are flags of the running program are shown as `--name` (`message_for_command_line`), and
so are those of the library's notices (absl warnings logged with `extra={"arguments": (...)}`, `NoticeFlags`).

An entry point that calls `quiet_native_startup(__name__)` before importing TensorFlow also loses TensorFlow's native
start-up notices on a machine without a GPU ("Could not find cuda drivers", "failed call to cuInit", the oneDNN
notice): TF_CPP_MIN_LOG_LEVEL cannot hide them, since they are written before TensorFlow reads it.
"""

import atexit
import logging
import os
import re
import sys
import tempfile
import traceback

from absl import app, flags
from absl import logging as absl_logging

from electra_tf.errors import ConfigError, ElectraError, WorkerLostError

flags.DEFINE_boolean("verbose", False, "Show full tracebacks for errors.")

USER_ERROR_EXIT_CODE = 2

# Native start-up notices that say nothing to a user of a machine without a GPU (or only that oneDNN is on).
STARTUP_NOISE = re.compile("|".join((
    r"All log messages before absl::InitializeLog\(\) is called are written to STDERR",
    r"cudart_stub\.cc:\d+\] Could not find cuda drivers on your machine",
    r"cuda_platform\.cc:\d+\] failed call to cuInit",
    r"port\.cc:\d+\] oneDNN custom operations are on",
    r"util\.cc:\d+\] oneDNN supports DT_INT64 only on platforms with AVX-512",
    r"Unable to register cu(DNN|FFT|BLAS) factory",
    r"computation placer already registered",
)))


class NativeStderrFilter:
    """Redirects file descriptor 2 to a temporary file from `start` to `stop`, then writes back every captured line
    that `STARTUP_NOISE` does not match, in order. Python's own stderr goes through the same descriptor, so tracebacks
    and warnings of the window are kept too (also when the process ends inside it: `stop` runs at exit)."""

    def __init__(self):
        self.saved_descriptor = None
        self.capture = None

    @property
    def active(self):
        return self.saved_descriptor is not None

    def start(self):
        if self.active:
            return
        sys.stderr.flush()
        self.capture = tempfile.TemporaryFile()
        self.saved_descriptor = os.dup(2)
        os.dup2(self.capture.fileno(), 2)
        atexit.register(self.stop)

    def stop(self):
        if not self.active:
            return
        sys.stderr.flush()
        os.dup2(self.saved_descriptor, 2)
        os.close(self.saved_descriptor)
        self.saved_descriptor = None
        self.capture.seek(0)
        kept = [line for line in self.capture.read().decode("utf-8", "replace").splitlines(keepends=True)
                if not STARTUP_NOISE.search(line)]
        self.capture.close()
        sys.stderr.write("".join(kept))
        sys.stderr.flush()


_STARTUP_FILTER = NativeStderrFilter()
CONSOLE_COMMAND_PREFIX = "electra-"  # pyproject.toml's [project.scripts]


def quiet_native_startup(module_name):
    """Called by an entry point with its `__name__` before it imports TensorFlow: when the module runs as the program,
    hide TensorFlow's INFO and WARNING logs (TF_CPP_MIN_LOG_LEVEL=2 unless set) and filter its native start-up notices
    until `run` has initialised the devices (the cuInit notice comes then). Imported as a module (tests, notebooks), it
    does nothing: the library leaves the caller's environment alone. `ELECTRA_TF_NATIVE_STARTUP_LOGS=1` shows the
    notices."""
    # An installed console command (electra-pretrain, ...) imports the module under its own name.
    as_program = module_name == "__main__" or os.path.basename(sys.argv[0]).startswith(CONSOLE_COMMAND_PREFIX)
    if not as_program:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if not os.environ.get("ELECTRA_TF_NATIVE_STARTUP_LOGS"):
        _STARTUP_FILTER.start()


SHORT_HELP = ("--help", "-h", "-?", "--helpshort")
FULL_HELP = ("--helpfull",)


def _initialise_devices_quietly():
    if not _STARTUP_FILTER.active:
        return
    try:
        if not any(arg in SHORT_HELP + FULL_HELP for arg in sys.argv[1:]):
            import tensorflow as tf

            tf.config.list_physical_devices()
    finally:
        _STARTUP_FILTER.stop()


def _answer_help(main):
    """Help on stdout with exit status 0 (absl's own help flags exit with 1, which scripts read as a failure): the
    program's docstring and its flags, found from `main`'s module (an installed console command's `__main__` is a
    wrapper without either)."""
    asked = [arg for arg in sys.argv[1:] if arg in SHORT_HELP + FULL_HELP]
    if not asked:
        return
    module = sys.modules[main.__module__]
    flag_values = flags.FLAGS
    program = os.path.basename(sys.argv[0])
    flag_help = flag_values.module_help(module) if asked[0] in SHORT_HELP else flag_values.get_help()
    text = (module.__doc__ or f"USAGE: {program} [flags]\n").rstrip("\n") + "\n\nflags:\n" + flag_help + "\n"
    if asked[0] in SHORT_HELP:
        text += "\nTry --helpfull to get a list of all flags.\n"
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `--help | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(0)


def _is_verbose():
    try:
        return flags.FLAGS.verbose
    except (flags.UnparsedFlagAccessError, AttributeError):
        return "--verbose" in sys.argv


def _argument_pattern(name):
    # A whole word: not part of a longer identifier, a path (data_dir/x, /x/data_dir), an existing --flag, or a value
    # (strategy=tpu, 'tpu', "tpu").
    return re.compile(rf"(?<![\w./='\"-]){re.escape(name)}(?![\w/-]|\.\w)")


def program_name():
    """How the user started this program: the console command or script name, or `python -m <package>`."""
    program = os.path.basename(sys.argv[0])
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if program == "__main__.py" and spec is not None:
        return f"python -m {spec.name.removesuffix('.__main__')}"
    return program


def _arguments_of(error):
    """(arguments, without_flag remedies) of `error` and of the errors it was raised while handling whose messages it
    quotes (`raise ConfigError(f"...: {error}") from None` keeps the inner error as its context)."""
    arguments, remedies = [], {}
    inner = error
    while isinstance(inner, ElectraError) and str(inner) in str(error):
        arguments += [name for name in inner.arguments if name not in arguments]
        remedies = {**inner.without_flag, **remedies}
        inner = inner.__cause__ or inner.__context__
    return arguments, remedies


def _with_flags(message, arguments, flag_values, flag_names):
    """(`message` with each of `arguments` that is a defined flag of `flag_values` written as `--flag`, the
    (argument, flag) pairs that are not flags)."""
    unflagged = []
    for name in arguments:
        flag = flag_names.get(name, name)
        if flag in flag_values:
            message = _argument_pattern(name).sub(f"--{flag}", message)
        else:
            unflagged.append((name, flag))
    return message, unflagged


def message_for_command_line(error, flag_values=None, flag_names=None, program=None):
    """`error`'s message with each of its `arguments` that is a defined flag of `flag_values` (default: the running
    program's flags) written as `--name`; other arguments and text are left as they are.

    `flag_names` maps the library's argument names to the program's flags where they differ (e.g. `{"kind": "model"}`
    turns `kind=generator` into `--model=generator`). An argument the message asks to pass (`pass name=...`) that is
    no flag of the program gets a sentence saying so (`program`, default `program_name()`), with the error's
    `without_flag` remedy for it: the user cannot pass what the command has no flag for."""
    flag_values = flags.FLAGS if flag_values is None else flag_values
    arguments, remedies = _arguments_of(error)
    message, unflagged = _with_flags(str(error), arguments, flag_values, flag_names or {})
    for name, flag in unflagged:
        if re.search(rf"\bpass {re.escape(name)}\b", message):
            message = message.rstrip(".") + f". {program or program_name()} has no --{flag} flag" + (
                f": {remedies[name]}" if remedies.get(name) else "")
    return message


class NoticeFlags(logging.Filter):
    """Writes the arguments a library notice lists as flags of the running program, as errors are: the library logs
    a notice with absl's `logging.warning(..., extra={"arguments": (...)})`, naming those arguments by their Python
    names, and `run` adds this filter to absl's logger."""

    def __init__(self, flag_names=None, flag_values=None):
        super().__init__()
        self.flag_names = flag_names or {}
        self.flag_values = flag_values

    def filter(self, record):
        arguments = getattr(record, "arguments", ())
        if arguments:
            flag_values = flags.FLAGS if self.flag_values is None else self.flag_values
            record.msg, _ = _with_flags(record.getMessage(), arguments, flag_values, self.flag_names)
            record.args = ()
        return True


def require_flags(*names):
    """Raises a one-line `ConfigError` naming every flag of `names` that was not given (absl's
    `mark_flag_as_required` reports them as "FATAL Flags parsing error" over several lines, with exit status 1)."""
    missing = [name for name in names if flags.FLAGS[name].value in (None, "", [])]
    if missing:
        listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
        raise ConfigError(f"{listed} {'is' if len(missing) == 1 else 'are'} required (--help lists every flag)",
                          arguments=tuple(missing))


def _leave_after_lost_worker(error, flag_names):
    """Report `error` (a `WorkerLostError`) and end the process at once: TensorFlow's runtime is unusable after a failed
    collective, and its exit handlers wait for the lost peer, so they are skipped so that a scheduler sees the exit."""
    if _is_verbose():
        traceback.print_exc()
    print(f"error: {message_for_command_line(error, flag_names=flag_names)}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(USER_ERROR_EXIT_CODE)


def _wrap(main, flag_names, precheck):
    def wrapped(argv):
        try:
            if precheck is not None:
                precheck(argv)
            _initialise_devices_quietly()
            return main(argv)
        except ElectraError as error:
            _STARTUP_FILTER.stop()
            if isinstance(error, WorkerLostError):
                _leave_after_lost_worker(error, flag_names)
            if _is_verbose():
                raise
            print(f"error: {message_for_command_line(error, flag_names=flag_names)}", file=sys.stderr)
            sys.exit(USER_ERROR_EXIT_CODE)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)

    return wrapped


def run(main, flag_names=None, precheck=None):
    """`absl.app.run(main)` with one-line reporting of `ElectraError` (`flag_names` as in `message_for_command_line`).

    `precheck(argv)`, when given, runs first with the flags parsed and before TensorFlow is imported: the argument
    and path checks that need no model (see `electra_tf.preflight`), so that their errors come at once.
    TensorFlow's Python INFO logs (one per checkpoint write, ...) are hidden unless `--verbosity` is given. After
    `quiet_native_startup`, the devices are initialised (and the start-up filter ends) before `main` runs.
    """
    if not any(arg.startswith(("--verbosity", "-v=")) for arg in sys.argv):
        sys.argv.insert(1, "--verbosity=-1")
    _answer_help(main)
    absl_logging.get_absl_logger().addFilter(NoticeFlags(flag_names))
    app.run(_wrap(main, flag_names, precheck))
