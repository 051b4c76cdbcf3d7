"""Re-ranks the n-best lists of one file with each chosen scorer and writes `utterances.jsonl` and `summary.json`
(atomically, `electra_tf.io_utils.staged_directory`).

Each distinct hypothesis text is scored once per scorer. Per scorer, the weights of the combination (`combine.py`) are
tuned on the development half and applied to every utterance; `summary.json` reports the WERs of the whole file and
of the test half, a paired bootstrap interval of (re-ranked - first) on the test half, and each scorer's cost.
"""

import os

import numpy as np

from electra_studies.rerank import combine, scorers
from electra_studies.rerank.nbest import read_nbest
from electra_studies.rerank.wer import bootstrap_wer_difference, corpus_wer, word_errors, words
from electra_tf import progress
from electra_tf.errors import CheckpointError, ConfigError
from electra_tf.io_utils import atomic_write_json, atomic_write_json_lines, staged_directory


def check_arguments(
    nbest,
    init_checkpoint,
    scorer_names=None,
    input_encoding="utf-8",
    encoding_errors="strict",
    max_utterances=None,
    overlap_corpus=None,
):
    """The checks that need neither a model nor TensorFlow; returns (format, utterances) of `nbest`."""
    from electra_studies.rerank.overlap import corpus_files
    from electra_tf import preflight
    from electra_tf.text_files import check_encoding

    unknown = [name for name in scorer_names or () if name not in scorers.SCORERS]
    if unknown:
        raise ConfigError(
            f"scorers={','.join(unknown)}: unknown (available: {', '.join(scorers.SCORERS)})", arguments=("scorers",)
        )
    if max_utterances is not None and max_utterances < 1:
        raise ConfigError(f"max_utterances={max_utterances} must be at least 1", arguments=("max_utterances",))
    check_encoding(input_encoding, encoding_errors)
    preflight.require_checkpoint(init_checkpoint, "init_checkpoint")
    preflight.require_file(nbest, "nbest")
    if overlap_corpus:
        corpus_files(overlap_corpus)
    return read_nbest(nbest, input_encoding, encoding_errors, max_utterances)


def distinct_texts(utterances):
    """The hypothesis texts of `utterances`, each once, in order of first appearance."""
    return list(dict.fromkeys(text for utterance in utterances for text in utterance.hypotheses))


def load_models(init_checkpoint, scorer_names, allow_embedding_mismatch=False):
    """({model name: (model, tokenizer)}, chosen scorers, {scorer: why skipped}). `scorer_names` None: every scorer
    whose model the checkpoint holds, the others skipped (none at all: the first model's error); a named scorer that
    cannot load is an error. `allow_embedding_mismatch` as in `scorers.load_model`."""
    names = list(scorers.SCORERS) if scorer_names is None else list(dict.fromkeys(scorer_names))
    models, skipped, failures, loaded_kinds = {}, {}, [], {}
    for model_name in dict.fromkeys(scorers.SCORERS[name].model for name in names):
        needing = [name for name in names if scorers.SCORERS[name].model == model_name]
        try:
            models[model_name] = scorers.load_model(model_name, init_checkpoint, loaded_kinds, allow_embedding_mismatch)
        except CheckpointError as error:
            if scorer_names is not None:
                raise CheckpointError(
                    f"scorers={','.join(needing)} needs the checkpoint's {model_name}: {error}",
                    arguments=("scorers", "init_checkpoint"),
                ) from None
            skipped.update({name: str(error) for name in needing})
            failures.append(error)
    if not models:  # nothing to score with: the checkpoint itself is at fault
        raise (
            failures[0]
            if failures
            else ConfigError(
                "no scorer can run here: " + "; ".join(f"{name}: {reason}" for name, reason in skipped.items()),
                arguments=("scorers",),
            )
        )
    return models, [name for name in names if name not in skipped], skipped


def _evaluation(utterances):
    """Padded tables of the recogniser's evidence, words and errors per hypothesis, and reference words."""
    errors, reference_words = [], []
    for utterance in utterances:
        if utterance.reference is None:  # counts for nothing in a WER
            errors.append([0] * len(utterance.hypotheses))
            reference_words.append(0)
            continue
        counted = [word_errors(utterance.reference, text) for text in utterance.hypotheses]
        errors.append([count for count, _ in counted])
        reference_words.append(counted[0][1])
    return (
        combine.padded(combine.recogniser_evidence(utterances), -np.inf),
        combine.padded([[len(words(text)) for text in utterance.hypotheses] for utterance in utterances], 0.0),
        combine.padded(errors, 0.0),
        np.array(reference_words, np.float64),
    )


def _weights(lm_scores, evidence, lengths, errors, reference_words, has_reference, lm_weight, length_weight):
    development = combine.development_half(len(reference_words))
    lm_weights = combine.LM_WEIGHTS if lm_weight is None else (lm_weight,)
    length_weights = combine.LENGTH_WEIGHTS if length_weight is None else (length_weight,)
    if not has_reference[development].any() and len(lm_weights) * len(length_weights) > 1:
        raise ConfigError(
            "no utterance of the development half (even positions) has a reference to tune the "
            "weights on: pass lm_weight= and length_weight= to re-rank with fixed weights",
            arguments=("lm_weight", "length_weight"),
        )
    chosen_lm, chosen_length, wer = combine.tune(
        lm_scores[development],
        evidence[development],
        lengths[development],
        errors[development],
        reference_words[development],
        lm_weights,
        length_weights,
    )
    return {"lm_weight": chosen_lm, "length_weight": chosen_length, "wer_development": wer}


def rerank(utterances, texts, scores, lm_weight=None, length_weight=None, bootstrap_resamples=1000, seed=0):
    """(records, summary fields) of re-ranking `utterances` with `scores` ({scorer: float per text of `texts`})."""
    evidence, lengths, errors, reference_words = _evaluation(utterances)
    count = len(utterances)
    position = {text: index for index, text in enumerate(texts)}
    rows, test = np.arange(count), combine.test_half(count)
    has_reference = np.array([utterance.reference is not None for utterance in utterances])
    referenced = test[has_reference[test]]  # the bootstrap's utterances
    first = errors[:, 0]
    oracle = np.array([min(errors[row, : len(utterance.hypotheses)]) for row, utterance in enumerate(utterances)])
    summary = {
        "utterances": count,
        "utterances_development": len(combine.development_half(count)),
        "utterances_test": len(test),
        "utterances_with_reference": int(has_reference.sum()),
        "wer_first": corpus_wer(first, reference_words),
        "wer_oracle": corpus_wer(oracle, reference_words),
        "wer_first_test": corpus_wer(first[test], reference_words[test]),
        "wer_oracle_test": corpus_wer(oracle[test], reference_words[test]),
        "wer_reranked": {},
        "wer_reranked_test": {},
        "wer_scorer_alone": {},
        "wer_scorer_alone_test": {},
        "weights": {},
        "bootstrap_test": {},
    }
    # The scorer's own choice, without the recogniser: how far it is from a re-ranker on its own.
    no_evidence = np.where(np.isfinite(evidence), 0.0, -np.inf)
    # The recogniser with the length term alone (lm_weight 0, length_weight tuned the same way): what the scorers add
    # is measured against this.
    no_scores = np.zeros_like(lengths)
    summary["weights_length_only"] = _weights(
        no_scores, evidence, lengths, errors, reference_words, has_reference, 0.0, length_weight
    )
    length_only = errors[
        rows, combine.choose(no_scores, evidence, lengths, 0.0, summary["weights_length_only"]["length_weight"])
    ]
    summary["wer_length_only"] = corpus_wer(length_only, reference_words)
    summary["wer_length_only_test"] = corpus_wer(length_only[test], reference_words[test])
    summary["bootstrap_test_vs_length_only"] = {}
    raw, chosen = {}, {}
    for name, values in scores.items():
        raw[name] = [[float(values[position[text]]) for text in utterance.hypotheses] for utterance in utterances]
        lm_scores = combine.padded(raw[name], 0.0)
        weights = _weights(
            lm_scores, evidence, lengths, errors, reference_words, has_reference, lm_weight, length_weight
        )
        chosen[name] = combine.choose(lm_scores, evidence, lengths, weights["lm_weight"], weights["length_weight"])
        picked = errors[rows, chosen[name]]
        summary["weights"][name] = weights
        summary["wer_reranked"][name] = corpus_wer(picked, reference_words)
        summary["wer_reranked_test"][name] = corpus_wer(picked[test], reference_words[test])
        alone = errors[rows, combine.choose(lm_scores, no_evidence, lengths, 1.0, 0.0)]
        summary["wer_scorer_alone"][name] = corpus_wer(alone, reference_words)
        summary["wer_scorer_alone_test"][name] = corpus_wer(alone[test], reference_words[test])
        summary["bootstrap_test"][name] = bootstrap_wer_difference(
            picked[referenced], first[referenced], reference_words[referenced], bootstrap_resamples, seed
        )
        summary["bootstrap_test_vs_length_only"][name] = bootstrap_wer_difference(
            picked[referenced], length_only[referenced], reference_words[referenced], bootstrap_resamples, seed
        )
    records = [
        {
            "index": utterance.index,
            **({} if utterance.id is None else {"id": utterance.id}),
            "split": "development" if utterance.index % 2 == 0 else "test",
            "hypotheses": list(utterance.hypotheses),
            "recogniser_scores": None if utterance.scores is None else list(utterance.scores),
            "reference": utterance.reference,
            "scores": {name: raw[name][row] for name in scores},
            "chosen": {name: int(chosen[name][row]) for name in scores},
        }
        for row, utterance in enumerate(utterances)
    ]
    return records, summary


def run_rerank(
    nbest,
    init_checkpoint,
    output_dir,
    scorer_names=None,
    max_seq_length=128,
    batch_size=64,
    input_encoding="utf-8",
    encoding_errors="strict",
    max_utterances=None,
    lm_weight=None,
    length_weight=None,
    bootstrap_resamples=1000,
    seed=0,
    overlap_corpus=None,
    overlap_min_words=8,
    command=None,
    allow_embedding_mismatch=False,
):
    """Re-ranks the n-best file `nbest` with the scorers `scorer_names` (None: every one `init_checkpoint` provides)
    and writes `output_dir/utterances.jsonl` and `summary.json`; returns the summary. `lm_weight` / `length_weight`
    fix a weight instead of tuning it; `overlap_corpus` adds the count of references found in that corpus;
    `allow_embedding_mismatch` reads an HF discriminator/ + generator/ pair whose embedding copies differ, keeping the
    discriminator's."""
    file_format, utterances = check_arguments(
        nbest, init_checkpoint, scorer_names, input_encoding, encoding_errors, max_utterances, overlap_corpus
    )
    overlap = None
    if overlap_corpus:  # before any model loads: an unreadable corpus stops the command at once
        from electra_studies.rerank.overlap import reference_overlap

        overlap = {
            "corpus": overlap_corpus,
            "min_words": overlap_min_words,
            "files": reference_overlap(
                [utterance.reference for utterance in utterances if utterance.reference],
                overlap_corpus,
                overlap_min_words,
                input_encoding,
                encoding_errors,
            ),
        }
    with progress.step(f"loading {init_checkpoint}"):
        models, names, skipped = load_models(init_checkpoint, scorer_names, allow_embedding_mismatch)
    texts = distinct_texts(utterances)
    scores, cost = {}, {}
    for model_name, (model, tokenizer) in models.items():
        with progress.step(f"{model_name} scores of {len(texts)} distinct hypotheses"):
            values, model_cost = scorers.score(model_name, model, tokenizer, texts, max_seq_length, batch_size)
        shared = [name for name in names if name in values]
        for name in shared:
            scores[name] = values[name]
            cost[name] = {
                **model_cost,
                **({"shared_with": [n for n in shared if n != name]} if len(shared) > 1 else {}),
            }
    records, summary = rerank(
        utterances, texts, {name: scores[name] for name in names}, lm_weight, length_weight, bootstrap_resamples, seed
    )
    evidence = sorted({"negated_rank" if utterance.scores is None else "file_scores" for utterance in utterances})
    summary.update(
        {
            "nbest": nbest,
            "format": file_format,
            "init_checkpoint": init_checkpoint,
            "scorers": names,
            "skipped": skipped,
            "cost": cost,
            "distinct_hypotheses": len(texts),
            "recogniser_evidence": evidence,
            "max_seq_length": max_seq_length,
            "command": command,
        }
    )
    if overlap is not None:
        summary["overlap"] = overlap
    with staged_directory(output_dir) as staging:
        atomic_write_json_lines(os.path.join(staging, "utterances.jsonl"), records)
        atomic_write_json(os.path.join(staging, "summary.json"), summary)
    return summary
