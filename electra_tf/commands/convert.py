"""Convert ELECTRA checkpoints between our format, the reference's TF1 checkpoints, Hugging Face and keras-hub.

    electra-convert --from=electra_small/electra_small --to=converted/small            # TF1 -> ours
    electra-convert --from=converted/small --to=hf/small --to_format=hf                 # ours -> HF
    electra-convert --from=hf/electra-small-discriminator --to=tf1/model.ckpt --to_format=tf1

Formats: ours (a pretrained directory: a keras-hub preset of the model [+ its tokenizer's files]; a pre-training
model_dir is also read), tf1 (a checkpoint prefix with the reference's variable names), hf (a directory with
model.safetensors + config.json; for --model=pretrainer a directory with discriminator/ and generator/), keras_hub (an
ElectraBackbone preset directory). --from_format=auto tells them apart from the path. Outputs are written atomically.

The tokenizer travels with the model: vocab.txt and its casing and accent settings (tokenizer.json in ours and
keras-hub presets, tokenizer_config.json for Hugging Face; a Hugging Face directory without vocab.txt, as
transformers 5 writes them, gives the vocabulary and casing of its tokenizer.json). Without a vocabulary the model is
converted alone, and a note on stderr says so. A TF1 checkpoint records no settings: give them with
--do_lower_case / --strip_accents (default: lower-cased, as BERT uncased and the released ELECTRA models).
"""

import sys

from absl import flags

from electra_tf import cli, progress
from electra_tf.checkpoint_formats import CHECKPOINT_FORMATS

FORMATS = ["auto", *CHECKPOINT_FORMATS]
FLAGS = flags.FLAGS
# The library's names for what this program calls --model and --from_format.
FLAG_NAMES = {"kind": "model", "format": "from_format"}
flags.DEFINE_string("from", None, "The checkpoint to read (a directory or a TF1 checkpoint prefix).")
flags.DEFINE_string("to", None, "Where to write the converted checkpoint (a directory, or a prefix for tf1).")
flags.DEFINE_enum("from_format", "auto", FORMATS, "Format of --from (auto: detected from the path).")
flags.DEFINE_enum("to_format", "ours", FORMATS[1:], "Format to write.")
flags.DEFINE_enum(
    "model",
    None,
    ["discriminator", "generator", "pretrainer"],
    "Which model to convert (default: what --from holds; both networks make a pretrainer).",
)
flags.DEFINE_integer(
    "num_heads",
    None,
    "The discriminator's attention heads, for formats that do not store them "
    "(TF1); default hidden_size // 64, the reference's rule.",
)
flags.DEFINE_string("vocab_file", None, "vocab.txt of the model (default: the one beside --from); copied to --to.")
flags.DEFINE_boolean(
    "do_lower_case",
    None,
    "The tokenizer's casing written to --to (default: what --from records; lower-case if it records nothing).",
)
flags.DEFINE_boolean(
    "strip_accents", None, "Strip accents when tokenising (default: what --from records, else --do_lower_case)."
)
flags.DEFINE_boolean(
    "allow_missing_head",
    False,
    "Accept a checkpoint without the model's head (HF ElectraModel, "
    "keras-hub backbone); the head keeps its random initialisation.",
)
flags.DEFINE_boolean(
    "allow_embedding_mismatch",
    False,
    "For an HF discriminator/ + generator/ pair whose embedding copies differ: keep the discriminator's.",
)


def _check_flags(argv):
    """The checks that need no model (and no TensorFlow)."""
    from electra_tf.preflight import require_checkpoint

    cli.require_flags("from", "to")
    require_checkpoint(getattr(FLAGS, "from"), "from")


def main(argv):
    from electra_tf.checkpoints.tokenizer_files import NO_VOCABULARY
    from electra_tf.models import load_checkpoint, save_checkpoint

    _check_flags(argv)
    source, target = getattr(FLAGS, "from"), FLAGS.to
    with progress.step(f"loading {source}"):
        loaded = load_checkpoint(
            source,
            FLAGS.model,
            FLAGS.from_format,
            num_heads=FLAGS.num_heads,
            vocab_file=FLAGS.vocab_file,
            allow_missing_head=FLAGS.allow_missing_head,
            allow_embedding_mismatch=FLAGS.allow_embedding_mismatch,
            argument="from",
        )
    with progress.step(f"writing {target}"):
        save_checkpoint(
            loaded.model,
            target,
            FLAGS.to_format,
            vocab_file=loaded.vocab_file,
            tokenizer_settings=loaded.tokenizer_settings.overridden(FLAGS.do_lower_case, FLAGS.strip_accents),
        )
    print(f"converted the {loaded.kind} of {source} ({loaded.source_format}) to {target} ({FLAGS.to_format})")
    if not loaded.vocab_file:
        print(
            f"note: {target} has no tokenizer: {source} holds no vocabulary ({NO_VOCABULARY}); convert again with "
            "--vocab_file=<the vocab.txt it was trained with> to write one",
            file=sys.stderr,
        )


def console_main():
    """The installed console command."""
    cli.run(main, flag_names=FLAG_NAMES, precheck=_check_flags)


if __name__ == "__main__":
    console_main()
