"""Readers of tagged text: CoNLL column files, CoNLL-U, FCE's token TSV and Penn Treebank `.pos` files.

Every reader returns `TaggedSentence`s that remember their file and the line of their first word, so that later errors
(a tag never seen in training, ...) can point at the line. Files are UTF-8 (a byte-order mark is skipped) unless a
reader's `encoding` says otherwise (`encoding_errors`: Python's codecs error handler), with LF or CRLF line ends.
A reader raises `DataError` naming the file and line for a missing or empty file and for malformed lines.
"""

import dataclasses
import glob
import os
import re

from electra_tf.errors import DataError
from electra_tf.text_files import read_text

DOCSTART = "-DOCSTART-"
FCE_LABELS = ("c", "i", "NA")


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
    words: tuple
    tags: tuple
    source: str  # the file
    line: int  # 1-based line of the first word; word k is on line `line + k` in column files


def _lines(path, argument, encoding, encoding_errors):
    if not os.path.isfile(path):
        raise DataError(f"{argument}={path} does not exist", arguments=(argument,))
    return read_text(path, encoding, encoding_errors).replace("\r\n", "\n").split("\n")


def _nonempty(sentences, path, argument):
    if not sentences:
        raise DataError(
            f"{path} holds no tagged sentence: expected one word per line with its tag, a blank line between sentences",
            arguments=(argument,),
        )
    return sentences


def read_conll(
    path,
    word_column=0,
    tag_column=-1,
    separator=None,
    argument="train_file",
    encoding="utf-8",
    encoding_errors="strict",
):
    """Sentences of a CoNLL column file: one word per line, columns separated by whitespace (or `separator`), a blank
    line between sentences; `-DOCSTART-` lines (documents, as in CoNLL-2003) are skipped. Every word line must have the
    same number of columns."""
    sentences, words, tags, first_line, width = [], [], [], None, None
    for number, line in enumerate(_lines(path, argument, encoding, encoding_errors) + [""], start=1):
        columns = line.split(separator) if separator else line.split()
        if not line.strip() or columns[0] == DOCSTART:
            if words:
                sentences.append(TaggedSentence(tuple(words), tags=tuple(tags), source=path, line=first_line))
            words, tags = [], []
            continue
        if width is None:
            width = len(columns)
            for name, column in (("word_column", word_column), ("tag_column", tag_column)):
                if not -width <= column < width:
                    raise DataError(
                        f"{path} line {number} has {width} columns, so {name}={column} is out of range",
                        arguments=(name,),
                    )
        elif len(columns) != width:
            raise DataError(
                f"{path} line {number} has {len(columns)} columns where the file's first word line has "
                f"{width}: every word line needs the same columns"
            )
        if not words:
            first_line = number
        words.append(columns[word_column])
        tags.append(columns[tag_column])
    return _nonempty(sentences, path, argument)


def read_fce(path, argument="train_file", encoding="utf-8", encoding_errors="strict"):
    """FCE's token TSV (MultiGED 2023): `word<TAB>c|i|NA`, a blank line between sentences. `NA` (undocumented, on
    about 1 % of the tokens) is kept as a tag; the `ged` task neither trains on nor scores such words."""
    sentences = read_conll(
        path,
        word_column=0,
        tag_column=1,
        separator="\t",
        argument=argument,
        encoding=encoding,
        encoding_errors=encoding_errors,
    )
    for sentence in sentences:
        for offset, tag in enumerate(sentence.tags):
            if tag not in FCE_LABELS:
                raise DataError(
                    f"{path} line {sentence.line + offset}: label {tag!r} is not one of {FCE_LABELS}: c "
                    "(correct), i (incorrect) or NA (unlabelled)"
                )
    return sentences


def read_conllu(path, tag_field="upos", argument="train_file", encoding="utf-8", encoding_errors="strict"):
    """Universal Dependencies CoNLL-U: the FORM and the UPOS (or XPOS) of each word; comments, multiword-token ranges
    (`1-2`) and empty nodes (`1.1`) are skipped."""
    column = {"upos": 3, "xpos": 4}[tag_field]
    sentences, words, tags, first_line = [], [], [], None
    for number, line in enumerate(_lines(path, argument, encoding, encoding_errors) + [""], start=1):
        if not line.strip():
            if words:
                sentences.append(TaggedSentence(tuple(words), tuple(tags), path, first_line))
            words, tags = [], []
            continue
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 10:
            raise DataError(f"{path} line {number} has {len(fields)} tab-separated fields; CoNLL-U has 10")
        if "-" in fields[0] or "." in fields[0]:
            continue
        if not words:
            first_line = number
        words.append(fields[1])
        tags.append(fields[column])
    return _nonempty(sentences, path, argument)


def expand_paths(paths):
    """The files of comma-separated paths and globs, each glob sorted; a glob matching nothing stays as given (so
    that reading it reports the missing file)."""
    files = []
    for pattern in (part.strip() for part in paths.split(",") if part.strip()):
        files.extend(sorted(glob.glob(pattern)) or [pattern] if glob.has_magic(pattern) else [pattern])
    return files


_PTB_TOKEN = re.compile(r"(?P<word>(?:\\/|[^/])+)/(?P<tag>[^/\s]+)$")


def read_ptb_pos(paths, argument="train_file", encoding="utf-8", encoding_errors="strict"):
    """Penn Treebank `.pos` files (`word/TAG` tokens, `[ ... ]` base-NP brackets to ignore, `======` page breaks).
    `paths`: a list, or comma-separated paths and globs. Sentences end after a token tagged `.`, at a page break and at
    the end of a file (NLTK's reading: blank lines also fall inside sentences). `\\/` is a slash inside a word; of
    alternative tags (`NN|VB`) the first is kept."""
    if isinstance(paths, str):
        paths = expand_paths(paths)
    sentences = []
    for path in paths:
        words, tags, first_line = [], [], None

        def flush():
            if words:
                sentences.append(TaggedSentence(tuple(words), tuple(tags), path, first_line))
            words.clear()
            tags.clear()

        for number, line in enumerate(_lines(path, argument, encoding, encoding_errors), start=1):
            if line.startswith("======"):
                flush()
                continue
            for token in line.split():
                if token in ("[", "]"):
                    continue
                match = _PTB_TOKEN.match(token)
                if match is None:
                    raise DataError(f"{path} line {number}: {token!r} is not word/TAG")
                if not words:
                    first_line = number
                words.append(match.group("word").replace("\\/", "/"))
                tags.append(match.group("tag").split("|")[0])
                if tags[-1] == ".":
                    flush()
        flush()
    return _nonempty(sentences, paths[0] if paths else "<no file>", argument)


# tensorflow-datasets tagging datasets: the feature holding the words and, per task, the one holding the tags.
TFDS_TAGGING = {
    "ner": ("conll2003", "tokens", "ner"),
    "chunk": ("conll2003", "tokens", "chunks"),
    "pos": ("conll2003", "tokens", "pos"),
}


def read_tfds_tagged(task, split, data_dir=None, download=False):
    """Sentences of `split` ("train", "dev" or "test") of the tensorflow-datasets dataset for `task` (CoNLL-2003 for
    ner, chunk and pos), the tags as the dataset's ClassLabel names. Without `download` the dataset must already be
    prepared in `data_dir` (tfds's default when None)."""
    import tensorflow_datasets as tfds  # heavy; only for callers who ask for tfds

    if task not in TFDS_TAGGING:
        raise DataError(
            f"task={task} has no tensorflow-datasets source (those with one: {sorted(TFDS_TAGGING)}); "
            "pass train_file and dev_file",
            arguments=("task", "data_source"),
        )
    name, word_feature, tag_feature = TFDS_TAGGING[task]
    try:
        dataset, info = tfds.load(
            name, split=split, data_dir=data_dir, download=download, shuffle_files=False, with_info=True
        )
    except Exception as error:  # not prepared, network, disk: tfds raises several kinds; name the dataset and the fix
        raise DataError(
            f"tensorflow-datasets {name} ({split}) cannot be read ({type(error).__name__}: {error}); "
            f"run `tfds build {name}`, pass tfds_data_dir with a prepared copy or allow downloading "
            "(tfds_download=True)",
            arguments=("tfds_data_dir", "tfds_download"),
        ) from None
    tag_names = info.features[tag_feature].names
    source = f"tfds:{name}/{split}"
    sentences = []
    for number, record in enumerate(tfds.as_numpy(dataset), start=1):
        words = tuple(word.decode("utf-8") for word in record[word_feature])
        if len(words) != len(record[tag_feature]):
            raise DataError(f"{source} record {number} has {len(words)} words and {len(record[tag_feature])} tags")
        if words:
            sentences.append(
                TaggedSentence(words, tuple(tag_names[int(tag)] for tag in record[tag_feature]), source, number)
            )
    return _nonempty(sentences, source, "data_source")
