"""Reading n-best files: both formats, told apart by content, and one-line errors naming file and utterance."""

import gzip
import json

import pytest

from electra_studies.rerank.nbest import HYPORADISE, JSON_LINES, Utterance, parse_nbest, read_nbest
from electra_tf.errors import DataError


def test_json_lines_with_optional_scores_reference_and_id(tmp_path):
    path = tmp_path / "lists.jsonl"
    path.write_text(
        '{"hypotheses": ["a b", "a c"], "scores": [-1, -2.5], "reference": "a b", "id": 7}\n\n{"hypotheses": ["x"]}\n',
        encoding="utf-8",
    )
    assert read_nbest(str(path)) == (
        JSON_LINES,
        [Utterance(0, ("a b", "a c"), (-1.0, -2.5), "a b", "7"), Utterance(1, ("x",))],
    )


def test_hyporadise_arrays_with_score_or_am_score(tmp_path):
    items = [
        {"input": ["a", "b"], "output": "a", "score": [0.1, 0.2]},
        {"input": ["c"], "output": "c", "am_score": [-3], "id": "u1", "instruction": "ignored"},
        {"input": ["d", "e"], "output": "e"},
    ]
    path = tmp_path / "test.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(items, handle, indent=1)
    file_format, utterances = read_nbest(str(path), max_utterances=2)
    assert file_format == HYPORADISE
    assert utterances == [Utterance(0, ("a", "b"), (0.1, 0.2), "a"), Utterance(1, ("c",), (-3.0,), "c", "u1")]


def test_real_hyporadise_file(shared_data):
    file_format, utterances = read_nbest(str(shared_data / "asr_nbest" / "test_atis.json"))
    assert file_format == HYPORADISE and len(utterances) == 809
    assert all(len(u.hypotheses) == 5 and len(u.scores) == 5 and u.reference and u.id for u in utterances)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[{"input": ["a"], "output": "a"},\n {"input": ["b", }]',
            "f.json utterance 1 is not valid JSON (line 2 column 18: Expecting value); fix the file",
        ),
        (
            '[{"input": ["a"], "output": "a"} {"input": ["b"]}]',
            "f.json utterance 0 is not followed by ',' or ']' (line 1)",
        ),
        (
            '[{"input": "a b", "output": "a"}]',
            "f.json utterance 0: `input` must be a non-empty list of hypothesis strings; each utterance must be",
        ),
        (
            '[{"output": "a"}]',
            "f.json utterance 0: `input` must be a non-empty list of hypothesis strings and is missing",
        ),
        ('[{"input": ["a", 3], "output": "a"}]', "f.json utterance 0: `input` holds something other than strings"),
        (
            '[{"input": ["a", "b"], "output": "a", "score": [1]}]',
            "f.json utterance 0: `score` must be a list of 2 numbers, one per hypothesis",
        ),
        ('[["a", "b"]]', "f.json utterance 0: expected a JSON object, found list"),
        ("[] []", "f.json holds more than one JSON array"),
        ("[]", "f.json holds no utterance"),
        ("", "f.json is empty"),
        ("a b c\n", "f.json is neither a JSON array nor JSON lines"),
        (
            '{"hypotheses": ["a"]}\n{"hypotheses": ["a"],}\n',
            "f.json line 2 (utterance 1) is not valid JSON (column 22: Expecting property name",
        ),
        ('{"hypotheses": "a b"}\n', "f.json line 1 (utterance 0): `hypotheses` must be a non-empty list"),
        ('{"hypotheses": ["a"], "reference": 5}\n', "f.json line 1 (utterance 0): `reference` must be a string"),
        ('{"hypotheses": ["a"], "scores": [true]}\n', "`scores` must be a list of 1 numbers"),
    ],
)
def test_bad_files_give_one_line_naming_file_and_utterance(text, message):
    with pytest.raises(DataError) as raised:
        parse_nbest(text, "f.json")
    assert message in str(raised.value) and "\n" not in str(raised.value)
    assert raised.value.arguments == ("nbest",)


def test_encoding_goes_through_the_shared_decoder(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes('{"hypotheses": ["tr\u00e8s"]}\n'.encode("latin-1"))
    with pytest.raises(DataError, match="latin.jsonl line 1 is not valid utf-8 .* pass input_encoding=latin-1"):
        read_nbest(str(path))
    assert read_nbest(str(path), encoding="latin-1")[1][0].hypotheses == ("tr\u00e8s",)
