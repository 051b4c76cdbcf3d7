"""Wall time of the whole discriminator-analysis report, against the 30-minute target of a 2-core machine.

    .venv/bin/python bench/discriminator_analysis_time.py --init_checkpoint=runs/tiny --data_dir=$DATA \
        [--heldout_tfrecords=data/held_out.tfrecord] [--compare_checkpoint=runs/tiny_mlm/pretrained]

Runs `electra_studies.discriminator_analysis.run_analyses` with its default settings (every analysis the checkpoint
allows, all FCE, POS, Switchboard and BLiMP items, 10,000 words per POS corpus for the representations) into a
temporary directory (or `--output_dir`) and reports its wall time. The reference, measured
in the same process first, is the same discriminator scoring `--reference_windows` random windows of
`--max_seq_length` pieces in batches of 64: the ratio report / reference is the report's cost in units of plain
inference on this host, comparable across hosts of different speed, while the seconds are what the target is about.
The last line is one JSON object.
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from bench_utils import peak_rss_mb, random_batch


def reference_seconds(discriminator, num_windows, seq_len, batch=64):
    """Seconds for the discriminator to score `num_windows` random windows (one untimed batch first)."""
    from electra_tf.models.backbone import backbone_inputs

    config = discriminator.electra_config
    features = backbone_inputs(random_batch(batch, seq_len, config.vocab_size, config.cls_id, config.sep_id))
    discriminator(features, training=False)
    start = time.perf_counter()
    for _ in range(max(1, num_windows // batch)):
        discriminator(features, training=False).numpy()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--init_checkpoint", required=True)
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--heldout_tfrecords", default=None)
    parser.add_argument("--compare_checkpoint", default=None, help="The second model of the representations analysis.")
    parser.add_argument("--representation_words", type=int, default=10000)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--max_sentences", type=int, default=None, help="A slice (smoke runs); default all.")
    parser.add_argument("--blimp_pairs_per_paradigm", type=int, default=None)
    parser.add_argument("--reference_windows", type=int, default=1024)
    parser.add_argument("--budget_minutes", type=float, default=30.0)
    parser.add_argument("--output_dir", default=None, help="Keep the report here (default: a temporary directory).")
    args = parser.parse_args()

    from electra_studies.discriminator_analysis.analysis import run_analyses
    from electra_tf.checkpoints import DISCRIMINATOR
    from electra_tf.models import load_checkpoint

    reference = reference_seconds(
        load_checkpoint(args.init_checkpoint, DISCRIMINATOR, allow_missing_head=True, argument="init_checkpoint").model,
        args.reference_windows,
        args.max_seq_length,
    )
    with tempfile.TemporaryDirectory() as temporary:
        output_dir = args.output_dir or temporary
        start = time.perf_counter()
        results = run_analyses(
            args.init_checkpoint,
            args.data_dir,
            output_dir,
            max_seq_length=args.max_seq_length,
            max_sentences=args.max_sentences,
            blimp_pairs_per_paradigm=args.blimp_pairs_per_paradigm,
            heldout_tfrecords=args.heldout_tfrecords,
            compare_checkpoint=args.compare_checkpoint,
            representation_words=args.representation_words,
            command=" ".join(["python bench/discriminator_analysis_time.py"] + sys.argv[1:]),
        )
        seconds = time.perf_counter() - start
    summary = {
        "seconds": seconds,
        "budget_seconds": 60 * args.budget_minutes,
        "within_budget": seconds <= 60 * args.budget_minutes,
        "analyses": results["analyses"],
        "skipped": results["skipped"],
        "reference_windows": args.reference_windows,
        "reference_seconds": reference,
        "ratio_to_reference": seconds / reference,
        "peak_rss_mb": peak_rss_mb(),
        "cpu_count": os.cpu_count(),
    }
    print(
        f"report: {seconds:.1f} s ({seconds / 60:.1f} of {args.budget_minutes:.0f} minutes), "
        f"{seconds / reference:.1f}x the time to score {args.reference_windows} windows of {args.max_seq_length}"
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
