"""The shared text reader: decoding in chunks keeps the line and column of a bad byte, a UTF-8 byte-order mark is
skipped, and unknown codec names are one-line argument errors."""

import pytest

from electra_tf import text_files
from electra_tf.errors import ConfigError, DataError


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 5, 1 << 20])
def test_line_and_column_of_a_bad_byte_do_not_depend_on_chunking(tmp_path, monkeypatch, chunk_bytes):
    monkeypatch.setattr(text_files, "_CHUNK_BYTES", chunk_bytes)
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbfone\ntwo \xc3\xa9\nthree C\xe6sar\n")
    with pytest.raises(
        DataError,
        match=rf"^{path} line 3 is not valid utf-8 \(byte 0xe6 at column 8\); pass "
        r"input_encoding=latin-1 \(or the file's encoding\) or "
        r"encoding_errors=replace$",
    ):
        text_files.read_text(str(path))
    assert text_files.read_text(str(path), errors="replace") == "one\ntwo \u00e9\nthree C\ufffdsar\n"


def test_latin1_and_bom(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbfx\n")
    assert text_files.read_text(str(path)) == "x\n"
    assert text_files.read_text(str(path), "latin-1") == "\u00ef\u00bb\u00bfx\n"


def test_unknown_encoding_and_handler_name_the_argument():
    with pytest.raises(ConfigError, match=r"^input_encoding='latin-9000' is not an encoding Python knows"):
        text_files.check_encoding("latin-9000")
    with pytest.raises(
        ConfigError,
        match=r"^encoding_errors='skip' is not a codecs error handler; choose one of "
        r"strict, replace",
    ):
        text_files.check_encoding("utf-8", "skip")
