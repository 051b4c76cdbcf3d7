import gzip

import pytest

from data_prep import corpus as corpus_lib
from electra_tf import text_files
from electra_tf.errors import DataError


def _naive_documents(paths, encoding="utf-8", errors="strict"):
    """The reference reading: line by line, strip, blank lines end documents, so does the end of a file."""
    for path in paths:
        document = []
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode(encoding, errors).strip()
                if line:
                    document.append(line)
                elif document:
                    yield document
                    document = []
        if document:
            yield document


def test_parse_corpus_expands_comma_separated_globs_in_order(tmp_path):
    for name in ("b.txt", "a.txt", "c.log"):
        (tmp_path / name).write_text("x\n")
    spec = corpus_lib.parse_corpus(f"{tmp_path}/*.txt , {tmp_path}/c.log")
    assert spec.files == (str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), str(tmp_path / "c.log"))
    assert spec.tfds_name is None
    assert corpus_lib.parse_corpus("tfds:wikipedia/20230601.en") == corpus_lib.CorpusSpec((), "wikipedia/20230601.en")


@pytest.mark.parametrize(
    "value, message",
    [
        ("", "no corpus given: pass corpus="),
        ("{tmp}/missing-*.txt", "^corpus entry {tmp}/missing-\\*.txt matches no file"),
        ("{tmp}", "is a directory; pass a glob"),
        ("tfds:", "lacks a dataset name"),
    ],
)
def test_parse_corpus_errors_name_the_argument(tmp_path, value, message):
    with pytest.raises(DataError, match=message.format(tmp=tmp_path)):
        corpus_lib.parse_corpus(value.format(tmp=tmp_path))


def test_blank_lines_separate_documents_and_files_end_them(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"  One.\r\nTwo.\r\n\r\n \t \nThree.\n\n\n\nFour.")
    (tmp_path / "b.txt").write_bytes(b"Five.\n\xe3\x80\x80\nSix.\n")  # an ideographic space alone is a blank line
    files = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    documents = list(corpus_lib.iter_file_documents(files))
    assert documents == [["One.", "Two."], ["Three."], ["Four."], ["Five."], ["Six."]]
    assert list(corpus_lib.iter_file_documents(files, document_mode="file")) == [
        ["One.", "Two.", "Three.", "Four."],
        ["Five.", "Six."],
    ]


def test_chunked_reading_equals_line_by_line_reading(tmp_path, monkeypatch):
    text = "\n\n".join("\n".join(f"line {d}.{i} é" for i in range(d % 4 + 1)) for d in range(60))
    path = tmp_path / "c.txt"
    path.write_text(" \n" + text.replace("\n\n", "\n \t\n\n", 5) + "\n\u3000\n", encoding="utf-8")
    expected = list(_naive_documents([str(path)]))
    for chunk_bytes in (1, 2, 3, 7, 64, 1 << 20):
        monkeypatch.setattr(text_files, "_CHUNK_BYTES", chunk_bytes)
        assert list(corpus_lib.iter_file_documents([str(path)])) == expected


def test_gzip_files_are_read_transparently(tmp_path):
    with gzip.open(tmp_path / "a.txt.gz", "wt", encoding="utf-8") as f:
        f.write("Über.\nZwei.\n\nDrei.\n")
    assert list(corpus_lib.iter_file_documents([str(tmp_path / "a.txt.gz")])) == [["Über.", "Zwei."], ["Drei."]]


def test_non_utf8_file_names_file_line_and_arguments(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"fine\nstill fine\nC\xe6sar\n")
    with pytest.raises(
        DataError,
        match=rf"{path} line 3 is not valid utf-8 \(byte 0xe6 at column 2\); "
        r"pass input_encoding=latin-1.* or encoding_errors=replace",
    ):
        list(corpus_lib.iter_file_documents([str(path)]))
    assert list(corpus_lib.iter_file_documents([str(path)], encoding="latin-1")) == [["fine", "still fine", "Cæsar"]]
    assert list(corpus_lib.iter_file_documents([str(path)], errors="replace")) == [["fine", "still fine", "C\ufffdsar"]]


def test_real_gutenberg_corpus_reads_like_line_by_line(shared_data):
    files = sorted(str(p) for p in (shared_data / "corpus" / "nltk-gutenberg").glob("*.txt"))
    assert len(files) == 14
    assert list(corpus_lib.iter_file_documents(files, errors="replace")) == list(
        _naive_documents(files, errors="replace")
    )


def test_documents_are_dealt_round_robin_to_shards(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("\n\n".join(f"doc {i}" for i in range(10)) + "\n")
    spec = corpus_lib.parse_corpus(str(path))
    dealt = [(shard, document) for shard, document, _ in corpus_lib.iter_shard_documents(spec, [1, 2], 3)]
    assert dealt == [(1, ["doc 1"]), (2, ["doc 2"]), (1, ["doc 4"]), (2, ["doc 5"]), (1, ["doc 7"]), (2, ["doc 8"])]


def test_corpus_size_counts_gzip_as_expanded(tmp_path):
    (tmp_path / "a.txt").write_text("x" * 100)
    with gzip.open(tmp_path / "b.gz", "wb") as f:
        f.write(b"y" * 1000)
    spec = corpus_lib.parse_corpus(f"{tmp_path}/a.txt,{tmp_path}/b.gz")
    gz_size = (tmp_path / "b.gz").stat().st_size
    assert corpus_lib.corpus_num_bytes(spec) == 100 + 3 * gz_size
