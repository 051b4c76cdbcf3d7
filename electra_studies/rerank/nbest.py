"""Reading n-best lists (TensorFlow-free, so that the command checks its input before importing it).

Two formats, told apart by the first character that is not white space:
* `[`: a JSON array of utterances as HyPoradise writes them: `input` (the hypotheses, best first), `output` (the
  reference), optional `score` or `am_score` (the recogniser's score of each hypothesis, higher is better) and `id`.
* `{`: JSON lines, one utterance per line: `hypotheses` (best first), optional `scores`, `reference` and `id`.
"""

import dataclasses
import json
import numbers

from electra_tf.errors import DataError
from electra_tf.text_files import read_text

HYPORADISE = "hyporadise"
JSON_LINES = "jsonl"
# The keys of each format: hypotheses, reference, recogniser scores (the first present is used).
KEYS = {HYPORADISE: ("input", "output", ("score", "am_score")), JSON_LINES: ("hypotheses", "reference", ("scores",))}
FORMAT_HELP = (
    "a JSON array of utterances with `input` (hypotheses) and `output` (reference), or JSON lines with "
    "`hypotheses` and optional `scores`, `reference`, `id` (docs/rerank.md)"
)


@dataclasses.dataclass(frozen=True)
class Utterance:
    """One n-best list: `hypotheses` best first, the recogniser's `scores` of them (None when the file has none),
    the `reference` transcript (None when unknown) and the file's `id` (None when it has none)."""

    index: int
    hypotheses: tuple
    scores: tuple = None
    reference: str = None
    id: str = None


def _check(condition, where, message):
    if not condition:
        raise DataError(f"{where}: {message}; each utterance must be {FORMAT_HELP}", arguments=("nbest",))


def _utterance(item, index, where, file_format):
    hypotheses_key, reference_key, score_keys = KEYS[file_format]
    _check(isinstance(item, dict), where, f"expected a JSON object, found {type(item).__name__}")
    hypotheses = item.get(hypotheses_key)
    _check(
        isinstance(hypotheses, list) and hypotheses,
        where,
        f"`{hypotheses_key}` must be a non-empty list of "
        "hypothesis strings" + ("" if hypotheses_key in item else " and is missing"),
    )
    _check(
        all(isinstance(text, str) for text in hypotheses),
        where,
        f"`{hypotheses_key}` holds something other than strings",
    )
    reference = item.get(reference_key)
    _check(reference is None or isinstance(reference, str), where, f"`{reference_key}` must be a string")
    scores = None
    for key in score_keys:
        if key in item:
            scores = item[key]
            _check(
                isinstance(scores, list)
                and len(scores) == len(hypotheses)
                and all(isinstance(value, numbers.Real) and not isinstance(value, bool) for value in scores),
                where,
                f"`{key}` must be a list of {len(hypotheses)} numbers, one per hypothesis",
            )
            break
    identifier = item.get("id")
    return Utterance(
        index,
        tuple(hypotheses),
        None if scores is None else tuple(float(value) for value in scores),
        reference,
        None if identifier is None else str(identifier),
    )


def _skip_space(text, position):
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _array_items(text, path):
    """The elements of a JSON array, parsed one at a time so that an error names its utterance."""
    decoder = json.JSONDecoder()
    items = []
    position = _skip_space(text, _skip_space(text, 0) + 1)
    if position < len(text) and text[position] == "]":
        return items, position + 1
    while True:
        try:
            item, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise DataError(
                f"{path} utterance {len(items)} is not valid JSON (line {error.lineno} column "
                f"{error.colno}: {error.msg}); fix the file or pass nbest=<a JSON array of utterances "
                "or JSON lines>",
                arguments=("nbest",),
            ) from None
        items.append(item)
        position = _skip_space(text, position)
        following = text[position : position + 1]
        if following == "]":
            return items, position + 1
        if following != ",":
            line = text.count("\n", 0, position) + 1
            raise DataError(
                f"{path} utterance {len(items) - 1} is not followed by ',' or ']' (line {line}); the file "
                "is cut or not one JSON array: fix it",
                arguments=("nbest",),
            )
        position = _skip_space(text, position + 1)


def parse_nbest(text, path):
    """(format, utterances) of the decoded contents `text` of the file `path` (named in errors)."""
    start = _skip_space(text, 0)
    first = text[start : start + 1]
    if first == "[":
        items, end = _array_items(text, path)
        if _skip_space(text, end) != len(text):
            raise DataError(
                f"{path} holds more than one JSON array (line {text.count(chr(10), 0, end) + 1}): keep "
                "one array of utterances",
                arguments=("nbest",),
            )
        utterances = [
            _utterance(item, index, f"{path} utterance {index}", HYPORADISE) for index, item in enumerate(items)
        ]
        file_format = HYPORADISE
    elif first == "{":
        utterances = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            where = f"{path} line {number} (utterance {len(utterances)})"
            try:
                item = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(
                    f"{where} is not valid JSON (column {error.colno}: {error.msg}); write one JSON object per line",
                    arguments=("nbest",),
                ) from None
            utterances.append(_utterance(item, len(utterances), where, JSON_LINES))
        file_format = JSON_LINES
    else:
        raise DataError(
            f"{path} is {'empty' if not first else 'neither a JSON array nor JSON lines'}: pass nbest={FORMAT_HELP}",
            arguments=("nbest",),
        )
    if not utterances:
        raise DataError(f"{path} holds no utterance: pass nbest={FORMAT_HELP}", arguments=("nbest",))
    return file_format, utterances


def read_nbest(path, encoding="utf-8", errors="strict", max_utterances=None):
    """(format, utterances) of the n-best file `path` (plain or gzip, decoded with `electra_tf.text_files`), the
    first `max_utterances` when given."""
    file_format, utterances = parse_nbest(read_text(path, encoding, errors), path)
    return file_format, utterances[:max_utterances]
