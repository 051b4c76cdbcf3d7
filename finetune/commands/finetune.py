"""Fine-tune a pre-trained ELECTRA discriminator: a GLUE task, SQuAD (--task=squad for 2.0, squadv1 for 1.1), token
tagging (chunk, ner, pos, ged, tagging) or your own CSV / TSV / JSON-lines files (classification, regression).

    electra-finetune --flagfile=configs/glue_mrpc.flags --model_size=small \\
        --init_checkpoint=<model_dir>/pretrained --data_dir=<GLUE dir> --output_dir=<dir> --num_trials=10

Hyperparameters not given take the reference's values for --task and --model_size. Writes results.json (each
trial's dev metrics; median, mean and std per metric), dev predictions in glue_eval's format and, when the test file
exists, GLUE-submission test predictions; see finetune/runner.py and finetune/glue/task.py for the layout.

    electra-finetune --flagfile=configs/squad.flags --model_size=small \\
        --init_checkpoint=<model_dir>/pretrained --data_dir=<dir with train-v2.0.json, dev-v2.0.json> --output_dir=<dir>

SQuAD writes results.json and per trial the official predictions.json, nbest_predictions.json (and null_odds.json for
2.0); see finetune/squad/task.py.

    electra-finetune --task=chunk --init_checkpoint=<model_dir>/pretrained \\
        --train_file=conll2000/train.txt --dev_file=conll2000/test.txt --output_dir=<dir>

Tagging (chunk, ner, pos, ged, tagging) reads CoNLL-style column files and writes per trial dev_predictions.txt
(word gold predicted); see finetune/tagging/task.py.

    electra-finetune --task=classification --init_checkpoint=<model_dir>/pretrained \\
        --train_file=train.csv --dev_file=dev.csv --text_column=review --label_column=sentiment --output_dir=<dir>

Own files keep their label strings: per trial dev_predictions.tsv (line, label, prediction); see
finetune/own_data/task.py.
"""

import dataclasses

from absl import flags

from electra_tf import cli

# TensorFlow-free, unlike the modules that use these choices: --help stays fast.
from electra_tf.training.choices import PRECISIONS, STRATEGIES

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "task",
    None,
    "GLUE task: CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE or WNLI; squad "
    "(SQuAD 2.0) or squadv1 (SQuAD 1.1); a tagging task: chunk, ner, pos, ged or tagging; or "
    "classification / regression on your own --train_file and --dev_file.",
)
flags.DEFINE_string(
    "init_checkpoint", None, "Pre-trained model directory (electra-pretrain writes <model_dir>/pretrained)."
)
flags.DEFINE_boolean(
    "allow_embedding_mismatch",
    False,
    "For a Hugging Face discriminator/ + generator/ pair whose embedding copies differ: keep the discriminator's.",
)
flags.DEFINE_string(
    "data_dir",
    None,
    "GLUE directory holding <TASK>/train.tsv, dev.tsv (and test.tsv), as written by download_glue_data.py.",
)
flags.DEFINE_string("output_dir", None, "Where results.json, predictions and models are written.")
flags.DEFINE_string(
    "model_size",
    None,
    "Size whose reference learning rate and layer-wise decay are used (tiny, "
    "small, small++, base, large); default: read from --init_checkpoint's architecture.",
)
flags.DEFINE_integer(
    "num_trials",
    1,
    "Fine-tuning runs from the same checkpoint with seeds seed, seed+1, ...; the "
    "paper reports the median of (at least) 10.",
)
flags.DEFINE_integer("seed", 0, "Seed of the first trial (head initialisation, dropout, data order).")
flags.DEFINE_float("learning_rate", None, "Peak learning rate (default: 3e-4 small, 1e-4 base, 5e-5 large).")
flags.DEFINE_integer("num_train_epochs", None, "Epochs (default: 3; RTE and STS-B 10).")
flags.DEFINE_integer("train_batch_size", None, "Global batch size of one optimizer update (default 32).")
flags.DEFINE_integer(
    "gradient_accumulation_steps",
    1,
    "Run each batch as this many micro-batches of "
    "--train_batch_size / this examples in turn, adding up their gradients: the update of the whole "
    "batch with the activation memory of a micro-batch. Steps and the learning-rate schedule count "
    "updates.",
)
flags.DEFINE_integer("eval_batch_size", 128, "Batch size for predictions.")
flags.DEFINE_integer("max_seq_length", None, "Sequence length (default 128).")
flags.DEFINE_float("layerwise_lr_decay", None, "Layer-wise learning-rate decay (default 0.8; large 0.9; 1 = none).")
flags.DEFINE_enum(
    "layerwise_lr_variant",
    "reference",
    ["reference", "paper"],
    "reference: embeddings get decay^(L+2) as the reference code; paper: decay^(L+1) as the paper.",
)
flags.DEFINE_float(
    "weight_decay", 0.01, "Decoupled weight decay, not on LayerNorm and biases (reference code 0.01; the paper 0)."
)
flags.DEFINE_float("warmup_fraction", 0.1, "Fraction of the steps with linear warm-up.")
flags.DEFINE_float("adam_epsilon", 1e-6, "Adam epsilon.")
flags.DEFINE_boolean("bias_correction", False, "Adam bias correction (the reference has none).")
flags.DEFINE_integer(
    "lora_rank",
    None,
    "LoRA: freeze the pre-trained encoder and train rank-N factors of its query "
    "and value projections (and the task head) instead; saved models and exports hold the merged "
    "kernels. Default: full fine-tuning.",
)
flags.DEFINE_float(
    "lora_alpha", None, "LoRA's scale is --lora_alpha / --lora_rank (default --lora_rank: a scale of 1)."
)
flags.DEFINE_string("vocab_file", None, "Vocabulary (default: vocab.txt of --init_checkpoint).")
flags.DEFINE_boolean(
    "do_lower_case",
    None,
    "Lower-case text (default: what --init_checkpoint records; lower-case if it records nothing).",
)
flags.DEFINE_boolean(
    "strip_accents", None, "Strip accents (default: what --init_checkpoint records, else --do_lower_case)."
)
flags.DEFINE_enum(
    "data_source",
    "tsv",
    ["tsv", "json", "tfds"],
    "Files in --data_dir (GLUE TSV; SQuAD's official "
    "JSON with tsv or json) or --train_file/--dev_file (tagging), or tensorflow-datasets glue / squad / "
    "conll2003 (--task=ner, chunk or pos).",
)
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets data directory, with --data_source=tfds.")
flags.DEFINE_boolean(
    "tfds_download", False, "Let tensorflow-datasets download and prepare the dataset (--data_source=tfds)."
)
flags.DEFINE_enum("strategy", "default", list(STRATEGIES), "tf.distribute strategy.")
flags.DEFINE_string("tpu", None, "TPU name or grpc:// address, with --strategy=tpu.")
flags.DEFINE_integer(
    "num_cpu_devices",
    0,
    "Split the CPU into this many logical devices (for --strategy=mirrored on a CPU-only machine).",
)
flags.DEFINE_enum("mixed_precision", "float32", list(PRECISIONS), "Keras dtype policy.")
flags.DEFINE_boolean(
    "pad_to_max_length",
    False,
    "Pad every batch to --max_seq_length, as the reference, instead of "
    "batching examples of similar length cut to their longest (always on with --strategy=tpu).",
)
flags.DEFINE_boolean("save_models", False, "Save each trial's fine-tuned model (raw text in) as trial_<k>/model.keras.")
flags.DEFINE_boolean(
    "keep_best_epoch",
    False,
    "End each trial on the weights of the epoch with the lowest dev loss "
    "(the dev split is then also the selection set: its scores are optimistic).",
)
flags.DEFINE_boolean("progress_bar", True, "Keras progress bar (otherwise one line per epoch).")
flags.DEFINE_integer(
    "save_checkpoints_steps",
    None,
    "Also save the trial's state every N batches (it is always saved "
    "at the end of every epoch); rerunning the command resumes an interrupted run from there.",
)
flags.DEFINE_boolean(
    "deterministic",
    False,
    "TensorFlow op determinism: an interrupted and resumed run ends with "
    "the weights and dev results of an uninterrupted one.",
)
flags.DEFINE_integer(
    "max_train_examples",
    None,
    "Train on the first N examples only (SQuAD: questions; tagging: "
    "sentences; before MRPC/STS-B's swapped pairs are added).",
)
flags.DEFINE_integer(
    "max_eval_examples", None, "Evaluate on the first N examples of each evaluation split (dev, test) only."
)
# SQuAD only.
flags.DEFINE_enum(
    "squad_head",
    "joint",
    ["joint", "simple"],
    "SQuAD: joint = the paper's start-conditioned end "
    "head with a 20 x 20 beam (and for 2.0 an answerability classifier); simple = independent start/end.",
)
flags.DEFINE_integer("doc_stride", 128, "SQuAD: tokens between the starts of consecutive context windows.")
flags.DEFINE_integer("max_query_length", 64, "SQuAD: questions are cut to this many word pieces.")
flags.DEFINE_integer("n_best_size", 20, "SQuAD: n-best answers kept per question (and the joint head's beam).")
flags.DEFINE_integer("max_answer_length", 30, "SQuAD: longest answer, in word pieces.")
flags.DEFINE_float("null_score_threshold", 0.0, 'SQuAD 2.0: answer "" when the null odds exceed this.')
# Tagging, classification and regression on files of your own.
flags.DEFINE_string(
    "train_file",
    None,
    "Tagging: training file, CoNLL columns (one word per line, a blank line "
    "between sentences; -DOCSTART- lines are document breaks), .conllu, .pos, or FCE's token TSV for "
    "--task=ged. classification/regression: a .csv, .tsv or .jsonl file.",
)
flags.DEFINE_string(
    "dev_file", None, "Tagging, classification, regression: the file scored after training (same format)."
)
flags.DEFINE_string(
    "test_file", None, "Tagging, classification, regression: a further file predicted (and scored when labelled)."
)
flags.DEFINE_integer("word_column", 0, "Tagging: column of the word (0-based).")
flags.DEFINE_integer("tag_column", -1, "Tagging: column of the tag (0-based; -1 the last).")
# Own files (--task=classification or regression) in CSV, TSV (with a header row) or JSON lines.
flags.DEFINE_string("text_column", None, "classification/regression: column (or JSON key) of the text.")
flags.DEFINE_string("text_pair_column", None, "classification/regression: column of the second text of a pair.")
flags.DEFINE_string(
    "input_encoding",
    "utf-8",
    "Encoding of every data file read (own files, tagging files, GLUE TSV, "
    "SQuAD JSON): a Python codec name such as latin-1 or cp1252.",
)
flags.DEFINE_string(
    "encoding_errors",
    "strict",
    "Bytes not valid in --input_encoding: strict (stop naming file, line "
    "and column), replace, ignore, or another Python codecs error handler.",
)
flags.DEFINE_string(
    "label_column",
    "label",
    "classification/regression: column of the label (strings are kept: "
    "predictions and the exported model give them back).",
)


def _job(argv):
    """The validated `FinetuningJob` of the flags (files and init_checkpoint checked to exist); needs no TensorFlow."""
    from absl import app

    from finetune.runner import FinetuningJob

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    job = FinetuningJob(**{field.name: getattr(FLAGS, field.name) for field in dataclasses.fields(FinetuningJob)})
    job.validate()
    return job


def main(argv):
    from finetune.runner import run

    run(_job(argv), extra_files={"flags.txt": FLAGS.flags_into_string()})


def console_main():
    """The installed console command."""
    cli.run(main, precheck=_job)


if __name__ == "__main__":
    console_main()
