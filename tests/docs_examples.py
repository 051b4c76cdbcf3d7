"""The Python examples of the README and docs/ marked runnable (an HTML comment `<!-- runnable ... -->` on the line
before the fence, invisible on GitHub), and how the tests run them: as written, in a fresh Python, with the example
checkpoint replaced by a tiny pre-trained model."""

import re
import subprocess
import sys

EXAMPLE_PRESET = '"runs/small/pretrained"'
_BLOCK = re.compile(r"^(<!-- runnable\b[^\n]*-->\n)?```python\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


def python_blocks(page):
    """(runnable?, code) of every Python block of the Markdown file `page`, in order."""
    return [(bool(marker), code) for marker, code in _BLOCK.findall(page.read_text(encoding="utf-8"))]


def runnable_blocks(page):
    return [code for runnable, code in python_blocks(page) if runnable]


def run_example(code, preset, cwd, env=None):
    """The `subprocess.CompletedProcess` of `code` run in a fresh Python in `cwd` (with `env`, default this one's), on
    the checkpoint `preset`."""
    return subprocess.run([sys.executable, "-c", code.replace(EXAMPLE_PRESET, repr(str(preset)))], cwd=cwd,
                          capture_output=True, text=True, env=env)
