"""Reading text files in a chosen encoding: every reader of the project (the corpus builder, the fine-tuning readers)
decodes through `read_text_chunks` / `read_text`, so an undecodable byte is always the same one-line `DataError`
naming the file, line and column and the arguments that fix it (`input_encoding`, `encoding_errors`).

TensorFlow-free, so that entry points can check the arguments before importing it.
"""

import codecs
import gzip

from electra_tf.errors import ConfigError, DataError

ENCODING_ERRORS = ("strict", "replace", "ignore", "backslashreplace", "surrogateescape")
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK_BYTES = 8 * 1024 * 1024


def check_encoding(encoding, errors="strict"):
    """ConfigError naming input_encoding / encoding_errors when Python's codecs do not know them."""
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ConfigError(
            f"input_encoding={encoding!r} is not an encoding Python knows (e.g. utf-8, latin-1, cp1252)",
            arguments=("input_encoding",),
        ) from None
    try:
        codecs.lookup_error(errors)
    except (LookupError, TypeError):
        raise ConfigError(
            f"encoding_errors={errors!r} is not a codecs error handler; choose one of {', '.join(ENCODING_ERRORS)}",
            arguments=("encoding_errors",),
        ) from None


def is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == _GZIP_MAGIC


def _decode_error(path, encoding, error, lines_before, line_start):
    data = error.object
    line = lines_before + data[: error.start].count(b"\n") + 1
    newline = data.rfind(b"\n", 0, error.start)
    column = error.start - (newline + 1) + 1 + (line_start if newline < 0 else 0)
    bad = data[error.start : error.start + 1]
    return DataError(
        f"{path} line {line} is not valid {encoding} (byte 0x{bad.hex()} at column {column}); pass "
        "input_encoding=latin-1 (or the file's encoding) or encoding_errors=replace",
        arguments=("input_encoding", "encoding_errors"),
    )


def read_text_chunks(path, encoding="utf-8", errors="strict"):
    """Yields the decoded text of a plain or gzip file in chunks (a UTF-8 byte-order mark is skipped); DataError
    naming the file, line and column of a byte not valid in `encoding` (under errors="strict")."""
    check_encoding(encoding, errors)
    if codecs.lookup(encoding).name == "utf-8":
        encoding = "utf-8-sig"
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    lines_before = line_start = 0  # lines before the chunk, bytes of its first line held in earlier chunks
    shown = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        with (gzip.open if is_gzip(path) else open)(path, "rb") as f:
            while True:
                chunk = f.read(_CHUNK_BYTES)
                try:
                    text = decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError as error:
                    # The decoder prepends the bytes it held back from earlier chunks.
                    held = len(error.object) - len(chunk)
                    raise _decode_error(path, shown, error, lines_before, line_start - held) from None
                newlines = chunk.count(b"\n")
                line_start = len(chunk) - chunk.rfind(b"\n") - 1 if newlines else line_start + len(chunk)
                lines_before += newlines
                if text:
                    yield text
                if not chunk:
                    return
    except (OSError, EOFError) as error:  # gzip.BadGzipFile is an OSError; a cut gzip stream raises EOFError.
        raise DataError(f"cannot read {path}: {error}") from None


def read_text(path, encoding="utf-8", errors="strict"):
    """The whole decoded text of `path` (see `read_text_chunks`)."""
    return "".join(read_text_chunks(path, encoding, errors))
