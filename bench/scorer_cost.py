"""Seconds per hypothesis of the text scorers: Electric's one pass against a masked LM's pseudo-log-likelihood.

    .venv/bin/python bench/scorer_cost.py --texts=../shared/data/asr_nbest/test_ls_clean.json \
        --vocab_file=../shared/data/vocab/bert-uncased-vocab.txt --presets=tiny,small --num_texts=200
    .venv/bin/python bench/scorer_cost.py --texts=hypotheses.txt --vocab_file=vocab.txt --presets=tiny --num_texts=20

`--texts`: a text file (one text per line) or a JSON file holding a list of strings, or a list of objects whose
`--texts_key` field (default `output`) is a string or a list of strings (as an n-best list file). The first
`--num_texts` texts are scored, tokenised with `--vocab_file` (lower-cased), at most `--max_seq_length` pieces each.

For each preset of `--presets`, randomly initialised models (the cost does not depend on the weights) score the same
texts with:

- electric: `electra_tf.scoring.electric_pseudo_log_likelihoods`, one discriminator pass per text (batched by
  length, `--batch_size` texts a batch);
- pll_generator: `electra_tf.scoring.pseudo_log_likelihoods` with the preset's generator (the sizing rule's width),
  one masked copy per word piece (`--pll_batch_size` copies a batch);
- pll_same_size: the same with a masked LM of the discriminator's size (generator fraction 1): the comparison of the
  Electric paper (a masked LM as large as the energy model);
- discriminator_mean: `electra_tf.scoring.score_texts`, ELECTRA's mean log-probability of "original" per piece (one
  pass; returns per-piece probabilities too).

Each scorer runs once untimed on the first `--batch_size` texts (tracing its graph), then `--repeats` timed runs over
all texts; the median run gives seconds per hypothesis. Ratios: each PLL's seconds per hypothesis over Electric's
(above 1: Electric faster). The last line is one JSON object.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from bench_utils import peak_rss_mb

SCORERS = ("electric", "pll_generator", "pll_same_size", "discriminator_mean")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", required=True, help="Text file (one per line) or JSON file of the texts.")
    parser.add_argument("--texts_key", default="output", help="Field of the JSON objects that holds the text(s).")
    parser.add_argument("--vocab_file", required=True, help="WordPiece vocab.txt (lower-cased tokenisation).")
    parser.add_argument("--presets", default="tiny,small", help="Comma-separated model presets.")
    parser.add_argument("--num_texts", type=int, default=200)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=64, help="Texts per batch (electric, discriminator_mean).")
    parser.add_argument("--pll_batch_size", type=int, default=512, help="Masked copies per batch (PLL).")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    args.preset_names = [name for name in args.presets.split(",") if name.strip()]
    if not args.preset_names or args.num_texts < 1 or args.repeats < 1:
        parser.error("--presets must name a preset, --num_texts and --repeats must be at least 1")
    return args


def read_texts(path, key, limit):
    """The first `limit` texts of a text file or a JSON file (see the module docstring)."""
    with open(path, encoding="utf-8") as handle:
        if not path.endswith(".json"):
            return [line.rstrip("\n") for line in handle if line.strip()][:limit]
        data = json.load(handle)
    texts = []
    for item in data:
        value = item.get(key) if isinstance(item, dict) else item
        if value is None:
            raise SystemExit(f"--texts={path}: an entry has no {key!r} field; pass --texts_key")
        texts += value if isinstance(value, list) else [value]
        if len(texts) >= limit:
            break
    return [str(text) for text in texts[:limit]]


def time_runs(score, texts, warmup_texts, repeats):
    score(warmup_texts)
    durations = []
    for _ in range(repeats):
        start = time.perf_counter()
        score(texts)
        durations.append(time.perf_counter() - start)
    return statistics.median(durations)


def measure_preset(args, preset, tokenizer, texts):
    import dataclasses

    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator, build_generator
    from electra_tf.scoring import electric_pseudo_log_likelihoods, pseudo_log_likelihoods, score_texts

    config = ElectraConfig.from_preset(preset, objective="electric").with_vocab(
        tokenizer.vocab_size,
        pad_id=tokenizer.pad_id,
        unk_id=tokenizer.unk_id,
        cls_id=tokenizer.cls_id,
        sep_id=tokenizer.sep_id,
        mask_id=tokenizer.mask_id,
    )
    discriminator = build_discriminator(config)
    generator = build_generator(config)
    same_size = build_generator(dataclasses.replace(config, generator_hidden_fraction=1.0))
    length = args.max_seq_length
    scorers = {
        "electric": lambda chunk: electric_pseudo_log_likelihoods(
            discriminator, tokenizer, chunk, length, args.batch_size
        ),
        "pll_generator": lambda chunk: pseudo_log_likelihoods(generator, tokenizer, chunk, length, args.pll_batch_size),
        "pll_same_size": lambda chunk: pseudo_log_likelihoods(same_size, tokenizer, chunk, length, args.pll_batch_size),
        "discriminator_mean": lambda chunk: score_texts(discriminator, tokenizer, chunk, length, args.batch_size),
    }
    warmup = texts[: args.batch_size]
    result = {name: time_runs(score, texts, warmup, args.repeats) / len(texts) for name, score in scorers.items()}
    result = {f"{name}_s_per_text": seconds for name, seconds in result.items()}
    for pll in ("pll_generator", "pll_same_size"):
        result[f"{pll}_over_electric"] = result[f"{pll}_s_per_text"] / result["electric_s_per_text"]
    result["generator_hidden"] = generator.backbone.hidden_size
    result["discriminator_hidden"] = discriminator.backbone.hidden_size
    return result


def main(argv=None):
    args = parse_args(argv)
    import numpy as np
    import tensorflow as tf

    from electra_tf.inputs import encode_single_segments
    from electra_tf.tokenizer import ElectraTokenizer

    tf.keras.utils.set_random_seed(0)
    tokenizer = ElectraTokenizer(args.vocab_file)
    texts = read_texts(args.texts, args.texts_key, args.num_texts)
    _, kept, _ = encode_single_segments(tokenizer, texts, args.max_seq_length)
    threads = tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count()
    summary = {
        "texts": len(texts),
        "mean_pieces": float(np.mean(kept)),
        "max_seq_length": args.max_seq_length,
        "repeats": args.repeats,
        "threads": threads,
    }
    print(f"{len(texts)} texts from {args.texts}, {summary['mean_pieces']:.1f} pieces on average", flush=True)
    for preset in args.preset_names:
        result = measure_preset(args, preset, tokenizer, texts)
        summary[preset] = result
        print(
            f"{preset} (discriminator hidden {result['discriminator_hidden']}, generator hidden "
            f"{result['generator_hidden']}):"
        )
        for name in SCORERS:
            print(f"{name:>24}: {1000 * result[f'{name}_s_per_text']:.3f} ms per hypothesis")
        for pll in ("pll_generator", "pll_same_size"):
            print(f"{pll + ' / electric':>24}: {result[f'{pll}_over_electric']:.1f}x")
    summary["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
