"""How many reference transcripts occur verbatim in a pre-training corpus: a language model that has read a test
sentence scores it well for that reason alone.

Both sides are normalised (`normalise`: lower case, punctuation dropped, white space collapsed to single spaces); a
reference of at least `min_words` words counts as found in a corpus file when it occurs there as a run of whole
words. TensorFlow-free.
"""

import os
import re

from electra_tf.errors import DataError
from electra_tf.text_files import read_text_chunks

_APOSTROPHES = re.compile(r"['\u2019]")
_PUNCTUATION = re.compile(r"[^\w\s]|_")
EXAMPLES = 5


def normalise(text):
    """`text` lower-cased, apostrophes dropped (don't -> dont), other punctuation made a space (well-known -> well
    known), its white space collapsed to single spaces."""
    return " ".join(_PUNCTUATION.sub(" ", _APOSTROPHES.sub("", text.lower())).split())


def corpus_files(path):
    """The files to search: `path` itself, or every file under the directory `path` (sorted, hidden ones left out)."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise DataError(
            f"overlap_corpus={path} does not exist: pass a corpus file or a directory of them",
            arguments=("overlap_corpus",),
        )
    files = sorted(
        os.path.join(root, name)
        for root, directories, names in os.walk(path)
        for name in names
        if not name.startswith(".")
    )
    if not files:
        raise DataError(
            f"overlap_corpus={path} holds no file: pass a corpus file or a directory of them",
            arguments=("overlap_corpus",),
        )
    return files


def found_in_file(references, path, encoding="utf-8", errors="strict"):
    """The subset of the normalised `references` that occur in the file `path` as runs of whole words."""
    keep = max((reference.count(" ") for reference in references), default=0)  # words a match can span back
    remaining, found, words, partial = set(references), set(), [], ""
    chunks = read_text_chunks(path, encoding, errors)
    for chunk in [*chunks, " "]:  # the last, blank chunk completes the file's last word
        complete, partial = _split_last_word(partial + chunk)
        words = words[-keep:] if keep else []
        words += normalise(complete).split()
        text = f" {' '.join(words)} "
        hits = {reference for reference in remaining if f" {reference} " in text}
        found |= hits
        remaining -= hits
    return found


def _split_last_word(text):
    """(text up to its last white space, the word after it, which may go on in the next chunk)."""
    cut = max(text.rfind(space) for space in " \t\n\r") + 1
    return text[:cut], text[cut:]


def reference_overlap(references, corpus, min_words=8, encoding="utf-8", errors="strict"):
    """Per file of `corpus` (a file or directory), the references of at least `min_words` words (after
    normalisation, duplicates counted once) found in it: {file: {checked, found, fraction, examples}}."""
    checked = sorted({text for text in map(normalise, references) if len(text.split()) >= min_words})
    report = {}
    for path in corpus_files(corpus):
        found = found_in_file(checked, path, encoding, errors)
        report[path] = {
            "checked": len(checked),
            "found": len(found),
            "fraction": len(found) / len(checked) if checked else 0.0,
            "examples": sorted(found)[:EXAMPLES],
        }
    return report
