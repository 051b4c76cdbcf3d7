"""Counting reference transcripts found verbatim in a pre-training corpus."""

import pytest

from electra_studies.rerank.overlap import normalise, reference_overlap
from electra_tf import text_files
from electra_tf.errors import DataError

CORPUS = "Chapter One.\n\nHello, World! The quick brown fox -- jumps over\nthe lazy dog's bone. Well-known facts.\n"
REFERENCES = [
    "the quick brown fox jumps over the lazy dogs bone",  # across a line break, punctuation dropped
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG'S BONE",  # the same after normalisation: counted once
    "brown fox jumps over the lazy dog",  # a prefix of "dogs": not a run of whole words
    "hello world the quick brown fox jumps",
    "fox jumps over the lazy dogs bone well known facts",  # the hyphen separates words
    "too short to count",
    "a reference of many words that is not in the corpus",
]


def test_normalise():
    assert normalise("  The lazy DOG'S well-known\tbone. ") == "the lazy dogs well known bone"


@pytest.mark.parametrize("chunk_bytes", [None, 7])  # whole file, and matches across chunk boundaries
def test_references_of_enough_words_found_per_file(tmp_path, monkeypatch, chunk_bytes):
    if chunk_bytes:
        monkeypatch.setattr(text_files, "_CHUNK_BYTES", chunk_bytes)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "corpus" / "b.txt").write_text("the quick brown fox jumps over the lazy dogs\n", encoding="utf-8")
    report = reference_overlap(REFERENCES, str(tmp_path / "corpus"), min_words=6)
    a, b = str(tmp_path / "corpus" / "a.txt"), str(tmp_path / "corpus" / "b.txt")
    assert report[a] == {
        "checked": 5,
        "found": 3,
        "fraction": 0.6,
        "examples": [
            "fox jumps over the lazy dogs bone well known facts",
            "hello world the quick brown fox jumps",
            "the quick brown fox jumps over the lazy dogs bone",
        ],
    }
    assert report[b]["found"] == 0


def test_missing_corpus(tmp_path):
    with pytest.raises(DataError, match="overlap_corpus=.*none does not exist"):
        reference_overlap(["a b"], str(tmp_path / "none"))
