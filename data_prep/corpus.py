"""Reading pre-training text: files or globs (plain or gzip), or a tensorflow-datasets text dataset.

A corpus is given as a string: comma-separated paths or globs, or `tfds:<name>` (e.g. `tfds:wikipedia/20230601.en`,
`tfds:c4/en`). Documents are lists of non-empty, stripped lines:

* `blank_line` mode (the reference format): one sentence or paragraph per line, blank lines between documents,
  and the end of a file ends a document;
* `file` mode: each file is one document (blank lines inside it are ignored);
* a tfds dataset: each record's text feature is one document, one line per paragraph.

Documents are dealt to output shards round-robin by their index in the corpus (`shard = index % num_shards`), which
depends on neither the number of processes nor which process reads them.
"""

import collections
import glob
import os
import re

from electra_tf.errors import DataError
from electra_tf.text_files import is_gzip, read_text_chunks

TFDS_PREFIX = "tfds:"
DOCUMENT_MODES = ("blank_line", "file")
# Rough expansion of gzip-compressed text, to size the default number of shards.
_GZIP_RATIO = 3
# A blank line: a line holding only whitespace (str.strip()'s whitespace, as `\s`), between two newlines.
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")

CorpusSpec = collections.namedtuple("CorpusSpec", ["files", "tfds_name"])
CorpusSpec.__doc__ = "A parsed corpus: either `files` (sorted within each glob) or a `tfds_name`."


def parse_corpus(corpus, argument="corpus"):
    """Parses a corpus value (comma-separated files and globs, or tfds:<name>); DataError naming `argument` when it
    names nothing readable."""
    if isinstance(corpus, (list, tuple)):
        corpus = ",".join(corpus)
    corpus = (corpus or "").strip()
    if not corpus:
        raise DataError(
            f"no corpus given: pass {argument}=<text files, globs or tfds:<dataset>>", arguments=(argument,)
        )
    if corpus.startswith(TFDS_PREFIX):
        name = corpus[len(TFDS_PREFIX) :].strip()
        if not name:
            raise DataError(
                f"{argument}={corpus} lacks a dataset name, e.g. {argument}=tfds:wikipedia/20230601.en",
                arguments=(argument,),
            )
        return CorpusSpec(files=(), tfds_name=name)
    files = []
    for pattern in (p.strip() for p in corpus.split(",")):
        if not pattern:
            continue
        if os.path.isdir(pattern):
            raise DataError(
                f"{argument} entry {pattern} is a directory; pass a glob such as {pattern}/*.txt", arguments=(argument,)
            )
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        matches = [m for m in matches if os.path.isfile(m)]
        if not matches:
            raise DataError(
                f"{argument} entry {pattern} matches no file; check the path or glob", arguments=(argument,)
            )
        files.extend(matches)
    return CorpusSpec(files=tuple(files), tfds_name=None)


def corpus_num_bytes(spec):
    """Approximate uncompressed size of a file corpus (None for tfds)."""
    if spec.tfds_name:
        return None
    total = 0
    for path in spec.files:
        size = os.path.getsize(path)
        total += size * _GZIP_RATIO if is_gzip(path) else size
    return total


def iter_file_blocks(files, document_mode="blank_line", encoding="utf-8", errors="strict"):
    """Yields each document's raw text (lines not yet split or stripped), in file order.

    Lines are split on "\\n" only, so `encoding` must be ASCII-compatible (UTF-8, Latin-1, cp1252, ...); CRLF is
    fine. A block may hold only whitespace (then it is no document). Splitting whole chunks with a regular expression
    keeps per-line Python work to the documents a process actually tokenises.
    """
    if document_mode not in DOCUMENT_MODES:
        raise DataError(
            f"document_mode={document_mode} is not one of {', '.join(DOCUMENT_MODES)}", arguments=("document_mode",)
        )
    for path in files:
        if document_mode == "file":
            yield "".join(read_text_chunks(path, encoding, errors))
            continue
        carry = ""
        for chunk in read_text_chunks(path, encoding, errors):
            text = carry + chunk
            # A separator that straddles the chunk boundary starts at the carried text's last newline.
            position = 0
            for match in _BLANK_LINE.finditer(text, max(0, carry.rfind("\n"))):
                yield text[position : match.start()]
                position = match.end()
            carry = text[position:]
        yield carry


def block_lines(block):
    """A document's non-empty, stripped lines."""
    return [line for line in (raw.strip() for raw in block.split("\n")) if line]


def iter_file_documents(files, document_mode="blank_line", encoding="utf-8", errors="strict"):
    """Yields documents (lists of non-empty stripped lines) in file order."""
    for block in iter_file_blocks(files, document_mode, encoding, errors):
        document = block_lines(block)
        if document:
            yield document


def text_to_document(text):
    """A document's lines from one multi-line text (a tfds record)."""
    return [line for line in (raw.strip() for raw in text.splitlines()) if line]


def iter_shard_documents(
    spec, shard_indices, num_shards, *, document_mode="blank_line", encoding="utf-8", errors="strict", tfds_options=None
):
    """Yields (shard_index, document, num_bytes) for the documents of the given shards, in corpus order per shard.

    `num_bytes` is about the size of the document's text (0 for tfds), for progress reporting.
    """
    shard_indices = set(shard_indices)
    if spec.tfds_name:
        from data_prep import tfds_corpus  # Imported lazily: tensorflow-datasets is slow to import.

        for shard_index in sorted(shard_indices):
            for text in tfds_corpus.iter_shard_texts(spec.tfds_name, shard_index, num_shards, **(tfds_options or {})):
                document = text_to_document(text)
                if document:
                    yield shard_index, document, 0
        return
    index = 0
    for block in iter_file_blocks(spec.files, document_mode, encoding, errors):
        if block.isspace() or not block:
            continue
        shard_index = index % num_shards
        index += 1
        if shard_index in shard_indices:
            yield shard_index, block_lines(block), len(block)
