"""SQuAD questions from the official JSON files (1.1 and 2.0) or from tensorflow-datasets `squad`, as one type.

Contexts are kept once per paragraph (`SquadData.contexts`) and questions point at theirs, so featurisation tokenises
each paragraph once however many questions it has.
"""

import dataclasses
import json
import os
from typing import List, Tuple

from electra_tf.errors import DataError
from electra_tf.text_files import read_text


@dataclasses.dataclass(frozen=True)
class SquadQuestion:
    """One question. `answer_start`/`answer_text` are the training answer (the first listed; None when impossible);
    `gold_answers` lists every reference answer text (empty for an unanswerable 2.0 question)."""

    qas_id: str
    question_text: str
    context_index: int
    answer_text: str = None
    answer_start: int = None  # character offset into the context
    is_impossible: bool = False
    gold_answers: Tuple[str, ...] = ()


@dataclasses.dataclass
class SquadData:
    """The questions of one file; `version` is "1.1" or "2.0" (2.0 when the file says so or has `is_impossible`)."""

    version: str
    contexts: List[str]
    questions: List[SquadQuestion]

    @property
    def is_v2(self):
        return self.version == "2.0"

    def sliced(self, max_questions):
        """The first `max_questions` questions (all when None), keeping only the contexts they use."""
        if max_questions is None or max_questions >= len(self.questions):
            return self
        questions = self.questions[:max_questions]
        used = sorted({question.context_index for question in questions})
        renumber = {old: new for new, old in enumerate(used)}
        return SquadData(
            self.version,
            [self.contexts[index] for index in used],
            [dataclasses.replace(q, context_index=renumber[q.context_index]) for q in questions],
        )


def file_version(dataset_json):
    """ "2.0" for a SQuAD 2.0 file (its `version` field or any `is_impossible` key), else "1.1"."""
    if str(dataset_json.get("version", "")).lstrip("v").startswith("2"):
        return "2.0"
    for article in dataset_json.get("data", []):
        for paragraph in article.get("paragraphs", []):
            if any("is_impossible" in qa for qa in paragraph.get("qas", [])):
                return "2.0"
    return "1.1"


def dataset_questions(dataset_json):
    """The question objects (`qas`) of a SQuAD JSON file, in file order."""
    for article in dataset_json["data"]:
        for paragraph in article["paragraphs"]:
            yield from paragraph["qas"]


def restrict_dataset_json(dataset_json, qas_ids):
    """`dataset_json` with only the questions in `qas_ids` (articles and paragraphs left empty are dropped)."""
    wanted, articles = set(qas_ids), []
    for article in dataset_json["data"]:
        paragraphs = [
            dict(paragraph, qas=[qa for qa in paragraph["qas"] if qa["id"] in wanted])
            for paragraph in article["paragraphs"]
        ]
        paragraphs = [paragraph for paragraph in paragraphs if paragraph["qas"]]
        if paragraphs:
            articles.append(dict(article, paragraphs=paragraphs))
    return dict(dataset_json, data=articles)


def evaluated_questions(dataset_json, qas_ids):
    """`dataset_json` restricted to `qas_ids` when those are its first questions and not all of them, what a run with
    max_eval_examples predicts and scores; else None (the whole file is what was evaluated)."""
    ids = [qa["id"] for qa in dataset_questions(dataset_json)]
    wanted = set(qas_ids)
    count = next((index for index, qid in enumerate(ids) if qid not in wanted), len(ids))
    if count == 0 or count == len(ids) or wanted.intersection(ids[count:]):
        return None
    return restrict_dataset_json(dataset_json, ids[:count])


def load_json(path, encoding="utf-8", encoding_errors="strict"):
    if not os.path.isfile(path):
        raise DataError(f"SQuAD file {path} does not exist: pass the official train/dev JSON (e.g. dev-v1.1.json)")
    text = read_text(path, encoding, encoding_errors)
    try:
        dataset_json = json.loads(text)
    except ValueError as error:
        raise DataError(f"SQuAD file {path} is not valid JSON ({error}); re-download it") from None
    if not isinstance(dataset_json, dict) or not isinstance(dataset_json.get("data"), list):
        raise DataError(f"SQuAD file {path} has no top-level 'data' list; is it an official SQuAD JSON file?")
    return dataset_json


def read_squad_json(path, encoding="utf-8", encoding_errors="strict"):
    """All questions of an official SQuAD 1.1 or 2.0 JSON file, in file order, as `SquadData`."""
    dataset_json = load_json(path, encoding, encoding_errors)
    version = file_version(dataset_json)
    contexts, questions = [], []
    try:
        for article in dataset_json["data"]:
            for paragraph in article["paragraphs"]:
                contexts.append(paragraph["context"])
                for qa in paragraph["qas"]:
                    questions.append(_question(qa, len(contexts) - 1, paragraph["context"]))
    except (KeyError, TypeError) as error:
        raise DataError(
            f"SQuAD file {path}: missing or malformed field {error}; is it an official SQuAD file?"
        ) from None
    if not questions:
        raise DataError(f"SQuAD file {path} has no questions")
    return SquadData(version, contexts, questions)


def _question(qa, context_index, context):
    is_impossible = bool(qa.get("is_impossible", False))
    answers = [] if is_impossible else qa["answers"]
    gold = tuple(answer["text"] for answer in answers)
    if not answers:
        return SquadQuestion(qa["id"], qa["question"], context_index, is_impossible=is_impossible, gold_answers=gold)
    first = answers[0]
    start = int(first["answer_start"])
    if context[start : start + len(first["text"])] != first["text"]:
        raise DataError(f"question {qa['id']}: answer {first['text']!r} is not at character {start} of its context")
    return SquadQuestion(
        qa["id"],
        qa["question"],
        context_index,
        answer_text=first["text"],
        answer_start=start,
        is_impossible=False,
        gold_answers=gold,
    )


def questions_from_tfds_records(records):
    """tfds `squad` records (dicts with id, context, question, answers{text, answer_start}; squad/v2.0 adds
    is_impossible) -> SquadData, "2.0" when any record has `is_impossible`.

    tfds stores every answer of a dev question; training uses the first, as with the JSON files. Records sharing a
    context string share one context entry.
    """
    contexts, context_ids, questions, version = [], {}, [], "1.1"

    def text(value):
        return value.decode("utf-8") if isinstance(value, bytes) else str(value)

    for record in records:
        context = text(record["context"])
        if context not in context_ids:
            context_ids[context] = len(contexts)
            contexts.append(context)
        answer_texts = [text(value) for value in record["answers"]["text"]]
        starts = [int(value) for value in record["answers"]["answer_start"]]
        qa = {
            "id": text(record["id"]),
            "question": text(record["question"]),
            "answers": [{"text": t, "answer_start": s} for t, s in zip(answer_texts, starts)],
        }
        if "is_impossible" in record:
            version, qa["is_impossible"] = "2.0", bool(record["is_impossible"])
        questions.append(_question(qa, context_ids[context], context))
    return SquadData(version, contexts, questions)


def read_tfds(split, data_dir=None, download=False, config="squad/v1.1"):
    """SQuAD `split` ("train" or "validation") from tensorflow-datasets (imported only when called)."""
    import tensorflow_datasets as tfds  # heavy; only for callers who ask for tfds

    builder = tfds.builder(config, data_dir=data_dir)
    if download:
        builder.download_and_prepare()
    elif not builder.is_prepared():
        raise DataError(
            f"tensorflow-datasets {config} is not prepared in {builder.data_dir}: run `tfds build "
            f"{config}` or allow downloading (tfds_download=True)",
            arguments=("tfds_download",),
        )
    dataset = builder.as_dataset(split=split, shuffle_files=False)
    return questions_from_tfds_records(tfds.as_numpy(dataset))
