"""Readers: official 1.1/2.0 JSON (version detection, unanswerable questions) and tfds record mapping."""

import json

import pytest

from electra_tf.errors import DataError
from finetune.squad.readers import questions_from_tfds_records, read_squad_json
from tests.finetune.squad.squad_v2_data import make_v2


def test_real_dev_v1_and_derived_v2(shared_data, tmp_path):
    path = shared_data / "squad" / "dev-v1.1.json"
    data = read_squad_json(str(path))
    assert data.version == "1.1" and len(data.questions) == 10570 and len(data.contexts) == 2067
    first = data.questions[0]
    assert first.answer_text == "Denver Broncos" and len(first.gold_answers) == 3
    assert data.contexts[first.context_index][first.answer_start :].startswith("Denver Broncos")
    v2_path = tmp_path / "dev-v2.0.json"
    v2_path.write_text(json.dumps(make_v2(json.loads(path.read_text()), seed=0)))
    v2 = read_squad_json(str(v2_path))
    impossible = [q for q in v2.questions if q.is_impossible]
    assert v2.is_v2 and 0.25 < len(impossible) / len(v2.questions) < 0.4
    assert all(q.answer_text is None and q.gold_answers == () for q in impossible)
    sliced = v2.sliced(5)
    assert len(sliced.questions) == 5 and len(sliced.contexts) == 1 and sliced.questions[4].context_index == 0


def test_misplaced_answer_and_bad_files_are_data_errors(tmp_path):
    bad = {
        "version": "1.1",
        "data": [
            {
                "title": "t",
                "paragraphs": [
                    {
                        "context": "abc def",
                        "qas": [{"id": "q", "question": "?", "answers": [{"text": "def", "answer_start": 0}]}],
                    }
                ],
            }
        ],
    }
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(DataError, match="not at character 0"):
        read_squad_json(str(tmp_path / "bad.json"))
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(DataError, match="no top-level 'data'"):
        read_squad_json(str(tmp_path / "list.json"))
    with pytest.raises(DataError, match="does not exist"):
        read_squad_json(str(tmp_path / "missing.json"))


def test_tfds_records_map_to_questions():
    context = "Paris is in France."
    records = [
        {
            "id": b"a",
            "title": b"t",
            "context": context.encode(),
            "question": b"Where?",
            "answers": {"text": [b"France", b"in France"], "answer_start": [12, 9]},
        },
        {
            "id": b"b",
            "title": b"t",
            "context": context.encode(),
            "question": b"What?",
            "answers": {"text": [b"Paris"], "answer_start": [0]},
        },
    ]
    data = questions_from_tfds_records(records)
    assert data.version == "1.1" and data.contexts == [context]
    assert data.questions[0].answer_start == 12 and data.questions[0].gold_answers == ("France", "in France")
    v2 = questions_from_tfds_records([dict(records[1], is_impossible=True, answers={"text": [], "answer_start": []})])
    assert v2.version == "2.0" and v2.questions[0].is_impossible


def test_a_latin1_file_names_line_and_column_and_reads_with_its_encoding(tmp_path):
    dataset = {
        "version": "1.1",
        "data": [
            {
                "title": "t",
                "paragraphs": [
                    {
                        "context": "C\u00e6sar came.",
                        "qas": [
                            {
                                "id": "q1",
                                "question": "Who came?",
                                "answers": [{"text": "C\u00e6sar", "answer_start": 0}],
                            }
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "dev.json"
    path.write_bytes(json.dumps(dataset, ensure_ascii=False, indent=0).encode("latin-1"))
    line = path.read_bytes()[: path.read_bytes().index(b"\xe6")].count(b"\n") + 1
    with pytest.raises(
        DataError,
        match=rf"dev\.json line {line} is not valid utf-8 \(byte 0xe6 at column 14\); "
        r"pass input_encoding=latin-1",
    ):
        read_squad_json(str(path))
    data = read_squad_json(str(path), encoding="latin-1")
    assert data.contexts == ["C\u00e6sar came."] and data.questions[0].answer_text == "C\u00e6sar"
