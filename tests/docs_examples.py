"""The Python examples of the README and docs/, and how the tests run them: as written, in a fresh Python, with the
example checkpoint replaced by a tiny pre-trained model. Every Python block runs unless an HTML comment on the line
before its fence (invisible on GitHub) says why not: `<!-- not run: <reason> -->`."""

import re
import subprocess
import sys

from tests.command_output import run_with_terminal_stderr

EXAMPLE_PRESET = '"runs/small/pretrained"'
_BLOCK = re.compile(r"^(?:<!--([^\n]*)-->\n)?```python\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)
_NOT_RUN = re.compile(r"^\s*not run:(.*)$")


def python_blocks(page):
    """(the reason it is not run, or None; code) of every Python block of the Markdown file `page`, in order."""
    blocks = []
    for comment, code in _BLOCK.findall(page.read_text(encoding="utf-8")):
        not_run = _NOT_RUN.match(comment)
        blocks.append((not_run.group(1).strip() if not_run else None, code))
    return blocks


def runnable_blocks(page):
    return [code for reason, code in python_blocks(page) if reason is None]


def run_example(code, preset, cwd, env=None, terminal=False):
    """The `subprocess.CompletedProcess` of `code` run in a fresh Python in `cwd` (with `env`, default this one's), on
    the checkpoint `preset`; with `terminal`, its stderr is a terminal, as in a user's shell."""
    args = [sys.executable, "-c", code.replace(EXAMPLE_PRESET, repr(str(preset)))]
    if terminal:
        return run_with_terminal_stderr(args, timeout=900, cwd=cwd, env=env)
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
