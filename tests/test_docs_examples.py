"""Every Python block of docs/ runs as written (on a tiny pre-trained model in place of the example checkpoint), but
those marked `<!-- not run: <reason> -->`; the README's is run by tests/finetune/models/test_saved_models.py."""

import pytest

from tests.conftest import REPO_ROOT
from tests.docs_examples import EXAMPLE_PRESET, python_blocks, run_example, runnable_blocks

PAGES = sorted(path.relative_to(REPO_ROOT).as_posix() for path in (REPO_ROOT / "docs").rglob("*.md"))
BLOCKS = {page: runnable_blocks(REPO_ROOT / page) for page in PAGES}
EXAMPLES = [(page, index) for page in PAGES for index in range(len(BLOCKS[page]))]


def _marks(page, index):
    """Examples that fine-tune, save and export run as benchmarks (`pytest -m benchmark`), about half a minute each:
    in the suite, the README's example fine-tunes and saves as written (tests/finetune/models/test_saved_models.py),
    and the task models' exports are served in tests/finetune/models."""
    example = BLOCKS[page][index]
    return [pytest.mark.benchmark] if ".fit(" in example and ".export(" in example else []


def test_every_block_runs_but_those_marked_with_a_reason(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- runnable by a test -->\n```python\nprint(1)\n```\n\n```python\nprint(2)\n```\n\n"
        "<!-- not run: needs a download -->\n```python\nprint(3)\n```\n",
        encoding="utf-8",
    )
    assert python_blocks(page) == [(None, "print(1)\n"), (None, "print(2)\n"), ("needs a download", "print(3)\n")]
    assert runnable_blocks(page) == ["print(1)\n", "print(2)\n"]
    skipped = {page: [reason for reason, _ in python_blocks(REPO_ROOT / page) if reason is not None] for page in PAGES}
    assert all(reason for reasons in skipped.values() for reason in reasons), skipped
    assert sum(len(reasons) for reasons in skipped.values()) <= 3, skipped
    assert {"docs/finetuning.md", "docs/python_api.md", "docs/PERFORMANCE.md"} <= {page for page, _ in EXAMPLES}


@pytest.mark.parametrize(
    "page, index",
    [pytest.param(page, index, id=f"{page}[{index}]", marks=_marks(page, index)) for page, index in EXAMPLES],
)
def test_the_python_examples_of_the_docs_run_as_written(request, tmp_path, page, index):
    example = BLOCKS[page][index]
    preset = request.getfixturevalue("pretrained_tiny") if EXAMPLE_PRESET in example else None
    result = run_example(example, preset, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
