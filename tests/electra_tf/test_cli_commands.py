"""Every console command prints the library's messages in its own flags: each argument an error or notice it may give
names is written as a flag the command defines (absl's registry of the command's module), or, when the message asks
for an argument the command has no flag for, the command says so."""

import ast
import functools
import logging
import re

import pytest
from absl import flags

from electra_tf.cli import NoticeFlags, message_for_command_line
from electra_tf.errors import ElectraError
from tests.conftest import REPO_ROOT
from tests.console_commands import SCRIPTS, command_module
from tests.test_library_messages import COMMAND, FLAG, _module_strings, _text

PACKAGES = ("electra_tf", "finetune", "data_prep", "electra_studies")
# How a message asks for an argument: "pass vocab_file=<...>", "use kind=generator", "choose num_heads among ...",
# "pass labels=... or regression=True".
ASKING = r"\b(?:pass|use|load|set|give|choose)(?: that| the)? (?:\S+ or )?{name}\b"


def _path_of(module):
    """The source file of the project's `module`, or None (a name imported from a module, not a module)."""
    base = REPO_ROOT / module.replace(".", "/")
    return next((path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()), None)


@functools.cache
def _parsed(module):
    return ast.parse(_path_of(module).read_text(encoding="utf-8"))


def _imported(tree):
    """The project's modules `tree` imports, at the top or in a function (the project has no relative imports)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] in PACKAGES and _path_of(name)}


def reachable_modules(module):
    """The project's modules the command module `module` may run: those it imports, and theirs, and so on."""
    seen, pending = set(), [module]
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(_imported(_parsed(name)))
    return seen


def _names(node):
    """The argument names written out in the tuple `node`: `(*arguments, "allow_embedding_mismatch")` gives
    ("allow_embedding_mismatch",), names held by variables are the caller's."""
    if not isinstance(node, ast.Tuple):
        return ()
    return tuple(
        element.value for element in node.elts if isinstance(element, ast.Constant) and isinstance(element.value, str)
    )


def library_messages(module):
    """(where, message, arguments, is a notice) of every error raised and every absl notice logged with the
    arguments it names written out, in the library modules `module` may run."""
    for name in sorted(reachable_modules(module)):
        if "flags.DEFINE_" in _path_of(name).read_text(encoding="utf-8"):  # an entry point: it speaks flags itself
            continue
        tree = _parsed(name)
        constants = _module_strings(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            keywords = {keyword.arg: keyword.value for keyword in node.keywords}
            where, message = f"{name}:{node.lineno}", _text(node.args[0], constants)
            if _names(keywords.get("arguments")):
                yield where, message, _names(keywords["arguments"]), False
            extra = keywords.get("extra")  # absl's logging.warning(..., extra={"arguments": (...)})
            if isinstance(extra, ast.Dict):
                for key, value in zip(extra.keys, extra.values):
                    if isinstance(key, ast.Constant) and key.value == "arguments" and _names(value):
                        yield where, message, _names(value), True


def _as_the_command_prints_it(message, arguments, is_notice, flag_names, program):
    if is_notice:
        record = logging.LogRecord("absl", logging.WARNING, __file__, 1, message, (), None)
        record.arguments = arguments
        NoticeFlags(flag_names).filter(record)
        return record.getMessage()
    error = ElectraError(message, arguments=arguments)
    return message_for_command_line(error, flag_names=flag_names, program=program)


def _flags_outside_commands(message):
    commands = [match.span() for match in COMMAND.finditer(message)]
    return [
        match.group()[2:]
        for match in FLAG.finditer(message)
        if not any(start <= match.start() < end for start, end in commands)
    ]


def _unflagged(program):
    """(where, what is wrong, the command-level text) of each message `program` may print that writes an argument
    that is its flag otherwise than as that flag, names a flag it does not define, or asks for an argument it has no
    flag for without saying so."""
    with command_module(program) as module:
        defined = {flag.name for flag in flags.FLAGS.get_key_flags_for_module(module)}
        flag_names = getattr(module, "FLAG_NAMES", {})
        assert set(flag_names.values()) <= defined, f"{program}'s FLAG_NAMES name flags it does not define"
        for where, message, arguments, is_notice in library_messages(module.__name__):
            printed = _as_the_command_prints_it(message, arguments, is_notice, flag_names, program)
            said_none = re.sub(rf"{program} has no --\w+ flag", "", printed)
            foreign = [name for name in _flags_outside_commands(said_none) if name not in defined]
            if foreign:
                yield where, f"--{', --'.join(foreign)} are no flags of {program}", printed
            for name in arguments:
                flag = flag_names.get(name, name)
                if flag in defined:
                    if re.search(rf"(?<![\w./-]){re.escape(name)}=", message) and f"--{flag}=" not in printed:
                        yield where, f"writes {name}= for {program}'s --{flag}", printed
                elif re.search(ASKING.format(name=re.escape(name)), message) and (
                    is_notice or f"{program} has no --{flag} flag" not in printed
                ):
                    yield where, f"asks for {name}, which {program} has no flag for, without saying so", printed


def test_the_walk_sees_the_library_messages_of_a_command():
    messages = {
        where: (message, arguments) for where, message, arguments, _ in library_messages("electra_tf.commands.convert")
    }
    assert len(messages) > 20
    assert any("allow_embedding_mismatch" in arguments for _, arguments in messages.values())
    assert "data_prep.pipeline" not in {where.split(":")[0] for where in messages}
    notices = [where for where, _, _, is_notice in library_messages("electra_tf.commands.pretrain") if is_notice]
    assert any(where.startswith("electra_tf.training.pretraining_inputs:") for where in notices)


@pytest.mark.parametrize("program", sorted(SCRIPTS))
def test_every_argument_a_command_may_name_is_its_flag_or_said_to_be_none(program):
    assert list(_unflagged(program)) == []
