"""Shared plumbing for the absl entry points: one-line errors and quiet TensorFlow logs.

Every entry point calls `run(main)` instead of `absl.app.run(main)`. A user error (`ElectraError`) is printed as a
single line naming the problem and the process exits with status 2; `--verbose` shows the traceback as well. The
error's `arguments` that are flags of the running program are shown as `--name` (`message_for_command_line`), and
so are those of the library's notices (absl warnings logged with `extra={"arguments": (...)}`, `NoticeFlags`).

TensorFlow's log level is set by `import electra_tf` itself, for entry points and the Python API alike, and `run`
keeps TensorFlow's native notices off the program's stderr, whatever it is (`electra_tf.native_logs`): an entry point
imports this module, and calls `run`, before TensorFlow.
"""

import logging
import os
import re
import shlex
import sys
import traceback

from absl import app, flags
from absl import logging as absl_logging

from electra_tf import flag_files, native_logs
from electra_tf.errors import ConfigError, ElectraError, WorkerLostError

flags.DEFINE_boolean("verbose", False, "Show full tracebacks for errors.")

USER_ERROR_EXIT_CODE = 2
# Added by `run` when the user gives no --verbosity: TensorFlow's Python INFO logs stay hidden.
QUIET_VERBOSITY = "--verbosity=-1"

SHORT_HELP = ("--help", "-h", "-?", "--helpshort")
FULL_HELP = ("--helpfull",)


def _answer_help(main):
    """Help on stdout with exit status 0 (absl's own help flags exit with 1, which scripts read as a failure): the
    program's docstring and its flags, found from `main`'s module (an installed console command's `__main__` is a
    wrapper without either)."""
    asked = [arg for arg in sys.argv[1:] if arg in SHORT_HELP + FULL_HELP]
    if not asked:
        return
    module = sys.modules[main.__module__]
    flag_values = flags.FLAGS
    flag_help = flag_values.module_help(module) if asked[0] in SHORT_HELP else flag_values.get_help()
    text = (module.__doc__ or f"USAGE: {program_name()} [flags]\n").rstrip("\n") + "\n\nflags:\n" + flag_help + "\n"
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


def _asks_for(message, name):
    # "pass vocab_file=<...>", "use kind=generator", "choose num_heads among ...", "pass labels=... or regression=True"
    return re.search(rf"\b(?:pass|use|load|set|give|choose)(?: that| the)? (?:\S+ or )?{re.escape(name)}\b", message)


def _module_run_with_m():
    """The module `python -m` ran in this process (a package's name for its __main__), None for a script or a
    console command (run as scripts, without a spec)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return None if spec is None else spec.name.removesuffix(".__main__")


def program_name(script=None, module=None):
    """What the user typed to start this program: `python -m <module>` for a module run with -m, `python <script>`
    for a script (a path relative to the current directory), or the console command's name. `script` and `module`
    default to this process's: `sys.argv[0]` and the module -m ran (None when it ran none)."""
    if script is None:
        script, module = sys.argv[0], _module_run_with_m()
    if module:
        return f"python -m {module}"
    if script.endswith(".py"):
        return f"python {shlex.quote(os.path.relpath(script) if os.path.isabs(script) else script)}"
    return os.path.basename(script)


def command_line(argv=None, module=None):
    """The command as the user typed it, quoted for a shell: `program_name` and the arguments of `argv`, without the
    --verbosity `run` adds. `argv` and `module` default to this process's, as in `program_name`."""
    if argv is None:
        argv, module = sys.argv, _module_run_with_m()
    arguments = list(argv[1:])
    if arguments[:1] == [QUIET_VERBOSITY]:
        arguments.pop(0)
    return " ".join([program_name(argv[0], module)] + [shlex.quote(argument) for argument in arguments])


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
    `without_flag` remedy for it: the user cannot pass what the command has no flag for. A message asks for an
    argument with "pass", "use", "load", "set", "give" or "choose" before its name."""
    flag_values = flags.FLAGS if flag_values is None else flag_values
    arguments, remedies = _arguments_of(error)
    message, unflagged = _with_flags(str(error), arguments, flag_values, flag_names or {})
    for name, flag in unflagged:
        if _asks_for(message, name):
            message = (
                message.rstrip(".")
                + f". {program or program_name()} has no --{flag} flag"
                + (f": {remedies[name]}" if remedies.get(name) else "")
            )
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
        raise ConfigError(
            f"{listed} {'is' if len(missing) == 1 else 'are'} required (--help lists every flag)",
            arguments=tuple(missing),
        )


def _leave_after_lost_worker(error, flag_names):
    """Report `error` (a `WorkerLostError`) and end the process at once: TensorFlow's runtime is unusable after a failed
    collective, and its exit handlers wait for the lost peer, so they are skipped so that a scheduler sees the exit."""
    if _is_verbose():
        traceback.print_exc()
    print(f"error: {message_for_command_line(error, flag_names=flag_names)}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    native_logs.stop_filter()  # the line is out before the exit a scheduler sees
    os._exit(USER_ERROR_EXIT_CODE)


def _wrap(main, flag_names, precheck):
    def wrapped(argv):
        try:
            if precheck is not None:
                precheck(argv)
            return main(argv)
        except ElectraError as error:
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
    TensorFlow's Python INFO logs (one per checkpoint write, ...) are hidden unless `--verbosity` is given.
    A `--flagfile=configs/<name>.flags` that is not found from the current directory is the installed copy
    (`electra_tf.flag_files`).
    """
    if not any(arg.startswith(("--verbosity", "-v=")) for arg in sys.argv):
        sys.argv.insert(1, QUIET_VERBOSITY)
    _answer_help(main)
    native_logs.quiet_tensorflow(owns_stderr=True)
    try:
        sys.argv[1:] = flag_files.resolve_flagfile_arguments(sys.argv[1:])
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(USER_ERROR_EXIT_CODE)
    absl_logging.get_absl_logger().addFilter(NoticeFlags(flag_names))
    app.run(_wrap(main, flag_names, precheck))
