"""SQuAD predictions scored as the official evaluation scripts score them (`python -m finetune.commands.squad_eval`
prints the result): the version (1.1 or 2.0) comes from the data file; predictions of only the file's first N
questions (a run with `max_eval_examples=N`) are scored against those N, as the run scored them."""

import json

from electra_tf.errors import DataError
from finetune.squad.metrics import evaluate_v1, evaluate_v2
from finetune.squad.readers import dataset_questions, evaluated_questions, file_version, load_json


def _load_mapping(path, what):
    try:
        with open(path, encoding="utf-8") as handle:
            values = json.load(handle)
    except FileNotFoundError:
        raise DataError(f"{what} file {path} does not exist") from None
    except ValueError as error:
        raise DataError(f"{what} file {path} is not valid JSON ({error})") from None
    if not isinstance(values, dict):
        raise DataError(f"{what} file {path} must hold one JSON object of question id -> value")
    return values


def evaluate_files(data_path, predictions_path, na_prob_path=None, na_prob_threshold=1.0, on_first_questions=None):
    """The official result dict for the files (v1.1 or v2.0 by the data file). Predictions of the file's first
    questions only, as a run with max_eval_examples writes, are scored against those questions, and
    `on_first_questions(count, total)` (when given) hears how many of the file's questions that is."""
    dataset_json = load_json(data_path)
    predictions = _load_mapping(predictions_path, "predictions")
    evaluated = evaluated_questions(dataset_json, predictions)
    if evaluated is not None:
        if on_first_questions is not None:
            on_first_questions(
                sum(1 for _ in dataset_questions(evaluated)), sum(1 for _ in dataset_questions(dataset_json))
            )
        dataset_json = evaluated
    if file_version(dataset_json) == "1.1":
        return evaluate_v1(dataset_json, predictions)
    na_probs = _load_mapping(na_prob_path, "null odds") if na_prob_path else None
    if na_probs is not None:
        missing = [qid for qid in predictions if qid not in na_probs]
        if missing:
            raise DataError(
                f"null odds file {na_prob_path} lacks {len(missing)} predicted questions, e.g. "
                f"{missing[0]}; pass the null_odds.json written with {predictions_path}"
            )
    return evaluate_v2(dataset_json, predictions, na_probs, na_prob_threshold)
