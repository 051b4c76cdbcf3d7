"""The README and docs/: every relative link and #anchor resolves, the README stays a short guide that starts with
the two make commands, and no page speaks of an issue tracker's numbers."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def prose_lines(text):
    """The lines outside fenced code blocks, with their 1-based numbers."""
    in_fence = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield number, line


def github_slug(heading):
    """GitHub's anchor for a heading: its rendered text lower-cased, every character but letters, digits, spaces,
    '-' and '_' removed, spaces turned into '-'."""
    text = LINK.sub(lambda match: match.group(1), heading)
    text = INLINE_CODE.sub(lambda match: match.group(2), text)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = "".join(char for char in text if char.isalnum() or char in " -_")
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor of a Markdown file: heading slugs, the n-th repetition of a slug suffixed -n."""
    seen = {}
    result = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def links(path):
    """(line number, target) of every Markdown link outside code blocks and code spans."""
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in LINK.finditer(INLINE_CODE.sub("", line)):
            yield number, match.group(2)


def test_slugs_follow_github_rules():
    assert github_slug("Question answering: SQuAD 1.1 and 2.0") == "question-answering-squad-11-and-20"
    assert github_slug("What `make demo` does, step by step") == "what-make-demo-does-step-by-step"
    assert github_slug("Token tagging: chunking, POS, NER, error detection") == (
        "token-tagging-chunking-pos-ner-error-detection"
    )
    assert github_slug("Models in keras-hub's shape") == "models-in-keras-hubs-shape"
    assert github_slug("snake_case and [a link](x.md)") == "snake_case-and-a-link"


def test_duplicate_headings_get_numbered_anchors(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Results\n\n```\n## Results\n```\n\n## Results\n\n## Results\n", encoding="utf-8")
    assert anchors(page) == {"title", "results", "results-1", "results-2"}


def test_pages_are_found():
    assert ROOT / "README.md" in PAGES and ROOT / "docs" / "PERFORMANCE.md" in PAGES


def broken_links(page, root):
    """One line per relative link of `page` whose file or heading does not exist."""
    broken = []
    for number, target in links(page):
        if EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(root)}:{number}: {target}"
        if not resolved.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and resolved.suffix != ".md":
            broken.append(f"{where} (anchor into a file that is not Markdown)")
        elif anchor and anchor not in anchors(resolved):
            broken.append(f"{where} (no heading with this anchor)")
    return broken


def test_broken_links_are_reported(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#a-section) [ok](#page) [web](https://example.org/x#y)\n"
        "[gone](missing.md) [bad](other.md#no-section) `[code](missing.md)`\n"
        "```\n[fenced](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "page.md:4: missing.md (no such file)",
        "page.md:4: other.md#no-section (no heading with this anchor)",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(page):
    broken = broken_links(page, ROOT)
    assert not broken, "\n".join(broken)


def test_readme_is_a_short_guide_starting_with_the_make_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    content = [line for line in lines if line.strip()]
    assert content[0].startswith("# ")
    assert FENCE.match(content[1])
    assert content[2].startswith("make demo")
    assert content[3].startswith("make test")
    assert FENCE.match(content[4])


def test_readme_python_example_is_one_short_block():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1
    assert len(blocks[0].splitlines()) <= 15


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_pages_do_not_speak_of_tracker_items(page):
    # "#12" is a tracker item; "#2026-11-29-..." is a link to a dated heading.
    pattern = re.compile(r"issue #?[0-9]|must[- ]shows?\b|the issue[']s|#[0-9]+\b(?!-)", re.IGNORECASE)
    found = [
        f"{number}: {line.strip()}"
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)
