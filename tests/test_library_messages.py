"""The library speaks Python: no error raised outside an entry point names a `--flag`, except inside a literal command
("rebuild it with electra-build-data --max_seq_length=128"); entry points translate the
arguments an error lists to their flags."""

import ast
import pathlib
import re

from tests.conftest import REPO_ROOT

LIBRARY_PACKAGES = ("electra_tf", "data_prep", "finetune", "electra_studies")
FLAG = re.compile(r"--\w+")
# A flag is fine right after a script (and its earlier flags): that is a command to run, written as one types it.
# A literal command: a script (`x.py`) or a console command (`electra-build-data`) followed by its flags.
COMMAND = re.compile(r"(?:\.py|\belectra-[a-z-]+)(?: --\w+(?:=\S*)?)* --\w+")


def _is_entry_point(source):
    return "flags.DEFINE_" in source


def _module_strings(tree):
    """Module-level NAME = "string" constants, so that f"{_REBUILD} --x" reads as the command it is."""
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = node.value.value
    return constants


def _text(node, constants):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(value, constants) for value in node.values)
    if isinstance(node, ast.FormattedValue):
        if isinstance(node.value, ast.Name) and node.value.id in constants:
            return constants[node.value.id]
        return "{}"
    if isinstance(node, ast.BinOp):
        return _text(node.left, constants) + _text(node.right, constants)
    return ""


def _flags_outside_commands(message):
    allowed = {match.end() for match in COMMAND.finditer(message)}
    commands = [match.span() for match in COMMAND.finditer(message)]
    return [
        match.group()
        for match in FLAG.finditer(message)
        if match.end() not in allowed and not any(start <= match.start() < end for start, end in commands)
    ]


def library_messages():
    """(file:line, message text) of every exception raised with a message in the library's modules."""
    for package in LIBRARY_PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            if _is_entry_point(source):
                continue
            tree = ast.parse(source)
            constants = _module_strings(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                    relative = pathlib.Path(path).relative_to(REPO_ROOT)
                    yield f"{relative}:{node.lineno}", _text(node.exc.args[0], constants)


def test_the_scan_sees_flags_and_commands():
    assert _flags_outside_commands("pass --vocab_file=x") == ["--vocab_file"]
    assert _flags_outside_commands("rebuild with data_prep/build.py --max_seq_length=128 --vocab_file=v") == []
    assert _flags_outside_commands("run x.py --save_models, then pass --init_checkpoint") == ["--init_checkpoint"]
    assert _flags_outside_commands("rebuild with electra-build-data --max_seq_length=128") == []
    assert _flags_outside_commands("run electra-finetune --save_models, then pass --seed") == ["--seed"]
    assert len(list(library_messages())) > 100


def test_library_errors_name_arguments_not_flags():
    offenders = [f"{where}: {message}" for where, message in library_messages() if _flags_outside_commands(message)]
    assert offenders == []
