"""Runs the chosen analyses of one discriminator and writes `results.json` and `report.md` (atomically).

Built so far: `ged` (zero-shot grammatical error detection on FCE, `ged.py`) and `blimp` (minimal pairs, `blimp.py`).
The other analyses of the plan (calibration on generator-corrupted text, POS bias, representations against an MLM
twin) are not built yet; asking for one is an error rather than a silent skip.
"""

import os

from electra_tf.errors import ConfigError, DataError
from electra_tf.io_utils import atomic_write_json, atomic_write_text

ANALYSES = ("ged", "blimp")
PLANNED = ("calibration", "pos", "representations")


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
    if "blimp" in analyses and not os.path.isdir(blimp_dir(data_dir)):
        raise DataError(f"{blimp_dir(data_dir)} does not exist: data_dir must hold blimp/<paradigm>.jsonl (BLiMP's "
                        "data/ directory)", arguments=("data_dir",))


def run_analyses(init_checkpoint, data_dir, output_dir, analyses=ANALYSES, max_seq_length=128, max_sentences=None,
                 blimp_pairs_per_paradigm=None, command=None):
    """Loads the discriminator at `init_checkpoint` (any format `finetune.checkpoints` reads), runs `analyses`,
    writes `output_dir/results.json` and `report.md`, and returns the results."""
    from electra_tf.tokenizer import ElectraTokenizer
    from experiments.discriminator_analysis import blimp, ged
    from finetune.checkpoints import load_discriminator

    check_analyses(analyses)
    check_data(analyses, data_dir)
    pretrained = load_discriminator(init_checkpoint)
    if not pretrained.vocab_file:
        raise DataError(f"{init_checkpoint} holds no vocabulary (vocab.txt): the analyses tokenise text as the "
                        "discriminator was trained", arguments=("init_checkpoint",))
    tokenizer = ElectraTokenizer.from_settings(pretrained.vocab_file, pretrained.tokenizer_settings)
    os.makedirs(output_dir, exist_ok=True)
    results = {"init_checkpoint": init_checkpoint, "checkpoint_format": pretrained.format,
               "max_seq_length": max_seq_length, "max_sentences": max_sentences,
               "blimp_pairs_per_paradigm": blimp_pairs_per_paradigm, "command": command}
    if "ged" in analyses:
        results["ged"] = ged.run_ged(pretrained.model, tokenizer, data_dir, output_dir, max_seq_length,
                                     max_sentences)
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
