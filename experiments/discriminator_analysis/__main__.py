"""python -m experiments.discriminator_analysis --init_checkpoint=PATH --data_dir=DIR --output_dir=OUT

Measures a pre-trained ELECTRA discriminator (our pretrained directory or run, a reference TF1 checkpoint, a Hugging
Face directory, a keras-hub preset) and writes OUT/results.json, OUT/report.md, per-item files and plots. `DIR` holds
`ged/fce/en_fce_{dev,test}.tsv` and `blimp/*.jsonl` (e.g. ../shared/data).
"""

from electra_tf import cli  # noqa: F401  (defines --verbose; must come before the flags below)

cli.quiet_native_startup(__name__)  # before TensorFlow is imported

import shlex  # noqa: E402
import sys  # noqa: E402

from absl import flags  # noqa: E402

from experiments.discriminator_analysis.analysis import ANALYSES  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("init_checkpoint", None, "The discriminator to analyse (any format run_finetuning.py reads).")
flags.DEFINE_string("data_dir", None, "Directory holding ged/fce/en_fce_{dev,test}.tsv and "
                    "blimp/<paradigm>.jsonl.")
flags.DEFINE_string("output_dir", None, "Where results.json, report.md, ged_tokens.jsonl and plots are written.")
flags.DEFINE_list("analyses", list(ANALYSES), "Analyses to run: " + ", ".join(ANALYSES) + ".")
flags.DEFINE_integer("max_seq_length", 128, "Word pieces per window (longer sentences are split at word boundaries).")
flags.DEFINE_integer("max_sentences", None, "FCE: keep the first N sentences of each split (a quick slice).")
flags.DEFINE_integer("blimp_pairs_per_paradigm", None, "BLiMP: keep the first N pairs of each paradigm (default all "
                     "1,000).")


def main(argv):
    from absl import app

    from electra_tf.errors import ConfigError
    from experiments.discriminator_analysis.analysis import run_analyses

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    for name in ("init_checkpoint", "data_dir", "output_dir"):
        if not getattr(FLAGS, name):
            raise ConfigError(f"{name} is required", arguments=(name,))
    command = " ".join(["python -m experiments.discriminator_analysis"] +
                       [shlex.quote(arg) for arg in sys.argv[1:] if arg != "--verbosity=-1"])
    results = run_analyses(FLAGS.init_checkpoint, FLAGS.data_dir, FLAGS.output_dir,
                           analyses=[name.strip() for name in FLAGS.analyses if name.strip()],
                           max_seq_length=FLAGS.max_seq_length, max_sentences=FLAGS.max_sentences,
                           blimp_pairs_per_paradigm=FLAGS.blimp_pairs_per_paradigm, command=command)
    for split, values in results.get("ged", {}).items():
        print(f"ged {split}: F0.5 {values['f0_5']:.3f} AUROC {values['auroc']:.3f} ECE {values['ece']:.3f} -> "
              f"{values['ece_calibrated']:.3f} (T={values['temperature']:.2f})")
    if "blimp" in results:
        print(f"blimp: accuracy {results['blimp']['accuracy']:.3f} over {results['blimp']['num_pairs']} pairs")
    print(f"wrote {FLAGS.output_dir}/results.json and report.md")


if __name__ == "__main__":
    cli.run(main)
