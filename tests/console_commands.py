"""The installed console commands and the checkout's scripts/, run in the test process: no TensorFlow start-up per run.

Two programs define flags of the same name in absl's one registry (`--vocab_file`, ...), so one program's module is
imported at a time: `program_module` imports it (its flags registered as when it runs) and afterwards removes the module
and the flags it defined; `run_command` runs a command's `console_main` as the installed command would, `run_script` a
script's `main` as `python scripts/<name>.py` would.
"""

import contextlib
import importlib
import sys
import tomllib
import warnings

import keras
from absl import flags
from absl import logging as absl_logging

from electra_tf import native_logs
from tests.conftest import REPO_ROOT

# Where the flags of this project's modules are defined: its packages, bench/, scripts/ and a program run as __main__.
PROJECT_MODULES = ("electra_tf", "finetune", "data_prep", "electra_studies", "bench", "scripts", "__main__")

with open(REPO_ROOT / "pyproject.toml", "rb") as _handle:
    # {program: "module:function"}
    SCRIPTS = tomllib.load(_handle)["project"]["scripts"]


@contextlib.contextmanager
def command_module(program):
    """The module of the console command `program`, imported with its flags in absl's registry for the duration."""
    with program_module(SCRIPTS[program].split(":")[0]) as module:
        yield module


@contextlib.contextmanager
def program_module(name):
    """The module `name` of a program (a console command's, or `scripts.<script>`), imported with its flags in absl's
    registry for the duration."""
    # Programs other tests of this process imported (this one too) keep their flags in the one registry: set them
    # aside meanwhile, with the module, and put them back after.
    imported_before = sys.modules.pop(name, None)
    set_aside = _remove_project_flags()
    module = importlib.import_module(name)
    try:
        yield module
    finally:
        _remove_project_flags()
        del sys.modules[name]
        for module_name, flag in set_aside:
            flags.FLAGS[flag.name] = flag
            flags.FLAGS.register_flag_by_module(module_name, flag)
        if imported_before is not None:
            sys.modules[name] = imported_before


def _remove_project_flags():
    """Removes the flags this project's modules defined from absl's registry; returns [(module name, flag)]."""
    removed = []
    for module_name, module_flags in flags.FLAGS.flags_by_module_dict().items():
        if module_name.split(".")[0] in PROJECT_MODULES:
            removed += [(module_name, flag) for flag in module_flags]
    for _, flag in removed:
        if flag.name in flags.FLAGS:  # an alias goes with the flag it names
            delattr(flags.FLAGS, flag.name)
    return removed


# The warnings a fresh Python process ignores (its default filters, less DeprecationWarning's in __main__, which an
# installed command's module is not).
IGNORED_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def _show_on_stderr(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def warnings_as_a_command_shows_them():
    """Python's warnings written to stderr, once per place, with a fresh process's filters: as the command shows them in
    a process of its own (pytest would record them for its summary instead)."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for category in IGNORED_WARNINGS:
            warnings.simplefilter("ignore", category)
        warnings.showwarning = _show_on_stderr
        yield


def run_command(program, *arguments):
    """The exit status of `program arguments...` run in this process (its output is the caller's capfd, absl's log
    lines and Python's warnings included). What the command sets for its process is undone after: sys.argv, the flags'
    values, the filters it adds to absl's logger, Keras' global dtype policy (--mixed_precision), and the filter of
    TensorFlow's notices that it puts on file descriptor 2, stopped once it has passed on what reached it."""
    name, function = SCRIPTS[program].split(":")
    return _run_in_process(name, lambda module: getattr(module, function)(), program, arguments)


def run_script(script, *arguments):
    """The exit status of `python scripts/<script>.py arguments...` run in this process, as `run_command` runs a
    command: its `main` through `electra_tf.cli.run`, what its `__main__` block does."""
    from electra_tf import cli

    return _run_in_process(f"scripts.{script}", lambda module: cli.run(module.main), f"scripts/{script}.py", arguments)


def _run_in_process(name, start, program, arguments):
    """`start(module)` with module `name` imported alone (`program_module`) and `sys.argv` `[program, *arguments]`."""
    argv, filters, policy = sys.argv, list(absl_logging.get_absl_logger().filters), keras.config.dtype_policy()
    log_handler = absl_logging.get_absl_handler().python_handler
    log_stream = log_handler.stream
    with program_module(name) as module, warnings_as_a_command_shows_them():
        sys.argv = [program, *arguments]
        flags.FLAGS.unparse_flags()
        try:
            # absl writes to the stderr of the time it was imported (pytest's, when a test imported it): the
            # command's is now.
            log_handler.setStream(sys.stderr)
            start(module)
            return 0
        except SystemExit as ended:
            return ended.code or 0
        finally:
            sys.argv = argv
            flags.FLAGS.unparse_flags()
            for added in absl_logging.get_absl_logger().filters[len(filters) :]:
                absl_logging.get_absl_logger().removeFilter(added)
            keras.config.set_dtype_policy(policy)
            native_logs.stop_filter()
            log_handler.setStream(log_stream)
