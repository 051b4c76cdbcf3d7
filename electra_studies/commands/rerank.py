"""electra-rerank --nbest=FILE --init_checkpoint=PATH --output_dir=OUT

Re-ranks speech-recognition n-best lists (HyPoradise's JSON arrays, or JSON lines with `hypotheses`, optional `scores`,
`reference` and `id`) with the checkpoint's sentence scorers: the discriminator's mean and sum of log P(original)
(`disc_mean`, `disc_sum`), the generator's pseudo-log-likelihood (`pll`) and Electric's (`electric`). Per scorer, the
weights of LM score, recogniser evidence and length are tuned on the utterances at even positions and tested on the
odd ones. Writes OUT/utterances.jsonl and OUT/summary.json (docs/rerank.md).
"""

import shlex
import sys

from absl import flags

from electra_studies.rerank.scorers import SCORERS
from electra_tf import cli

FLAGS = flags.FLAGS
flags.DEFINE_string("nbest", None, "The n-best file: a HyPoradise JSON array or JSON lines (docs/rerank.md).")
flags.DEFINE_string(
    "init_checkpoint",
    None,
    "The model to score with (any format electra-finetune reads; a "
    "pre-training run directory also gives the generator's pll).",
)
flags.DEFINE_string("output_dir", None, "Where utterances.jsonl and summary.json are written.")
flags.DEFINE_list("scorers", None, "Scorers: " + ", ".join(SCORERS) + " (default: every one the checkpoint provides).")
flags.DEFINE_string("input_encoding", "utf-8", "Encoding of --nbest and --overlap_corpus: a Python codec name.")
flags.DEFINE_string(
    "encoding_errors",
    "strict",
    "Bytes not valid in --input_encoding: strict (stop naming line and "
    "column), replace, ignore, or another Python codecs error handler.",
)
flags.DEFINE_integer("max_utterances", None, "Keep the first N utterances of --nbest (a quick slice).")
flags.DEFINE_integer("max_seq_length", 128, "Word pieces per hypothesis (longer ones are truncated).")
flags.DEFINE_integer("batch_size", 64, "Hypotheses per forward pass of the discriminator and Electric.")
flags.DEFINE_float("lm_weight", None, "Fix the scorer's weight instead of tuning it on the development half.")
flags.DEFINE_float("length_weight", None, "Fix the weight of the word count instead of tuning it.")
flags.DEFINE_integer("bootstrap_resamples", 1000, "Resamples of the paired bootstrap interval on the test half.")
flags.DEFINE_integer("seed", 0, "Seed of the bootstrap.")
flags.DEFINE_string(
    "overlap_corpus",
    None,
    "A pre-training corpus file or directory: count the references found "
    "in it verbatim (after normalisation), per file.",
)
flags.DEFINE_integer("overlap_min_words", 8, "--overlap_corpus: count references of at least this many words.")
flags.DEFINE_boolean(
    "allow_embedding_mismatch",
    False,
    "For a Hugging Face discriminator/ + generator/ pair whose embedding copies differ: keep the discriminator's.",
)


def _chosen_scorers():
    return None if FLAGS.scorers is None else [name.strip() for name in FLAGS.scorers if name.strip()]


def _arguments(argv):
    """The checks of the flags and files that need no model (and no TensorFlow)."""
    from absl import app

    from electra_studies.rerank.rerank import check_arguments

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    cli.require_flags("nbest", "init_checkpoint", "output_dir")
    return check_arguments(
        FLAGS.nbest,
        FLAGS.init_checkpoint,
        _chosen_scorers(),
        FLAGS.input_encoding,
        FLAGS.encoding_errors,
        FLAGS.max_utterances,
        FLAGS.overlap_corpus,
    )


def _percent(value):
    return "-" if value is None else f"{value:.2f}"


def print_table(summary):
    """The WERs of the file and of its test half, per scorer, with the test half's interval and the cost."""
    print(f"{'choice':<12} {'WER':>7} {'test WER':>9} {'test - first (95 %)':>26} {'passes/hyp':>11} {'ms/hyp':>8}")
    print(f"{'first':<12} {_percent(summary['wer_first']):>7} {_percent(summary['wer_first_test']):>9}")
    for name, wer in summary["wer_reranked"].items():
        interval = summary["bootstrap_test"][name]
        shown = (
            "-"
            if interval is None
            else (f"{interval['difference']:+.2f} [{interval['low']:+.2f}, {interval['high']:+.2f}]")
        )
        cost = summary["cost"][name]
        print(
            f"{name:<12} {_percent(wer):>7} {_percent(summary['wer_reranked_test'][name]):>9} {shown:>26} "
            f"{cost['forward_passes_per_hypothesis']:>11.1f} {1000 * cost['seconds_per_hypothesis']:>8.2f}"
        )
    print(f"{'oracle':<12} {_percent(summary['wer_oracle']):>7} {_percent(summary['wer_oracle_test']):>9}")
    for name, reason in summary["skipped"].items():
        print(f"skipped {name}: {reason}")
    for path, found in summary.get("overlap", {}).get("files", {}).items():
        print(f"overlap {path}: {found['found']} of {found['checked']} references found")


def main(argv):
    from electra_studies.rerank.rerank import run_rerank

    _arguments(argv)
    command = " ".join(["electra-rerank"] + [shlex.quote(arg) for arg in sys.argv[1:] if arg != "--verbosity=-1"])
    summary = run_rerank(
        FLAGS.nbest,
        FLAGS.init_checkpoint,
        FLAGS.output_dir,
        _chosen_scorers(),
        max_seq_length=FLAGS.max_seq_length,
        batch_size=FLAGS.batch_size,
        input_encoding=FLAGS.input_encoding,
        encoding_errors=FLAGS.encoding_errors,
        max_utterances=FLAGS.max_utterances,
        lm_weight=FLAGS.lm_weight,
        length_weight=FLAGS.length_weight,
        bootstrap_resamples=FLAGS.bootstrap_resamples,
        seed=FLAGS.seed,
        overlap_corpus=FLAGS.overlap_corpus,
        overlap_min_words=FLAGS.overlap_min_words,
        command=command,
        allow_embedding_mismatch=FLAGS.allow_embedding_mismatch,
    )
    print_table(summary)
    print(f"wrote {FLAGS.output_dir}/utterances.jsonl and summary.json")


def console_main():
    """The installed console command (electra-rerank)."""
    cli.run(main, precheck=_arguments)


if __name__ == "__main__":
    console_main()
