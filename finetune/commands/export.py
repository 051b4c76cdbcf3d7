"""Export a pre-trained discriminator or generator, or a fine-tuned classifier, tagger or SQuAD model, as a SavedModel
for TF Serving, or (not the generator) as a LiteRT or ONNX file of its token-id signature.

    electra-export --init_checkpoint=<run>/pretrained --model=discriminator --output_dir=<dir>/1
    electra-export --init_checkpoint=electra_small/electra_small --model=generator --output_dir=<dir>/1
    electra-export --init_checkpoint=<HF electra directory> --output_dir=<dir>/1
    electra-export --init_checkpoint=<run>/trial_0/model.keras --model=classifier --output_dir=<dir>/1
    electra-export --init_checkpoint=<run>/trial_0/model.keras --model=tagger --output_dir=<dir>/1
    electra-export --init_checkpoint=<run>/pretrained --format=litert --max_seq_length=128 --output_dir=<dir>
    electra-export --init_checkpoint=<run>/trial_0/model.keras --model=classifier --format=onnx --output_dir=<dir>

`--init_checkpoint` is any format `electra-convert` reads: our pretrained directory or pre-training run, a
reference TF1 checkpoint prefix, a Hugging Face directory (model.safetensors + config.json) or a keras-hub preset.
The vocabulary (for the raw-text signature) is the vocab.txt beside the checkpoint unless --vocab_file is given.
A classifier is the model.keras of `electra-finetune --save_models`: it carries its own vocabulary and sequence length,
and its raw-text signature takes pairs (`text_a`, `text_b`) when the fine-tuning task does (see --text_inputs). A
tagger's raw-text signature returns one tag per word with the word's byte offsets.
`--format=litert` / `--format=onnx` write `<output_dir>/model.tflite` / `model.onnx`: int32 `input_ids`,
`input_mask`, `segment_ids` (a tagger's `word_positions` too) [batch, max_seq_length] in, the SavedModel's
`serving_default` outputs out; no raw-text signature (the tokenizer's tensorflow-text ops have no LiteRT or ONNX
kernels), so the flags of the raw-text signature are refused with them. `--quantize=int8` writes them with int8
weights (LiteRT dynamic-range, ONNX Runtime's quantize_dynamic).
"""

from absl import flags

from electra_tf import cli, progress
from electra_tf.export_formats import EXPORT_FORMATS, FILE_NAMES, QUANTIZATIONS
from finetune.classifier_text_inputs import TEXT_INPUTS

FLAGS = flags.FLAGS
# The library's names for what this program calls --model, --checkpoint_format and --format.
FLAG_NAMES = {"kind": "model", "format": "checkpoint_format", "export_format": "format"}
flags.DEFINE_string(
    "init_checkpoint",
    None,
    "Checkpoint to export: a pretrained directory, a run's model_dir, a "
    "reference TF1 checkpoint prefix, a Hugging Face directory or a keras-hub preset.",
)
FINETUNED_MODELS = ("classifier", "tagger", "squad")  # read from a fine-tuning run's model.keras
# Settings of the raw-text signature alone, which LiteRT and ONNX files do not have.
RAW_TEXT_FLAGS = ("do_lower_case", "strip_accents", "text_inputs", "max_query_length")
flags.DEFINE_enum(
    "model",
    "discriminator",
    ["discriminator", "generator", *FINETUNED_MODELS],
    "What to export: the discriminator (logits [batch, seq]), the generator (MLM logits "
    "[batch, seq, vocab]), a fine-tuned classifier (logits [batch, classes]), tagger (tags per word) "
    "or SQuAD model (span logits); for the last three --init_checkpoint is the model.keras of "
    "electra-finetune --save_models.",
)
flags.DEFINE_enum(
    "format",
    "saved_model",
    list(EXPORT_FORMATS),
    "saved_model: a SavedModel for TF Serving (token ids and raw text in); litert / onnx: "
    "<output_dir>/model.tflite / model.onnx of the token-id signature at --max_seq_length, for LiteRT "
    "or ONNX Runtime (onnx needs pip install 'electra-tf[onnx]'; not the generator).",
)
flags.DEFINE_enum(
    "quantize",
    "none",
    list(QUANTIZATIONS),
    "int8: --format=litert / onnx with int8 weights, activations quantised per call (LiteRT "
    "dynamic-range, ONNX Runtime quantize_dynamic): 1/4 of the size, 3x / 1.3x faster at batch 1 on "
    "ELECTRA-Small (bench/int8_serving.py); not --format=saved_model, where Keras' int8 served slower.",
)
flags.DEFINE_string(
    "output_dir",
    None,
    "Where to write the SavedModel (a version directory for TF Serving), or the "
    "directory of model.tflite / model.onnx.",
)
flags.DEFINE_integer(
    "max_seq_length",
    128,
    "Sequence length of the raw-text signature, and of the LiteRT and ONNX "
    "files' inputs (a classifier or tagger keeps the one it was fine-tuned with).",
)
flags.DEFINE_enum(
    "checkpoint_format",
    "auto",
    ["auto", "ours", "tf1", "hf", "keras_hub"],
    "Format of --init_checkpoint (auto: detected from the path).",
)
flags.DEFINE_string("vocab_file", None, "vocab.txt of the model (default: the one beside --init_checkpoint).")
flags.DEFINE_boolean(
    "do_lower_case",
    None,
    "The raw-text signature's casing (default: what --init_checkpoint records; lower-case if it records nothing).",
)
flags.DEFINE_boolean(
    "strip_accents",
    None,
    "Strip accents in the raw-text signature (default: what --init_checkpoint records, else --do_lower_case).",
)
flags.DEFINE_integer(
    "num_heads",
    None,
    "Attention heads of the discriminator, for TF1 checkpoints (which do not store them; default hidden_size // 64).",
)
flags.DEFINE_boolean(
    "allow_missing_head",
    False,
    "Accept a checkpoint without the requested head (e.g. HF ElectraModel); the head keeps its random initialisation.",
)
flags.DEFINE_boolean(
    "allow_embedding_mismatch",
    False,
    "For a Hugging Face discriminator/ + generator/ pair whose embedding copies differ: keep the discriminator's.",
)
flags.DEFINE_integer("max_query_length", 64, "SQuAD only: question word pieces kept by the raw-text signature.")
flags.DEFINE_enum(
    "text_inputs",
    "auto",
    TEXT_INPUTS,
    "Classifier only: whether the raw-text signature takes one string vector (`texts`) or sentence "
    "pairs (`text_a`, `text_b`); auto reads the task from the fine-tuning run's results.json.",
)


def _check_flags(argv):
    """The checks that need no model (and no TensorFlow)."""
    from electra_tf.errors import ConfigError
    from electra_tf.export_formats import check_export_format
    from electra_tf.preflight import require_checkpoint

    cli.require_flags("init_checkpoint", "output_dir")
    check_export_format(FLAGS.format, FLAGS.model, FLAGS.quantize)
    if FLAGS.format != "saved_model":
        raw_text = [name for name in RAW_TEXT_FLAGS if FLAGS[name].present]
        if raw_text:
            raise ConfigError(
                f"{', '.join(raw_text)} configure the raw-text signature, which only "
                f"export_format=saved_model has: export_format={FLAGS.format} takes token ids",
                arguments=(*raw_text, "export_format"),
            )
    if FLAGS.model not in FINETUNED_MODELS:  # a fine-tuned model.keras is checked, with its own message, by its reader
        require_checkpoint(FLAGS.init_checkpoint, "init_checkpoint")


def main(argv):
    from electra_tf.models import load_checkpoint

    _check_flags(argv)
    if FLAGS.model == "classifier":
        _export_classifier()
        return
    if FLAGS.model == "tagger":
        _export_tagger()
        return
    if FLAGS.model == "squad":
        _export_squad()
        return
    with _loading():
        loaded = load_checkpoint(
            FLAGS.init_checkpoint,
            FLAGS.model,
            FLAGS.checkpoint_format,
            num_heads=FLAGS.num_heads,
            vocab_file=FLAGS.vocab_file,
            allow_missing_head=FLAGS.allow_missing_head,
            allow_embedding_mismatch=FLAGS.allow_embedding_mismatch,
            argument="init_checkpoint",
        )
    loaded.model.electra_config.check_sequence_length(FLAGS.max_seq_length)
    if FLAGS.model == "generator":
        from electra_tf.generator_export import export_generator

        tokenizer = loaded.tokenizer(do_lower_case=FLAGS.do_lower_case, strip_accents=FLAGS.strip_accents)
        with _writing():
            written = export_generator(loaded.model, tokenizer, FLAGS.output_dir, FLAGS.max_seq_length)
    else:
        from electra_tf.export import export_discriminator

        tokenizer = None
        if FLAGS.format == "saved_model":  # LiteRT and ONNX files take ids: no vocabulary needed
            tokenizer = loaded.tokenizer(do_lower_case=FLAGS.do_lower_case, strip_accents=FLAGS.strip_accents)
        with _writing():
            written = export_discriminator(
                loaded.model,
                tokenizer,
                FLAGS.output_dir,
                FLAGS.max_seq_length,
                export_format=FLAGS.format,
                quantize=FLAGS.quantize,
            )
    print(f"exported the {FLAGS.model} of {FLAGS.init_checkpoint} ({loaded.source_format}) to {written}")


def _loading():
    return progress.step(f"loading {FLAGS.init_checkpoint}")


def _writing():
    # Most of an export's time: tracing the signatures (the raw-text one tokenises in the graph) and saving, or
    # converting.
    written = FILE_NAMES.get(FLAGS.format, "the SavedModel")
    return progress.step(f"writing {written} to {FLAGS.output_dir}")


def _export_classifier():
    from finetune.classifier_text_inputs import is_pair_classifier
    from finetune.models.saved_classifier import load_text_classifier
    from finetune.models.serving import export_classifier

    with _loading():
        model = load_text_classifier(FLAGS.init_checkpoint)
    if FLAGS.format != "saved_model":
        with _writing():
            written = export_classifier(model, FLAGS.output_dir, export_format=FLAGS.format, quantize=FLAGS.quantize)
        print(f"exported the classifier of {FLAGS.init_checkpoint} (token ids) to {written}")
        return
    text_pairs = is_pair_classifier(FLAGS.init_checkpoint, FLAGS.text_inputs)
    with _writing():
        export_classifier(model, FLAGS.output_dir, text_pairs=text_pairs)
    inputs = "text_a, text_b" if text_pairs else "texts"
    print(f"exported the classifier of {FLAGS.init_checkpoint} (serve_text on {inputs}) to {FLAGS.output_dir}")


def _export_tagger():
    from finetune.models.saved_classifier import load_token_classifier
    from finetune.models.tagger_serving import export_tagger

    with _loading():
        model = load_token_classifier(FLAGS.init_checkpoint)
    with _writing():
        written = export_tagger(model, FLAGS.output_dir, export_format=FLAGS.format, quantize=FLAGS.quantize)
    served = "serve_text on texts: words, tags, offsets" if FLAGS.format == "saved_model" else "token ids"
    print(f"exported the tagger of {FLAGS.init_checkpoint} ({served}) to {written}")


def _export_squad():
    from finetune.models.squad_serving import export_squad, load_squad_model, squad_model_tokenizer

    with _loading():
        model = load_squad_model(FLAGS.init_checkpoint)
    tokenizer = None
    if FLAGS.format == "saved_model":  # LiteRT and ONNX files take ids: no vocabulary needed
        tokenizer = squad_model_tokenizer(
            FLAGS.init_checkpoint, FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.strip_accents
        )
    with _writing():
        written = export_squad(
            model,
            tokenizer,
            FLAGS.output_dir,
            FLAGS.max_seq_length,
            FLAGS.max_query_length,
            export_format=FLAGS.format,
            quantize=FLAGS.quantize,
        )
    print(f"exported the SQuAD model of {FLAGS.init_checkpoint} to {written}")


def console_main():
    """The installed console command."""
    cli.run(main, flag_names=FLAG_NAMES, precheck=_check_flags)


if __name__ == "__main__":
    console_main()
