"""BLiMP minimal pairs (67 paradigms of a grammatical and an ungrammatical sentence): does the discriminator's
sentence score rank the grammatical one higher?

The sentence score is `electra_tf.scoring`'s: the mean over word pieces of log p(original) = log(1 - p(replaced)).
A pair counts as correct when the grammatical sentence scores strictly higher (a tie is wrong, as in BLiMP's own
evaluation of language models). `pairs_per_paradigm` keeps the first pairs of each file (BLiMP's order, so the slice
is the same everywhere).
"""

import glob
import json
import os

import numpy as np

from electra_tf.errors import DataError
from electra_tf.io_utils import atomic_write_text
from electra_tf.scoring import score_texts

PAIRS_FILE = "blimp_pairs.jsonl"


def blimp_dir(data_dir):
    return os.path.join(data_dir, "blimp")


def read_pairs(data_dir, pairs_per_paradigm=None):
    """[(paradigm, pair_id, sentence_good, sentence_bad)] of every `<data_dir>/blimp/*.jsonl`, files in name order."""
    paths = sorted(glob.glob(os.path.join(blimp_dir(data_dir), "*.jsonl")))
    if not paths:
        raise DataError(f"{blimp_dir(data_dir)} holds no BLiMP .jsonl file: data_dir must hold blimp/<paradigm>.jsonl",
                        arguments=("data_dir",))
    pairs = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            kept = 0
            for number, line in enumerate(handle, start=1):
                if pairs_per_paradigm is not None and kept >= pairs_per_paradigm:
                    break
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    pairs.append((record["UID"], str(record["pairID"]), record["sentence_good"],
                                  record["sentence_bad"]))
                except (ValueError, KeyError) as error:
                    raise DataError(f"{path} line {number} is not a BLiMP pair ({type(error).__name__}: {error})") \
                        from None
                kept += 1
    return pairs


def run_blimp(discriminator, tokenizer, data_dir, output_dir, max_seq_length=128, pairs_per_paradigm=None):
    """Scores the pairs, writes `blimp_pairs.jsonl`, returns {"accuracy", "num_pairs", "by_paradigm"}."""
    pairs = read_pairs(data_dir, pairs_per_paradigm)
    texts = [text for _, _, good, bad in pairs for text in (good, bad)]
    sentence_scores = [result["score"] for result in score_texts(discriminator, tokenizer, texts, max_seq_length,
                                                                 batch_size=128)]
    lines = [json.dumps({"paradigm": paradigm, "pair_id": pair_id, "score_good": sentence_scores[2 * index],
                         "score_bad": sentence_scores[2 * index + 1]})
             for index, (paradigm, pair_id, _, _) in enumerate(pairs)]
    path = os.path.join(output_dir, PAIRS_FILE)
    atomic_write_text(path, "\n".join(lines) + "\n")
    return results_from_pairs(path)


def results_from_pairs(path):
    """Accuracy overall and by paradigm, recomputed from a `blimp_pairs.jsonl` file."""
    correct = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            correct.setdefault(record["paradigm"], []).append(record["score_good"] > record["score_bad"])
    every = [value for values in correct.values() for value in values]
    return {"accuracy": float(np.mean(every)), "num_pairs": len(every),
            "by_paradigm": {paradigm: float(np.mean(values)) for paradigm, values in sorted(correct.items())}}
