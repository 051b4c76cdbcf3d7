"""The Python examples of docs/ marked runnable run as written, on a tiny pre-trained model in place of the example
checkpoint (the README's is run by tests/finetune/models/test_saved_models.py)."""

import pytest

from tests.conftest import REPO_ROOT
from tests.docs_examples import EXAMPLE_PRESET, python_blocks, run_example, runnable_blocks

PAGES = ["docs/finetuning.md", "docs/python_api.md"]
EXAMPLES = [(page, index) for page in PAGES for index in range(len(runnable_blocks(REPO_ROOT / page)))]


def test_the_marker_is_found_and_only_where_it_is_written(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- runnable: x -->\n```python\nprint(1)\n```\n\n```python\nprint(2)\n```\n", encoding="utf-8")
    assert python_blocks(page) == [(True, "print(1)\n"), (False, "print(2)\n")]
    assert {page for page, _ in EXAMPLES} == set(PAGES)


@pytest.mark.parametrize("page, index", EXAMPLES, ids=[f"{page}[{index}]" for page, index in EXAMPLES])
def test_the_runnable_examples_of_the_docs_run_as_written(pretrained_tiny, tmp_path, page, index):
    example = runnable_blocks(REPO_ROOT / page)[index]
    assert EXAMPLE_PRESET in example
    result = run_example(example, pretrained_tiny, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
