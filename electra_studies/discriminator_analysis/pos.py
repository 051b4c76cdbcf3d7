"""The discriminator by part of speech, and its calibration on its own task (text its generator corrupted).

Corpora: the Penn Treebank WSJ sample (`DIR/tagging/ptb_sample/tagged/*.pos`, PTB tags) and UD English-EWT dev and
test (`DIR/tagging/ud_english_ewt/`, UPOS). Every word is scored twice at its first piece (`word_scores`): in clean
text, where any p(replaced) > 0.5 is a false positive, and, when the checkpoint has a generator, in the text corrupted
by it as in pre-training (`corruption`), where a word is "masked" when its first piece was chosen and "replaced"
when the generator's sample differs from it. Per tag: the false-positive rate, the share of the tag's words the
generator replaced, the share of its samples equal to the original, and the discriminator's AUROC on the corrupted
text, with percentile-bootstrap 95 % intervals over the tag's words.

`calibration`: the measures of the error-detection analysis (`ged.summary`) on the corrupted words, in domain for the
detector's task; threshold and temperature fitted on the even-numbered sentences of each corpus, reported on both
halves. Every word goes to `pos_words.jsonl`, from which both summaries are recomputed.
"""

import glob
import os

import numpy as np

from electra_studies.discriminator_analysis import ged
from electra_studies.discriminator_analysis.word_scores import per_sentence, window_logits
from electra_tf.analysis import detection_metrics
from electra_tf.errors import DataError
from electra_tf.io_utils import atomic_write_json_lines, read_json_lines

WORDS_FILE = "pos_words.jsonl"
EWT_SPLITS = ("dev", "test")


def corpus_paths(data_dir):
    """{corpus: files} of the POS corpora under `data_dir`."""
    tagging = os.path.join(data_dir, "tagging")
    return {
        "ptb": sorted(glob.glob(os.path.join(tagging, "ptb_sample", "tagged", "*.pos"))),
        "ewt": [os.path.join(tagging, "ud_english_ewt", f"en_ewt-ud-{split}.conllu") for split in EWT_SPLITS],
    }


def check_corpora(data_dir):
    for name, paths in corpus_paths(data_dir).items():
        missing = [path for path in paths if not os.path.isfile(path)] if paths else [name]
        if missing:
            where = (
                "tagging/ptb_sample/tagged/*.pos"
                if name == "ptb"
                else "tagging/ud_english_ewt/en_ewt-ud-{dev,test}.conllu"
            )
            raise DataError(
                f"{os.path.join(data_dir, where)}: not found ({missing[0]}); data_dir must hold the "
                "Penn Treebank sample and UD English-EWT",
                arguments=("data_dir",),
            )


def read_corpora(data_dir, encoding="utf-8", encoding_errors="strict"):
    """{corpus: tagged sentences}. Files are decoded with `encoding` / `encoding_errors` (see
    `electra_tf.text_files`)."""
    from finetune.tagging.readers import read_conllu, read_ptb_pos

    paths = corpus_paths(data_dir)
    decoding = {"encoding": encoding, "encoding_errors": encoding_errors}
    ewt = [sentence for path in paths["ewt"] for sentence in read_conllu(path, argument="data_dir", **decoding)]
    return {"ptb": read_ptb_pos(paths["ptb"], argument="data_dir", **decoding), "ewt": ewt}


def scored_words(discriminator, generator, tokenizer, corpora, max_seq_length=128, seed=0):
    """Per-word records (`corpus`, `sentence_id`, `word_index`, `word`, `tag`, `p_clean`, and with a generator
    `masked`, `replaced`, `p_corrupted`)."""
    from electra_studies.discriminator_analysis.corruption import corrupt
    from finetune.tagging.features import featurize

    records = []
    for corpus, sentences in corpora.items():
        features = featurize(sentences, tokenizer, max_seq_length, tag_ids={})
        inputs = features.inputs()
        columns = {"p_clean": per_sentence(features, detection_metrics.sigmoid(window_logits(discriminator, inputs)))}
        if generator is not None:
            corruption = corrupt(generator, inputs, seed=seed)
            corrupted = window_logits(discriminator, {**inputs, "token_ids": corruption.token_ids})
            columns.update(
                masked=per_sentence(features, corruption.chosen),
                replaced=per_sentence(features, corruption.replaced),
                p_corrupted=per_sentence(features, detection_metrics.sigmoid(corrupted)),
            )
        for sentence_id, sentence in enumerate(sentences):
            for index, (word, tag) in enumerate(zip(sentence.words, sentence.tags)):
                record = {"corpus": corpus, "sentence_id": sentence_id, "word_index": index, "word": word, "tag": tag}
                for name, values in columns.items():
                    value = values[sentence_id][index]
                    record[name] = int(value) if name in ("masked", "replaced") else float(value)
                records.append(record)
    return records


def bootstrap_ci(statistic, arrays, num_resamples, seed):
    """`detection_metrics.bootstrap_interval` as a JSON-ready [low, high], None where it is undefined."""
    low, high = detection_metrics.bootstrap_interval(statistic, arrays, num_resamples=num_resamples, seed=seed)
    return [None if np.isnan(low) else float(low), None if np.isnan(high) else float(high)]


def _auroc_or_nan(labels, p):
    return detection_metrics.auroc(labels, p) if 0 < np.sum(labels) < len(labels) else float("nan")


def tag_summary(records, num_resamples=200, seed=0, min_words=20):
    """{corpus: {tag: measures}} over the tags with at least `min_words` words, most frequent first."""
    results = {}
    for corpus in dict.fromkeys(record["corpus"] for record in records):
        by_tag = {}
        for record in records:
            if record["corpus"] == corpus:
                by_tag.setdefault(record["tag"], []).append(record)
        summary = {}
        for tag, rows in sorted(by_tag.items(), key=lambda item: (-len(item[1]), item[0])):
            if len(rows) < min_words:
                continue
            false_positive = np.array([row["p_clean"] > 0.5 for row in rows], np.float64)
            measures = {
                "words": len(rows),
                "mean_p_clean": float(np.mean([row["p_clean"] for row in rows])),
                "false_positive_rate": float(np.mean(false_positive)),
                "false_positive_rate_ci": bootstrap_ci(np.mean, [false_positive], num_resamples, seed),
            }
            if "replaced" in rows[0]:
                masked = np.array([row["masked"] for row in rows])
                replaced = np.array([row["replaced"] for row in rows], np.float64)
                p_corrupted = np.array([row["p_corrupted"] for row in rows])
                auroc = _auroc_or_nan(replaced, p_corrupted)
                equal = masked.astype(bool) & (replaced == 0)
                measures.update(
                    masked=int(masked.sum()),
                    replaced_rate=float(np.mean(replaced)),
                    replaced_rate_ci=bootstrap_ci(np.mean, [replaced], num_resamples, seed),
                    sample_equals_original=float(equal.sum() / masked.sum()) if masked.sum() else None,
                    auroc=None if np.isnan(auroc) else float(auroc),
                    auroc_ci=bootstrap_ci(detection_metrics.auroc, [replaced, p_corrupted], num_resamples, seed)
                    if auroc == auroc
                    else [None, None],
                )
            summary[tag] = measures
        results[corpus] = summary
    return results


def calibration_summary(records):
    """{corpus: {"fit": ..., "held_out": ...}}: `split_calibration` of the corrupted words (label: replaced), fitted on
    the even-numbered sentences."""
    results = {}
    for corpus in dict.fromkeys(record["corpus"] for record in records):
        rows = [record for record in records if record["corpus"] == corpus]
        results[corpus] = split_calibration(
            np.array([row["replaced"] for row in rows]),
            np.array([row["p_corrupted"] for row in rows]),
            np.array([row["sentence_id"] for row in rows]),
        )
    return results


def split_calibration(labels, p, groups):
    """{"fit": ..., "held_out": ...}: the measures of `ged.summary` on the items of even and of odd `groups`
    (sentences, windows), with the threshold (best F0.5) and temperature fitted on the even ones."""
    fit = groups % 2 == 0
    temperature = detection_metrics.fit_temperature(labels[fit], _logit(p[fit]))
    threshold = detection_metrics.best_threshold(labels[fit], p[fit], beta=0.5)[0]
    return {
        half: ged.summary(
            labels[rows],
            p[rows],
            detection_metrics.apply_temperature(_logit(p[rows]), temperature),
            threshold,
            temperature,
        )
        for half, rows in (("fit", fit), ("held_out", ~fit))
    }


def _logit(p):
    p = np.clip(np.asarray(p, np.float64), 1e-12, 1 - 1e-12)
    return np.log(p) - np.log1p(-p)


def run_pos(discriminator, generator, tokenizer, corpora, output_dir, max_seq_length=128, num_resamples=200, seed=0):
    """Scores the POS `corpora` (`read_corpora`), writes `pos_words.jsonl`, returns (pos summary, calibration summary
    or None)."""
    records = scored_words(discriminator, generator, tokenizer, corpora, max_seq_length, seed)
    path = os.path.join(output_dir, WORDS_FILE)
    atomic_write_json_lines(path, records)
    records = read_json_lines(path)
    calibration = calibration_summary(records) if generator is not None else None
    return tag_summary(records, num_resamples, seed), calibration
