"""Zero-shot grammatical error detection: a discriminator's p(replaced) of each word as the score of "this word is an
error", on FCE (MultiGED 2023 token TSV: c / i per word).

The threshold (F0.5 of the error class, the measure of the error-detection literature) and a temperature (binary
temperature scaling of the word logits) are fitted on dev and reported on every split. Words FCE leaves unlabelled
(`NA`, about 1 %) are scored by the discriminator in context but neither fitted nor reported.
"""

import os

import numpy as np

from electra_studies.discriminator_analysis.word_scores import word_logits
from electra_tf.analysis import detection_metrics
from electra_tf.io_utils import atomic_write_json_lines, read_json_lines

SPLITS = ("dev", "test")
LABELS = {"c": 0, "i": 1}
TOKENS_FILE = "ged_tokens.jsonl"


def fce_path(data_dir, split):
    return os.path.join(data_dir, "ged", "fce", f"en_fce_{split}.tsv")


def read_splits(data_dir, max_sentences=None, encoding="utf-8", encoding_errors="strict"):
    """{split: tagged sentences} of FCE's dev and test files; `max_sentences` keeps the first sentences of each split
    (a slice for quick runs)."""
    from finetune.tagging.readers import read_fce

    return {
        split: read_fce(
            fce_path(data_dir, split), argument="data_dir", encoding=encoding, encoding_errors=encoding_errors
        )[:max_sentences]
        for split in SPLITS
    }


def scored_words(discriminator, tokenizer, splits, max_seq_length=128):
    """{split: list of per-word records} (`split`, `sentence_id`, `word_index`, `word`, `label`, `logit`) of the
    labelled words of `splits` (`read_splits`)."""
    records = {}
    for split, sentences in splits.items():
        logits = word_logits(discriminator, tokenizer, sentences, max_seq_length)
        records[split] = [
            {
                "split": split,
                "sentence_id": sentence_id,
                "word_index": index,
                "word": word,
                "label": LABELS[tag],
                "logit": float(logit),
            }
            for sentence_id, (sentence, sentence_logits) in enumerate(zip(sentences, logits))
            for index, (word, tag, logit) in enumerate(zip(sentence.words, sentence.tags, sentence_logits))
            if tag in LABELS
        ]
    return records


def calibrate(records):
    """(temperature, threshold) fitted on the dev records: the temperature minimising the log loss of the word
    logits, the threshold on (uncalibrated) p(replaced) maximising F0.5 of the error class."""
    labels, logits = _arrays(records["dev"])
    temperature = detection_metrics.fit_temperature(labels, logits)
    threshold, _, _, _ = detection_metrics.best_threshold(
        labels, detection_metrics.apply_temperature(logits, 1.0), beta=0.5
    )
    return temperature, threshold


def summary(labels, p_replaced, p_calibrated, threshold, temperature):
    """The reported measures of one split (fractions, not percentages)."""
    precision, recall, f0_5 = detection_metrics.precision_recall_fbeta(
        labels, (p_replaced >= threshold).astype(int), beta=0.5
    )
    return {
        "precision": precision,
        "recall": recall,
        "f0_5": f0_5,
        "auroc": detection_metrics.auroc(labels, p_replaced),
        "average_precision": detection_metrics.average_precision(labels, p_replaced),
        "brier": detection_metrics.brier(labels, p_replaced),
        "ece": detection_metrics.expected_calibration_error(labels, p_replaced),
        "ece_calibrated": detection_metrics.expected_calibration_error(labels, p_calibrated),
        "threshold": float(threshold),
        "temperature": float(temperature),
        "num_words": int(len(labels)),
        "error_rate": float(np.mean(labels)),
    }


def run_ged(discriminator, tokenizer, splits, output_dir, max_seq_length=128):
    """Scores FCE's `splits` (`read_splits`), writes `ged_tokens.jsonl` and the reliability diagram, returns
    {split: summary}."""
    records = scored_words(discriminator, tokenizer, splits, max_seq_length)
    temperature, threshold = calibrate(records)
    for split in SPLITS:
        for record in records[split]:
            logit = record.pop("logit")
            record["p_replaced"] = float(detection_metrics.apply_temperature(np.array([logit]), 1.0)[0])
            record["p_calibrated"] = float(detection_metrics.apply_temperature(np.array([logit]), temperature)[0])
    atomic_write_json_lines(
        os.path.join(output_dir, TOKENS_FILE), [record for split in SPLITS for record in records[split]]
    )
    results = results_from_tokens(os.path.join(output_dir, TOKENS_FILE), threshold, temperature)
    plot_reliability(os.path.join(output_dir, "ged_reliability.png"), records["test"] or records["dev"])
    return results


def results_from_tokens(path, threshold, temperature):
    """{split: summary} recomputed from a `ged_tokens.jsonl` file and the fitted threshold and temperature."""
    by_split = {}
    for record in read_json_lines(path):
        by_split.setdefault(record["split"], []).append(record)
    results = {}
    for split, records in by_split.items():
        labels = np.array([record["label"] for record in records])
        p_replaced = np.array([record["p_replaced"] for record in records])
        p_calibrated = np.array([record["p_calibrated"] for record in records])
        results[split] = summary(labels, p_replaced, p_calibrated, threshold, temperature)
    return results


def plot_reliability(path, records):
    """Reliability diagram (mean label against mean p per bin) before and after temperature scaling."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    labels = np.array([record["label"] for record in records])
    figure, axis = pyplot.subplots(figsize=(4.5, 4.5))
    axis.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    for key, name in (("p_replaced", "p(replaced)"), ("p_calibrated", "after temperature scaling")):
        bins = [b for b in detection_metrics.reliability_bins(labels, np.array([r[key] for r in records])) if b[2]]
        axis.plot([b[3] for b in bins], [b[4] for b in bins], marker="o", label=name)
    axis.set_xlabel("mean predicted probability of an error")
    axis.set_ylabel("fraction of words that are errors")
    axis.set_title(f"FCE {records[0]['split'] if records else ''}: reliability (15 bins)")
    axis.legend()
    figure.tight_layout()
    temporary = path + ".tmp.png"
    figure.savefig(temporary, dpi=100)
    pyplot.close(figure)
    os.replace(temporary, path)


def _arrays(records):
    return (np.array([record["label"] for record in records]), np.array([record["logit"] for record in records]))
