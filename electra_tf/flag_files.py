"""The flag files that ship with the package, and how `--flagfile=configs/<name>.flags` finds them from any directory.

`configs/*.flags` hold the paper's pre-training presets and the reference's GLUE and SQuAD fine-tuning settings. In a
checkout they are `configs/` beside the packages; `pip install .` installs the same files as package data
(`electra_tf/configs`, a link to the checkout's directory). absl reads a `--flagfile` path from the current directory;
`cli.run` first rewrites a `configs/<name>.flags` that is not there to the installed copy, so that the documented
commands run as written both from the checkout and from any other directory.
"""

import os
from importlib import resources

from electra_tf.errors import ConfigError

SHIPPED_DIR = "configs"
_FLAGFILE = ("--flagfile", "-flagfile")


def shipped_flag_files():
    """{`configs/<name>.flags`: its installed path} of every shipped flag file."""
    shipped = resources.files("electra_tf") / SHIPPED_DIR
    return {
        f"{SHIPPED_DIR}/{entry.name}": str(entry)
        for entry in sorted(shipped.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".flags")
    }


def resolve_flagfile(path):
    """`path` itself when it names a file from the current directory, else the shipped flag file it names
    (`configs/small.flags`); a `ConfigError` when it is neither."""
    if os.path.isfile(os.path.expanduser(path)):  # absl expands ~ itself
        return path
    shipped = shipped_flag_files()
    name = os.path.normpath(path).replace(os.sep, "/")
    if name in shipped:
        return shipped[name]
    names = ",".join(name.removeprefix(f"{SHIPPED_DIR}/").removesuffix(".flags") for name in shipped)
    raise ConfigError(
        f"flag file {path} does not exist (from {os.getcwd()}) and is none of the shipped flag files "
        f"{SHIPPED_DIR}/{{{names}}}.flags: pass an existing file or one of those"
    )


def resolve_flagfile_arguments(args):
    """`args` (a command line without the program) with each `--flagfile=PATH` (or `--flagfile PATH`) resolved by
    `resolve_flagfile`."""
    resolved, args = [], list(args)
    while args:
        arg = args.pop(0)
        if arg == "--":  # what follows is positional arguments
            return resolved + [arg] + args
        name, equals, value = arg.partition("=")
        if name in _FLAGFILE and equals:
            arg = f"{name}={resolve_flagfile(value)}"
        elif arg in _FLAGFILE and args:
            resolved.append(arg)
            arg = resolve_flagfile(args.pop(0))
        resolved.append(arg)
    return resolved
