from data_prep import demo_corpus


def test_demo_corpus_is_documents_of_paragraphs(tmp_path):
    path = tmp_path / "corpus.txt"
    num_documents, num_bytes = demo_corpus.write_demo_corpus(str(path))
    text = path.read_text(encoding="utf-8")
    documents = text.rstrip("\n").split("\n\n")
    assert len(documents) == num_documents > 100
    assert 500_000 < num_bytes == len(text.encode("utf-8")) < 5_000_000
    assert all(len(document.splitlines()) >= 2 for document in documents)
    assert all(line.strip() == line and line for document in documents for line in document.splitlines())
    assert "Abstract Base Classes" in text  # abc's module docstring: the standard library, not downloaded text


def test_deterministic_and_limited_by_max_bytes(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    _, num_bytes = demo_corpus.write_demo_corpus(str(first), max_bytes=50_000)
    demo_corpus.write_demo_corpus(str(second), max_bytes=50_000)
    assert first.read_bytes() == second.read_bytes()
    assert 50_000 <= num_bytes < 200_000


def test_docstrings_are_read_without_running_code():
    source = (
        'import os\nos.exit(1)\n"""Module doc. Long enough to count."""\n'
        'def f():\n    """First paragraph of f, long enough.\n\n    Second paragraph,\n    two lines."""\n'
    )
    assert demo_corpus.docstring_paragraphs(source) == [
        "First paragraph of f, long enough.",
        "Second paragraph, two lines.",
    ]
