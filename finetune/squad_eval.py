"""Scores SQuAD predictions and prints the same JSON object as the official evaluation scripts.

    python -m finetune.squad_eval dev-v1.1.json predictions.json
    {"exact_match": 86.1, "f1": 92.3}
    python -m finetune.squad_eval dev-v2.0.json predictions.json --na_prob_file=null_odds.json
    {"exact": ..., "f1": ..., "total": ..., "HasAns_exact": ..., ..., "best_f1_thresh": ...}

The version (1.1 or 2.0) comes from the data file. `predictions.json` maps question ids to answer text ("" for no
answer), as `electra-finetune --task=squad|squadv1` writes; `null_odds.json` maps ids to a no-answer score.
Predictions of only the file's first N questions (a run with `electra-finetune --max_eval_examples=N`) are scored
against those N, as the run scored them.
"""

import json
import sys

from absl import app, flags

from electra_tf import cli  # defines --verbose; must precede the flag definitions below
from electra_tf.errors import DataError
from finetune.squad.metrics import evaluate_v1, evaluate_v2
from finetune.squad.readers import dataset_questions, evaluated_questions, file_version, load_json

flags.DEFINE_string("na_prob_file", None, "SQuAD 2.0: JSON of question id -> no-answer probability (null odds).")
flags.DEFINE_float(
    "na_prob_thresh",
    1.0,
    "SQuAD 2.0: predict no answer when the no-answer probability is above this (the official script's default, 1.0).",
)


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


def evaluate_files(data_path, predictions_path, na_prob_path=None, na_prob_threshold=1.0):
    """The official result dict for the files (v1.1 or v2.0 by the data file). Predictions of the file's first
    questions only, as a run with --max_eval_examples writes, are scored against those questions."""
    dataset_json = load_json(data_path)
    predictions = _load_mapping(predictions_path, "predictions")
    evaluated = evaluated_questions(dataset_json, predictions)
    if evaluated is not None:
        count = sum(1 for _ in dataset_questions(evaluated))
        total = sum(1 for _ in dataset_questions(dataset_json))
        print(
            f"{predictions_path} answers the first {count} of the {total} questions of {data_path} (a run with "
            f"--max_eval_examples={count}): scoring those {count}",
            file=sys.stderr,
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


def main(argv):
    if len(argv) != 3:
        raise app.UsageError(
            "usage: python -m finetune.squad_eval <data.json> <predictions.json> [--na_prob_file=<null_odds.json>]"
        )
    result = evaluate_files(argv[1], argv[2], flags.FLAGS.na_prob_file, flags.FLAGS.na_prob_thresh)
    # The official v1.1 script prints one line, the v2.0 script an indented object.
    print(json.dumps(result) if "exact_match" in result else json.dumps(result, indent=2))


if __name__ == "__main__":
    cli.run(main)
