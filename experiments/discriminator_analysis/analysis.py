"""Runs the chosen analyses of one discriminator and writes `results.json` and `report.md` (atomically).

Built so far: `ged` (zero-shot grammatical error detection on FCE, `ged.py`), `pos` (the discriminator and the
generator by part of speech, `pos.py`), `calibration` (the detector's own task on generator-corrupted text: the POS
corpora, `pos.py`, and held-out pre-training shards, `heldout.py`) and `blimp` (minimal pairs, `blimp.py`). The
representation comparison with an MLM twin is not built yet; asking for it is an error rather than a silent skip.
"""

import os

from electra_tf.errors import ConfigError, DataError
from electra_tf.io_utils import atomic_write_json, atomic_write_text

ANALYSES = ("ged", "calibration", "pos", "blimp")
PLANNED = ("representations",)
# Analyses that corrupt text with the checkpoint's generator: `calibration` needs one, `pos` reports more with one.
NEEDS_GENERATOR = ("calibration",)


def check_analyses(analyses):
    unknown = [name for name in analyses if name not in ANALYSES]
    if unknown:
        planned = [name for name in unknown if name in PLANNED]
        detail = f"; {', '.join(planned)} not built yet" if planned else ""
        raise ConfigError(f"analyses={','.join(unknown)}: unknown (available: {', '.join(ANALYSES)}){detail}",
                          arguments=("analyses",))


def check_data(analyses, data_dir):
    from experiments.discriminator_analysis.blimp import blimp_dir
    from experiments.discriminator_analysis.ged import SPLITS, fce_path

    needed = [fce_path(data_dir, split) for split in SPLITS] if "ged" in analyses else []
    missing = [path for path in needed if not os.path.isfile(path)]
    if missing:
        raise DataError(f"{missing[0]} does not exist: data_dir must hold ged/fce/en_fce_{{dev,test}}.tsv "
                        "(MultiGED 2023 FCE token TSV)", arguments=("data_dir",))
    if "pos" in analyses or "calibration" in analyses:
        from experiments.discriminator_analysis.pos import check_corpora

        check_corpora(data_dir)
    if "blimp" in analyses and not os.path.isdir(blimp_dir(data_dir)):
        raise DataError(f"{blimp_dir(data_dir)} does not exist: data_dir must hold blimp/<paradigm>.jsonl (BLiMP's "
                        "data/ directory)", arguments=("data_dir",))


def load_generator(init_checkpoint):
    """The generator stored with the discriminator at `init_checkpoint` (a pre-training run directory, a Hugging Face
    discriminator/ + generator/ pair, the reference's TF1 checkpoints), or None when it holds a discriminator only."""
    from electra_tf.checkpoints import conversion
    from electra_tf.errors import CheckpointError

    try:
        return conversion.load_model(init_checkpoint, kind="generator").model
    except CheckpointError:
        return None


def run_analyses(init_checkpoint, data_dir, output_dir, analyses=None, max_seq_length=128, max_sentences=None,
                 blimp_pairs_per_paradigm=None, bootstrap_resamples=200, seed=0, heldout_tfrecords=None,
                 max_heldout_windows=1024, command=None):
    """Loads the discriminator at `init_checkpoint` (any format `finetune.checkpoints` reads), and its generator
    where the checkpoint holds one, runs `analyses`, writes `output_dir/results.json` and `report.md`, and returns the
    results. `heldout_tfrecords` (held-out pre-training shards) adds the in-domain part of `calibration`
    (`heldout.py`, up to `max_heldout_windows` records). `analyses` None: every analysis the checkpoint allows (those
    needing a generator are skipped, and listed under "skipped", when it holds none); named ones that cannot run are
    an error."""
    from electra_tf.tokenizer import ElectraTokenizer
    from experiments.discriminator_analysis import blimp, ged, heldout, pos
    from finetune.checkpoints import load_discriminator

    chosen = analyses is not None
    analyses = list(ANALYSES if analyses is None else analyses)
    check_analyses(analyses)
    check_data(analyses, data_dir)
    pretrained = load_discriminator(init_checkpoint)
    generator = load_generator(init_checkpoint) if {"pos", "calibration"} & set(analyses) else None
    needing = [name for name in analyses if name in NEEDS_GENERATOR]
    skipped = {}
    if needing and generator is None and not chosen:
        skipped = {name: f"{init_checkpoint} holds no generator" for name in needing}
        analyses = [name for name in analyses if name not in needing]
    elif needing and generator is None:
        raise ConfigError(f"analyses={','.join(needing)} needs the checkpoint's generator, and {init_checkpoint} holds "
                          "a discriminator only: pass a pre-training run directory, a Hugging Face discriminator/ + "
                          "generator/ pair or the reference's TF1 checkpoint",
                          arguments=("analyses", "init_checkpoint"))
    if heldout_tfrecords and "calibration" not in analyses:
        raise ConfigError("heldout_tfrecords is read by the calibration analysis, which does not run here "
                          f"({'; '.join(skipped.values()) or 'analyses=' + ','.join(analyses)})",
                          arguments=("heldout_tfrecords", "analyses"))
    if not pretrained.vocab_file:
        raise DataError(f"{init_checkpoint} holds no vocabulary (vocab.txt): the analyses tokenise text as the "
                        "discriminator was trained", arguments=("init_checkpoint",))
    tokenizer = ElectraTokenizer.from_settings(pretrained.vocab_file, pretrained.tokenizer_settings)
    os.makedirs(output_dir, exist_ok=True)
    results = {"init_checkpoint": init_checkpoint, "checkpoint_format": pretrained.format,
               "max_seq_length": max_seq_length, "max_sentences": max_sentences,
               "blimp_pairs_per_paradigm": blimp_pairs_per_paradigm, "bootstrap_resamples": bootstrap_resamples,
               "seed": seed, "has_generator": generator is not None, "analyses": analyses, "skipped": skipped,
               "command": command}
    if "ged" in analyses:
        results["ged"] = ged.run_ged(pretrained.model, tokenizer, data_dir, output_dir, max_seq_length,
                                     max_sentences)
    if {"pos", "calibration"} & set(analyses):
        by_tag, calibration = pos.run_pos(pretrained.model, generator, tokenizer, data_dir, output_dir, max_seq_length,
                                          max_sentences, bootstrap_resamples, seed)
        if "pos" in analyses:
            results["pos"] = by_tag
        if "calibration" in analyses:
            results["calibration"] = {"in_domain": calibration}
            if heldout_tfrecords:
                results["calibration"]["heldout_tfrecords"] = heldout.run_heldout(
                    pretrained.model, generator, heldout_tfrecords, output_dir, max_seq_length, max_heldout_windows,
                    seed)
            if "ged" in results:
                results["calibration"]["fce"] = results["ged"]
    if "blimp" in analyses:
        results["blimp"] = blimp.run_blimp(pretrained.model, tokenizer, data_dir, output_dir, max_seq_length,
                                           blimp_pairs_per_paradigm)
    atomic_write_json(os.path.join(output_dir, "results.json"), results)
    atomic_write_text(os.path.join(output_dir, "report.md"), report(results))
    return results


def report(results):
    lines = ["# Discriminator analysis", "", f"Checkpoint: `{results['init_checkpoint']}` "
             f"({results['checkpoint_format']}); command: `{results['command'] or 'library call'}`", ""]
    if "ged" in results:
        lines += ["## Zero-shot grammatical error detection (FCE)", "",
                  "Each word's p(replaced) at its first piece scores \"this word is an error\"; threshold (best F0.5) "
                  "and temperature fitted on dev. Fractions, not percentages.", "",
                  "| split | words | error rate | precision | recall | F0.5 | AUROC | AP | Brier | ECE | ECE (T) |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for split, values in results["ged"].items():
            lines.append(f"| {split} | {values['num_words']} | {values['error_rate']:.3f} | "
                         + " | ".join(f"{values[key]:.3f}" for key in ("precision", "recall", "f0_5", "auroc",
                                                                         "average_precision", "brier", "ece",
                                                                         "ece_calibrated")) + " |")
        any_split = next(iter(results["ged"].values()))
        lines += ["", f"Threshold {any_split['threshold']:.4f}, temperature {any_split['temperature']:.3f}. "
                  "Reliability diagram: `ged_reliability.png`; every word: `ged_tokens.jsonl`.", ""]
    if "calibration" in results:
        lines += ["## Calibration on the detector's own task", "",
                  "Words of the POS corpora corrupted by the checkpoint's generator as in pre-training (label: the "
                  "first piece was replaced), threshold and temperature fitted on the even-numbered sentences; with "
                  "held-out pre-training TFRecords, every piece of theirs likewise (fitted on even windows); FCE "
                  "(out of domain) beside them when `ged` ran.", "",
                  "| text | words | replaced | precision | recall | F0.5 | AUROC | AP | Brier | ECE | ECE (T) | T |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        rows = [(f"{corpus} ({half})", values) for corpus, halves in results["calibration"]["in_domain"].items()
                for half, values in halves.items()]
        rows += [(f"held-out TFRecords, pieces ({half})", values)
                 for half, values in results["calibration"].get("heldout_tfrecords", {}).items()]
        rows += [(f"FCE {split}", values) for split, values in results["calibration"].get("fce", {}).items()]
        for name, values in rows:
            lines.append(f"| {name} | {values['num_words']} | {values['error_rate']:.3f} | " + " | ".join(
                f"{values[key]:.3f}" for key in ("precision", "recall", "f0_5", "auroc", "average_precision", "brier",
                                                 "ece", "ece_calibrated", "temperature")) + " |")
        lines.append("")
    if "pos" in results:
        lines += ["## By part of speech", "",
                  "False positives: clean words with p(replaced) > 0.5. With a generator: the share of the tag's words "
                  "it replaced, the share of its samples equal to the original, and the discriminator's AUROC on the "
                  "corrupted text; [95 % bootstrap interval]. The 15 most frequent tags of each corpus; all in "
                  "`results.json`, every word in `pos_words.jsonl`.", ""]
        for corpus, by_tag in results["pos"].items():
            lines += [f"### {corpus}", "", "| tag | words | false positives | replaced | sample = original | AUROC |",
                      "| --- | --- | --- | --- | --- | --- |"]
            for tag, values in list(by_tag.items())[:15]:
                cells = [tag, str(values["words"]), _with_interval(values, "false_positive_rate")]
                if "replaced_rate" in values:
                    equal = values["sample_equals_original"]
                    cells += [_with_interval(values, "replaced_rate"), "-" if equal is None else f"{equal:.3f}",
                              _with_interval(values, "auroc")]
                else:
                    cells += ["-", "-", "-"]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    if "blimp" in results:
        blimp_results = results["blimp"]
        ranked = sorted(blimp_results["by_paradigm"].items(), key=lambda item: item[1])
        lines += ["## BLiMP minimal pairs", "",
                  f"Accuracy {blimp_results['accuracy']:.3f} over {blimp_results['num_pairs']} pairs (chance 0.5): "
                  "the grammatical sentence has the higher mean log p(original). Every pair: `blimp_pairs.jsonl`.", "",
                  "| paradigm (worst and best) | accuracy |", "| --- | --- |"]
        shown = ranked if len(ranked) <= 10 else ranked[:5] + ranked[-5:]  # the five worst and the five best
        lines += [f"| {name} | {value:.3f} |" for name, value in shown]
        lines.append("")
    return "\n".join(lines) + "\n"


def _with_interval(values, key):
    value, (low, high) = values[key], values[f"{key}_ci"]
    if value is None:
        return "-"
    return f"{value:.3f}" + ("" if low is None else f" [{low:.3f}, {high:.3f}]")
