"""electra-analyze --init_checkpoint=PATH --data_dir=DIR --output_dir=OUT

Measures a pre-trained ELECTRA discriminator (our pretrained directory or run, a reference TF1 checkpoint, a Hugging
Face directory, a keras-hub preset) and writes OUT/results.json, OUT/report.md, per-item files and plots. `DIR` holds
`ged/fce/en_fce_{dev,test}.tsv`, `tagging/ptb_sample/tagged/*.pos`,
`tagging/ud_english_ewt/en_ewt-ud-{dev,test}.conllu`, `tagging/switchboard/{tagged,disfluency}` and
`blimp/*.jsonl`. `calibration` (and the generator's halves of `pos` and `blimp`) need the generator: pass a
pre-training run directory, a Hugging Face discriminator/ + generator/ pair or the reference's TF1 checkpoint.
`--compare_checkpoint` adds a second model to `representations`.
"""

import shlex
import sys

from absl import flags

from electra_studies.discriminator_analysis.analysis import ANALYSES
from electra_tf import cli

FLAGS = flags.FLAGS
flags.DEFINE_string("init_checkpoint", None, "The discriminator to analyse (any format electra-finetune reads).")
flags.DEFINE_string(
    "data_dir",
    None,
    "Directory holding ged/fce/en_fce_{dev,test}.tsv, tagging/ptb_sample/, "
    "tagging/ud_english_ewt/, tagging/switchboard/ and blimp/<paradigm>.jsonl.",
)
flags.DEFINE_string(
    "output_dir",
    None,
    "Where results.json, report.md, ged_tokens.jsonl and plots are written (the "
    "directory is replaced as a whole once every analysis has finished).",
)
flags.DEFINE_list(
    "analyses",
    None,
    "Analyses to run: " + ", ".join(ANALYSES) + " (default: every one the "
    "checkpoint allows; calibration needs its generator).",
)
flags.DEFINE_integer("max_seq_length", 128, "Word pieces per window (longer sentences are split at word boundaries).")
flags.DEFINE_integer(
    "max_sentences",
    None,
    "FCE and the POS corpora: keep the first N sentences of each split or corpus (a quick slice).",
)
flags.DEFINE_integer("bootstrap_resamples", 200, "Resamples of the 95 % bootstrap intervals of the POS analysis.")
flags.DEFINE_string(
    "heldout_tfrecords",
    None,
    "calibration: also held-out pre-training shards (e.g. a run's "
    "--eval_tfrecords), corrupted by the generator: the detector's task in its own domain.",
)
flags.DEFINE_integer("max_heldout_windows", 1024, "Records of --heldout_tfrecords to score.")
flags.DEFINE_integer("seed", 0, "Seed of the generator's corruption and of the bootstrap.")
flags.DEFINE_integer(
    "blimp_pairs_per_paradigm", None, "BLiMP: keep the first N pairs of each paradigm (default all 1,000)."
)
flags.DEFINE_string(
    "compare_checkpoint",
    None,
    "representations: a second model (e.g. the MLM twin of the "
    "compute-matched experiment) compared layer by layer with the discriminator.",
)
flags.DEFINE_string(
    "input_encoding",
    "utf-8",
    "Encoding of every text file of --data_dir (FCE, the POS corpora, "
    "Switchboard, BLiMP): a Python codec name such as latin-1 or cp1252.",
)
flags.DEFINE_string(
    "encoding_errors",
    "strict",
    "Bytes not valid in --input_encoding: strict (stop naming file, line "
    "and column), replace, ignore, or another Python codecs error handler.",
)
flags.DEFINE_integer(
    "representation_words",
    10000,
    "representations: words of each POS corpus (whole sentences from "
    "the start; half train the probes, half test them).",
)
flags.DEFINE_boolean(
    "allow_embedding_mismatch",
    False,
    "For a Hugging Face discriminator/ + generator/ pair whose "
    "embedding copies differ (--init_checkpoint or --compare_checkpoint): keep the discriminator's.",
)


def _analyses(argv):
    """The analyses to run, after the checks of the flags that need no model (and no TensorFlow)."""
    from absl import app

    from electra_studies.discriminator_analysis.analysis import check_arguments
    from electra_tf.errors import ConfigError

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    for name in ("init_checkpoint", "data_dir", "output_dir"):
        if not getattr(FLAGS, name):
            raise ConfigError(f"{name} is required", arguments=(name,))
    return check_arguments(
        FLAGS.init_checkpoint,
        FLAGS.data_dir,
        _chosen_analyses(),
        FLAGS.compare_checkpoint,
        FLAGS.heldout_tfrecords,
        FLAGS.input_encoding,
        FLAGS.encoding_errors,
    )


def _chosen_analyses():
    return None if FLAGS.analyses is None else [name.strip() for name in FLAGS.analyses if name.strip()]


def main(argv):
    from electra_studies.discriminator_analysis.analysis import run_analyses

    _analyses(argv)
    command = " ".join(
        ["python -m electra_studies.commands.analyze"]
        + [shlex.quote(arg) for arg in sys.argv[1:] if arg != "--verbosity=-1"]
    )
    results = run_analyses(
        FLAGS.init_checkpoint,
        FLAGS.data_dir,
        FLAGS.output_dir,
        analyses=_chosen_analyses(),
        max_seq_length=FLAGS.max_seq_length,
        max_sentences=FLAGS.max_sentences,
        blimp_pairs_per_paradigm=FLAGS.blimp_pairs_per_paradigm,
        bootstrap_resamples=FLAGS.bootstrap_resamples,
        seed=FLAGS.seed,
        heldout_tfrecords=FLAGS.heldout_tfrecords,
        max_heldout_windows=FLAGS.max_heldout_windows,
        compare_checkpoint=FLAGS.compare_checkpoint,
        representation_words=FLAGS.representation_words,
        command=command,
        input_encoding=FLAGS.input_encoding,
        encoding_errors=FLAGS.encoding_errors,
        allow_embedding_mismatch=FLAGS.allow_embedding_mismatch,
    )
    for split, values in results.get("ged", {}).items():
        print(
            f"ged {split}: F0.5 {values['f0_5']:.3f} AUROC {values['auroc']:.3f} ECE {values['ece']:.3f} -> "
            f"{values['ece_calibrated']:.3f} (T={values['temperature']:.2f})"
        )
    for corpus, halves in results.get("calibration", {}).get("in_domain", {}).items():
        values = halves["held_out"]
        print(
            f"calibration {corpus} (held-out half): AUROC {values['auroc']:.3f} ECE {values['ece']:.3f} -> "
            f"{values['ece_calibrated']:.3f}"
        )
    if "heldout_tfrecords" in results.get("calibration", {}):
        values = results["calibration"]["heldout_tfrecords"]["held_out"]
        print(
            f"calibration held-out TFRecords (odd windows): AUROC {values['auroc']:.3f} ECE {values['ece']:.3f} -> "
            f"{values['ece_calibrated']:.3f}"
        )
    for corpus, by_tag in results.get("pos", {}).items():
        rates = {tag: values["false_positive_rate"] for tag, values in by_tag.items()}
        worst = max(rates, key=rates.get) if rates else None
        if worst is not None:
            print(f"pos {corpus}: {len(rates)} tags; most false positives on clean text: {worst} ({rates[worst]:.3f})")
    if "disfluency" in results:
        values = results["disfluency"]["disfluent"]
        print(
            f"switchboard: disfluent against fluent words AUROC {values['auroc_vs_fluent']:.3f} "
            f"({values['words']} disfluent words)"
        )
    if "blimp" in results:
        pll = results["blimp"].get("accuracy_pll")
        print(
            f"blimp: accuracy {results['blimp']['accuracy']:.3f} over {results['blimp']['num_pairs']} pairs"
            + ("" if pll is None else f" (generator pseudo-log-likelihood: {pll:.3f})")
        )
    for name, layers in results.get("representations", {}).get("by_model", {}).items():
        print(
            f"representations {name}: probe accuracy by layer "
            + ", ".join("/".join(f"{value:.3f}" for value in entry["probe_accuracy"].values()) for entry in layers)
        )
    for name, reason in results["skipped"].items():
        print(f"skipped {name}: {reason}")
    print(f"wrote {FLAGS.output_dir}/results.json and report.md")


def console_main():
    """The installed console command (electra-analyze)."""
    cli.run(main, precheck=_analyses)


if __name__ == "__main__":
    console_main()
