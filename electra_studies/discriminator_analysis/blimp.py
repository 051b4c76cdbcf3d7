"""BLiMP minimal pairs (67 paradigms of a grammatical and an ungrammatical sentence): does the discriminator's
sentence score rank the grammatical one higher?

The sentence score is `electra_tf.scoring`'s: the mean over word pieces of log p(original) = log(1 - p(replaced)).
With the checkpoint's generator, each sentence also gets the generator's pseudo-log-likelihood
(`scoring.pseudo_log_likelihoods`: the sum over pieces of log p(piece | the rest), Salazar et al. 2020, who compare
BLiMP pairs by the sum as here; the two sentences of a pair mostly have the same length).
A pair counts as correct when the grammatical sentence scores strictly higher (a tie is wrong, as in BLiMP's own
evaluation of language models). `pairs_per_paradigm` keeps the first pairs of each file (BLiMP's order, so the slice
is the same everywhere).
"""

import glob
import json
import os

import numpy as np

from electra_tf.errors import DataError
from electra_tf.io_utils import atomic_write_json_lines, read_json_lines
from electra_tf.text_files import read_text

PAIRS_FILE = "blimp_pairs.jsonl"


def blimp_dir(data_dir):
    return os.path.join(data_dir, "blimp")


def read_pairs(data_dir, pairs_per_paradigm=None, encoding="utf-8", encoding_errors="strict"):
    """[(paradigm, pair_id, sentence_good, sentence_bad)] of every `<data_dir>/blimp/*.jsonl`, files in name order,
    decoded with `encoding` / `encoding_errors` (see `electra_tf.text_files`)."""
    paths = sorted(glob.glob(os.path.join(blimp_dir(data_dir), "*.jsonl")))
    if not paths:
        raise DataError(
            f"{blimp_dir(data_dir)} holds no BLiMP .jsonl file: data_dir must hold blimp/<paradigm>.jsonl",
            arguments=("data_dir",),
        )
    pairs = []
    for path in paths:
        kept = 0
        for number, line in enumerate(read_text(path, encoding, encoding_errors).split("\n"), start=1):
            if pairs_per_paradigm is not None and kept >= pairs_per_paradigm:
                break
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                pairs.append((record["UID"], str(record["pairID"]), record["sentence_good"], record["sentence_bad"]))
            except (ValueError, KeyError) as error:
                raise DataError(f"{path} line {number} is not a BLiMP pair ({type(error).__name__}: {error})") from None
            kept += 1
    return pairs


def run_blimp(discriminator, tokenizer, pairs, output_dir, max_seq_length=128, generator=None):
    """Scores the `pairs` (`read_pairs`) (and with `generator`, their pseudo-log-likelihoods), writes
    `blimp_pairs.jsonl`, returns {"accuracy", "num_pairs", "by_paradigm"} (and "accuracy_pll", "by_paradigm_pll")."""
    from electra_tf.scoring import pseudo_log_likelihoods, score_texts  # TensorFlow: imported to score

    texts = [text for _, _, good, bad in pairs for text in (good, bad)]
    columns = {
        "score": [
            result["score"] for result in score_texts(discriminator, tokenizer, texts, max_seq_length, batch_size=128)
        ]
    }
    if generator is not None:
        columns["pll"] = pseudo_log_likelihoods(generator, tokenizer, texts, max_seq_length).tolist()
    records = [
        {
            "paradigm": paradigm,
            "pair_id": pair_id,
            **{
                f"{name}_{side}": values[2 * index + offset]
                for name, values in columns.items()
                for offset, side in enumerate(("good", "bad"))
            },
        }
        for index, (paradigm, pair_id, _, _) in enumerate(pairs)
    ]
    path = os.path.join(output_dir, PAIRS_FILE)
    atomic_write_json_lines(path, records)
    return results_from_pairs(path)


def results_from_pairs(path):
    """Accuracy overall and by paradigm, recomputed from a `blimp_pairs.jsonl` file: of the discriminator's score and,
    when the file has it, of the generator's pseudo-log-likelihood (`_pll`)."""
    correct = {"": {}, "_pll": {}}
    for record in read_json_lines(path):
        for suffix, key in (("", "score"), ("_pll", "pll")):
            if f"{key}_good" in record:
                correct[suffix].setdefault(record["paradigm"], []).append(record[f"{key}_good"] > record[f"{key}_bad"])
    results = {}
    for suffix, by_paradigm in correct.items():
        if by_paradigm:
            every = [value for values in by_paradigm.values() for value in values]
            results.update(
                {
                    f"accuracy{suffix}": float(np.mean(every)),
                    f"by_paradigm{suffix}": {
                        paradigm: float(np.mean(values)) for paradigm, values in sorted(by_paradigm.items())
                    },
                }
            )
    results["num_pairs"] = sum(len(values) for values in correct[""].values())
    return results
