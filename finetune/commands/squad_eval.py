"""Scores SQuAD predictions and prints the same JSON object as the official evaluation scripts.

    python -m finetune.commands.squad_eval dev-v1.1.json predictions.json
    {"exact_match": 86.1, "f1": 92.3}
    python -m finetune.commands.squad_eval dev-v2.0.json predictions.json --na_prob_file=null_odds.json
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
from finetune.squad_eval import evaluate_files

flags.DEFINE_string("na_prob_file", None, "SQuAD 2.0: JSON of question id -> no-answer probability (null odds).")
flags.DEFINE_float(
    "na_prob_thresh",
    1.0,
    "SQuAD 2.0: predict no answer when the no-answer probability is above this (the official script's default, 1.0).",
)


def main(argv):
    if len(argv) != 3:
        raise app.UsageError(
            "usage: python -m finetune.commands.squad_eval <data.json> <predictions.json> "
            "[--na_prob_file=<null_odds.json>]"
        )
    data_path, predictions_path = argv[1], argv[2]

    def say_first_questions(count, total):
        print(
            f"{predictions_path} answers the first {count} of the {total} questions of {data_path} (a run with "
            f"--max_eval_examples={count}): scoring those {count}",
            file=sys.stderr,
        )

    result = evaluate_files(
        data_path, predictions_path, flags.FLAGS.na_prob_file, flags.FLAGS.na_prob_thresh, say_first_questions
    )
    # The official v1.1 script prints one line, the v2.0 script an indented object.
    print(json.dumps(result) if "exact_match" in result else json.dumps(result, indent=2))


def console_main():
    """Runs the program (`python -m finetune.commands.squad_eval`)."""
    cli.run(main)


if __name__ == "__main__":
    console_main()
