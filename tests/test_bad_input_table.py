"""Bad input at every entry point gives one line naming the problem, a non-zero exit, no traceback, and
no output left behind.

Each case runs the entry point as users do (a subprocess) with inputs built in a fresh directory: {tmp} is that
directory, {records}/{vocab} are valid pre-training data, {pretrained} a briefly pre-trained tiny model, {shared} the
shared real data, and `output` names the path the command would write, which must not exist afterwards. About 90
processes: marked benchmark (`pytest -m benchmark tests/test_bad_input_table.py`). The checks that need no model
answer before TensorFlow is imported (`FAST_CASES`, not marked benchmark: each takes a fraction of a second).
"""

import os
import re
import subprocess
import sys
import time

import pytest

from tests import bad_input_files
from tests.conftest import REPO_ROOT

BUILD = "-m data_prep.commands.build_data"
PRETRAIN = "run_pretraining.py"
FINETUNE = "run_finetuning.py"
EXPORT = "export_model.py"
CONVERT = "convert_checkpoint.py"
SCORE = "-m electra_tf.commands.score"
ANALYZE = "-m electra_studies.commands.analyze"
RERANK = "-m electra_studies.commands.rerank"
# Lines TensorFlow's C++ runtime logs by itself (absl C++ log format), not part of the program's reporting.
RUNTIME_LOG_LINE = re.compile(r"^([EWIF]\d{4} |WARNING: All log messages before absl)")


PRETRAIN_OK = (
    "--pretrain_tfrecords={records}",
    "--vocab_file={vocab}",
    "--model_size=tiny",
    "--max_seq_length=32",
    "--train_batch_size=8",
    "--num_train_steps=2",
    "--noprogress_bar",
)
MODEL_DIR = "--model_dir={tmp}/out"
CORRUPT_SHARD = "--pretrain_tfrecords={tmp}/corrupt_shard/train.tfrecord"
LISTED_SHARD = "--pretrain_tfrecords={tmp}/listed_shard/train.tfrecord"

CASES = [
    # (id, entry point, args, fragment the error line must contain)
    # --- data_prep.commands.build_data
    ("build-missing-corpus", BUILD, ["--vocab_file={vocab}", "--output_dir={tmp}/out"], "--corpus"),
    (
        "build-corpus-no-match",
        BUILD,
        ["--corpus={tmp}/nothing-*.txt", "--vocab_file={vocab}", "--output_dir={tmp}/out"],
        "matches no file",
    ),
    (
        "build-corpus-is-dir",
        BUILD,
        ["--corpus={tmp}/empty_dir", "--vocab_file={vocab}", "--output_dir={tmp}/out"],
        "is a directory",
    ),
    (
        "build-empty-corpus",
        BUILD,
        ["--corpus={tmp}/empty.txt", "--vocab_file={vocab}", "--output_dir={tmp}/out"],
        "empty",
    ),
    (
        "build-corrupt-gzip",
        BUILD,
        ["--corpus={tmp}/corrupt.txt.gz", "--vocab_file={vocab}", "--output_dir={tmp}/out"],
        "corrupt.txt.gz",
    ),
    ("build-missing-vocab-flag", BUILD, ["--corpus={tmp}/corpus.txt", "--output_dir={tmp}/out"], "--vocab_file"),
    (
        "build-vocab-not-found",
        BUILD,
        ["--corpus={tmp}/corpus.txt", "--vocab_file={tmp}/none.txt", "--output_dir={tmp}/out"],
        "none.txt",
    ),
    (
        "build-empty-vocab",
        BUILD,
        ["--corpus={tmp}/corpus.txt", "--vocab_file={tmp}/empty_vocab.txt", "--output_dir={tmp}/out"],
        "empty_vocab.txt",
    ),
    ("build-missing-output", BUILD, ["--corpus={tmp}/corpus.txt", "--vocab_file={vocab}"], "--output_dir"),
    (
        "build-tiny-seq-length",
        BUILD,
        ["--corpus={tmp}/corpus.txt", "--vocab_file={vocab}", "--output_dir={tmp}/out", "--max_seq_length=2"],
        "max_seq_length",
    ),
    (
        "build-zero-shards",
        BUILD,
        ["--corpus={tmp}/corpus.txt", "--vocab_file={vocab}", "--output_dir={tmp}/out", "--num_shards=0"],
        "num_shards",
    ),
    (
        "build-seq-length-not-int",
        BUILD,
        ["--corpus={tmp}/corpus.txt", "--vocab_file={vocab}", "--output_dir={tmp}/out", "--max_seq_length=long"],
        "max_seq_length",
    ),
    # --- run_pretraining.py
    ("pretrain-missing-data-flag", PRETRAIN, [MODEL_DIR, "--model_size=tiny"], "--pretrain_tfrecords"),
    ("pretrain-missing-model-dir", PRETRAIN, list(PRETRAIN_OK), "--model_dir"),
    (
        "pretrain-data-no-match",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--pretrain_tfrecords={tmp}/none-*.tfrecord"],
        "matches no file",
    ),
    (
        "pretrain-empty-tfrecord",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--pretrain_tfrecords={tmp}/empty.tfrecord"],
        "empty.tfrecord",
    ),
    (
        "pretrain-corrupt-tfrecord",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--pretrain_tfrecords={tmp}/corrupt.tfrecord"],
        "corrupt.tfrecord",
    ),
    (
        "pretrain-text-as-tfrecord",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--pretrain_tfrecords={tmp}/text.tfrecord"],
        "text.tfrecord",
    ),
    ("pretrain-wrong-seq-length", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--max_seq_length=64"], "max_seq_length"),
    ("pretrain-vocab-not-found", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--vocab_file={tmp}/none.txt"], "none.txt"),
    ("pretrain-unknown-size", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--model_size=medium"], "unknown model size"),
    ("pretrain-zero-steps", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--num_train_steps=0"], "--num_train_steps"),
    ("pretrain-negative-lr", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--learning_rate=-1"], "--learning_rate"),
    ("pretrain-batch-not-int", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--train_batch_size=eight"], "train_batch_size"),
    ("pretrain-bad-precision", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--mixed_precision=float64"], "mixed_precision"),
    ("pretrain-bad-policy", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--nonfinite_loss=ignore"], "nonfinite_loss"),
    (
        "pretrain-tpu-without-strategy",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--tpu=grpc://10.0.0.1:8470"],
        "only used with --strategy=tpu",
    ),
    ("pretrain-tpu-strategy-without-tpu", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--strategy=tpu"], "needs --tpu"),
    (
        "pretrain-tpu-unreachable",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--strategy=tpu", "--tpu=local"],
        "no TPU reachable",
    ),
    (
        "pretrain-tpu-node-local-data",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--strategy=tpu", "--tpu=grpc://10.0.0.1:8470"],
        "gs://",
    ),
    ("pretrain-multi-worker-no-cluster", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--strategy=multi_worker"], "TF_CONFIG"),
    (
        "pretrain-worker-hosts-wrong-strategy",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--worker_hosts=a:1,b:2"],
        "--worker_hosts is only used with --strategy=multi_worker",
    ),
    (
        "pretrain-task-index-out-of-range",
        PRETRAIN,
        [
            *PRETRAIN_OK,
            MODEL_DIR,
            "--strategy=multi_worker",
            "--worker_hosts=127.0.0.1:1,127.0.0.1:2",
            "--task_index=2",
        ],
        "--task_index=2 is out of range",
    ),
    (
        "pretrain-worker-host-without-port",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--strategy=multi_worker", "--worker_hosts=127.0.0.1"],
        "not host:port",
    ),
    (
        "pretrain-jit-under-mirrored",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--strategy=mirrored", "--jit_compile"],
        "--jit_compile",
    ),
    (
        "pretrain-save-steps-vs-execution",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--save_checkpoints_steps=3", "--steps_per_execution=2"],
        "steps_per_execution",
    ),
    (
        "pretrain-init-checkpoint-missing",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--init_checkpoint={tmp}/none"],
        "/none does not exist: pass a model directory",
    ),
    (
        "pretrain-eval-data-missing",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--eval_tfrecords={tmp}/none-*.tfrecord"],
        "--eval_tfrecords=",
    ),
    ("pretrain-unexpected-argument", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "stray"], "unexpected arguments"),
    # --- corrupt shards: verified against the manifest before anything is written, or met while reading
    (
        "pretrain-corrupt-shard-verified",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, LISTED_SHARD],
        "listed_shard/train.tfrecord is corrupt: its sha256 differs",
    ),
    (
        "pretrain-corrupt-shard-while-training",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, CORRUPT_SHARD],
        "corrupt_shard/train.tfrecord holds a corrupt record at byte",
    ),
    (
        "pretrain-corrupt-shard-unverified",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, LISTED_SHARD, "--noverify_data"],
        "listed_shard/train.tfrecord holds a corrupt record at byte",
    ),
    (
        "pretrain-corrupt-eval-shard-verified",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--eval_tfrecords={tmp}/listed_shard/train.tfrecord"],
        "is corrupt: its sha256 differs",
    ),
    (
        "pretrain-corrupt-eval-shard-while-evaluating",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--eval_tfrecords={tmp}/corrupt_shard/train.tfrecord", "--eval_every_steps=1"],
        "holds a corrupt record at byte",
    ),
    (
        "analyze-corrupt-heldout-shard-verified",
        ANALYZE,
        [
            "--init_checkpoint={tmp}/garbage_checkpoint",
            "--data_dir={shared}",
            "--output_dir={tmp}/out",
            "--analyses=calibration",
            "--max_seq_length=32",
            "--heldout_tfrecords={tmp}/listed_shard/train.tfrecord",
        ],
        "is corrupt: its sha256 differs",
    ),
    # --- checks before TensorFlow
    (
        "pretrain-init-generator-missing",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--init_checkpoint={tmp}/empty_dir", "--init_generator_checkpoint={tmp}/none"],
        "--init_generator_checkpoint=",
    ),
    (
        "pretrain-checkpoint-steps-not-int",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--checkpoint_steps=a,b"],
        "--checkpoint_steps=a,b must be comma-separated integers",
    ),
    ("pretrain-eval-mode-without-data", PRETRAIN, [*PRETRAIN_OK, MODEL_DIR, "--mode=eval"], "--eval_tfrecords"),
    (
        "pretrain-negative-collective-timeout",
        PRETRAIN,
        [
            *PRETRAIN_OK,
            MODEL_DIR,
            "--strategy=multi_worker",
            "--worker_hosts=127.0.0.1:1,127.0.0.1:2",
            "--collective_timeout_seconds=-1",
        ],
        "--collective_timeout_seconds must be >= 0 (0: wait forever), got -1.0",
    ),
    (
        "pretrain-generator-without-init",
        PRETRAIN,
        [*PRETRAIN_OK, MODEL_DIR, "--init_generator_checkpoint={tmp}/x"],
        "--init_checkpoint",
    ),
    (
        "build-bad-encoding",
        BUILD,
        ["--corpus={tmp}/corpus.txt", "--vocab_file={vocab}", "--output_dir={tmp}/out", "--input_encoding=klingon"],
        "--input_encoding='klingon'",
    ),
    (
        "build-latin1-corpus",
        BUILD,
        ["--corpus={tmp}/scores.txt", "--vocab_file={vocab}", "--output_dir={tmp}/out"],
        "scores.txt line 1 is not valid utf-8 (byte 0xe8 at column 3); pass --input_encoding=latin-1",
    ),
    # --- run_finetuning.py
    (
        "finetune-unknown-task",
        FINETUNE,
        ["--task=SST-5", "--init_checkpoint={tmp}/empty_dir", "--data_dir={tmp}/glue", "--output_dir={tmp}/out"],
        "SST-5",
    ),
    (
        "finetune-missing-checkpoint",
        FINETUNE,
        ["--task=SST-2", "--init_checkpoint={tmp}/none", "--data_dir={tmp}/glue", "--output_dir={tmp}/out"],
        "none",
    ),
    (
        "finetune-missing-train-tsv",
        FINETUNE,
        [
            "--task=MRPC",
            "--init_checkpoint={tmp}/garbage_checkpoint",
            "--data_dir={tmp}/glue",
            "--output_dir={tmp}/out",
        ],
        "train.tsv",
    ),
    (
        "finetune-corrupt-checkpoint",
        FINETUNE,
        [
            "--task=SST-2",
            "--init_checkpoint={tmp}/garbage_checkpoint",
            "--data_dir={tmp}/empty_glue",
            "--output_dir={tmp}/out",
        ],
        "config.json is not valid JSON",
    ),
    (
        "finetune-bad-lr-decay",
        FINETUNE,
        [
            "--task=SST-2",
            "--init_checkpoint={tmp}/garbage_checkpoint",
            "--data_dir={tmp}/glue",
            "--output_dir={tmp}/out",
            "--layerwise_lr_decay=1.5",
        ],
        "layer-wise learning-rate decay",
    ),
    (
        "finetune-zero-trials",
        FINETUNE,
        [
            "--task=SST-2",
            "--init_checkpoint={tmp}/garbage_checkpoint",
            "--data_dir={tmp}/glue",
            "--output_dir={tmp}/out",
            "--num_trials=0",
        ],
        "num_trials",
    ),
    (
        "finetune-worker-hosts-wrong-strategy",
        FINETUNE,
        [
            "--task=SST-2",
            "--init_checkpoint={tmp}/garbage_checkpoint",
            "--data_dir={tmp}/glue",
            "--output_dir={tmp}/out",
            "--worker_hosts=a:1,b:2",
        ],
        "--worker_hosts is only used with --strategy=multi_worker",
    ),
    # --- run_finetuning.py: a foreign encoding in every reader
    *[
        (
            f"finetune-latin1-{name}",
            FINETUNE,
            ["--init_checkpoint={pretrained}", "--output_dir={tmp}/out", *args],
            f"latin1/{path} line {line} is not valid utf-8 (byte 0xe8 at column {column}); "
            "pass --input_encoding=latin-1 (or the file's encoding) or --encoding_errors=replace",
        )
        for name, path, line, column, args in [
            (
                "csv",
                "train.csv",
                2,
                4,
                [
                    "--task=classification",
                    "--train_file={tmp}/latin1/train.csv",
                    "--dev_file={tmp}/latin1/train.csv",
                    "--text_column=text",
                ],
            ),
            (
                "tsv",
                "train.tsv",
                2,
                3,
                [
                    "--task=classification",
                    "--train_file={tmp}/latin1/train.tsv",
                    "--dev_file={tmp}/latin1/train.tsv",
                    "--text_column=text",
                ],
            ),
            (
                "jsonl",
                "train.jsonl",
                1,
                13,
                [
                    "--task=classification",
                    "--train_file={tmp}/latin1/train.jsonl",
                    "--dev_file={tmp}/latin1/train.jsonl",
                    "--text_column=text",
                ],
            ),
            (
                "conll",
                "train.txt",
                1,
                3,
                ["--task=chunk", "--train_file={tmp}/latin1/train.txt", "--dev_file={tmp}/latin1/train.txt"],
            ),
            (
                "ptb",
                "train.pos",
                1,
                3,
                ["--task=pos", "--train_file={tmp}/latin1/train.pos", "--dev_file={tmp}/latin1/train.pos"],
            ),
            (
                "conllu",
                "train.conllu",
                1,
                5,
                ["--task=pos", "--train_file={tmp}/latin1/train.conllu", "--dev_file={tmp}/latin1/train.conllu"],
            ),
            (
                "fce",
                "fce.tsv",
                1,
                3,
                ["--task=ged", "--train_file={tmp}/latin1/fce.tsv", "--dev_file={tmp}/latin1/fce.tsv"],
            ),
            ("glue", "SST-2/train.tsv", 2, 3, ["--task=SST-2", "--data_dir={tmp}/latin1"]),
            ("squad", "train-v1.1.json", 1, 74, ["--task=squadv1", "--data_dir={tmp}/latin1"]),
        ]
    ],
    (
        "finetune-bad-encoding",
        FINETUNE,
        [
            "--task=SST-2",
            "--init_checkpoint={tmp}/empty_dir",
            "--data_dir={tmp}/glue",
            "--output_dir={tmp}/out",
            "--input_encoding=klingon",
        ],
        "--input_encoding='klingon' is not an encoding Python knows",
    ),
    (
        "finetune-bad-encoding-errors",
        FINETUNE,
        [
            "--task=SST-2",
            "--init_checkpoint={tmp}/empty_dir",
            "--data_dir={tmp}/glue",
            "--output_dir={tmp}/out",
            "--encoding_errors=skip",
        ],
        "--encoding_errors='skip'",
    ),
    (
        "finetune-own-train-file-missing",
        FINETUNE,
        [
            "--task=classification",
            "--init_checkpoint={tmp}/empty_dir",
            "--train_file={tmp}/none.csv",
            "--dev_file={tmp}/none.csv",
            "--text_column=text",
            "--output_dir={tmp}/out",
        ],
        "--train_file={tmp}/none.csv does not exist",
    ),
    (
        "finetune-tagging-file-missing",
        FINETUNE,
        [
            "--task=chunk",
            "--init_checkpoint={tmp}/empty_dir",
            "--train_file={tmp}/none.txt",
            "--dev_file={tmp}/none.txt",
            "--output_dir={tmp}/out",
        ],
        "--train_file={tmp}/none.txt",
    ),
    # --- the scorer
    ("score-missing-model-dir", SCORE, ["some text"], "--model_dir is required"),
    ("score-model-dir-not-found", SCORE, ["--model_dir={tmp}/none", "some text"], "--model_dir={tmp}/none does not"),
    ("score-nothing-to-score", SCORE, ["--model_dir={tmp}/empty_dir"], "nothing to score"),
    (
        "score-input-file-missing",
        SCORE,
        ["--model_dir={tmp}/empty_dir", "--input_file={tmp}/none.txt"],
        "--input_file={tmp}/none.txt does not exist",
    ),
    (
        "score-latin1-input-file",
        SCORE,
        ["--model_dir={tmp}/empty_dir", "--input_file={tmp}/scores.txt"],
        "scores.txt line 1 is not valid utf-8 (byte 0xe8 at column 3); pass --input_encoding=latin-1",
    ),
    (
        "score-bad-encoding",
        SCORE,
        ["--model_dir={tmp}/empty_dir", "--input_file={tmp}/scores.txt", "--input_encoding=klingon"],
        "--input_encoding='klingon'",
    ),
    ("score-corrupt-model", SCORE, ["--model_dir={tmp}/garbage_checkpoint", "some text"], "garbage_checkpoint"),
    # --- the analysis
    ("analyze-missing-flags", ANALYZE, [], "--init_checkpoint is required"),
    (
        "analyze-checkpoint-not-found",
        ANALYZE,
        ["--init_checkpoint={tmp}/none", "--data_dir={tmp}", "--output_dir={tmp}/out"],
        "--init_checkpoint={tmp}/none does not",
    ),
    (
        "analyze-unknown-analysis",
        ANALYZE,
        ["--init_checkpoint={tmp}/empty_dir", "--data_dir={tmp}", "--output_dir={tmp}/out", "--analyses=sentiment"],
        "--analyses=sentiment: unknown",
    ),
    (
        "analyze-data-dir-lacks-fce",
        ANALYZE,
        ["--init_checkpoint={tmp}/empty_dir", "--data_dir={tmp}/empty_dir", "--output_dir={tmp}/out", "--analyses=ged"],
        "en_fce_dev.tsv does not",
    ),
    (
        "analyze-heldout-no-match",
        ANALYZE,
        [
            "--init_checkpoint={tmp}/empty_dir",
            "--data_dir={shared}",
            "--output_dir={tmp}/out",
            "--analyses=calibration",
            "--heldout_tfrecords={tmp}/none-*.tfrecord",
        ],
        "matches no file",
    ),
    (
        "analyze-compare-without-representations",
        ANALYZE,
        [
            "--init_checkpoint={tmp}/empty_dir",
            "--data_dir={shared}",
            "--output_dir={tmp}/out",
            "--analyses=ged",
            "--compare_checkpoint={tmp}/empty_dir",
        ],
        "--compare_checkpoint is read by the representations analysis",
    ),
    (
        "analyze-compare-not-found",
        ANALYZE,
        [
            "--init_checkpoint={tmp}/empty_dir",
            "--data_dir={shared}",
            "--output_dir={tmp}/out",
            "--compare_checkpoint={tmp}/none",
        ],
        "--compare_checkpoint={tmp}/none does not exist",
    ),
    (
        "analyze-bad-encoding",
        ANALYZE,
        [
            "--init_checkpoint={tmp}/empty_dir",
            "--data_dir={shared}",
            "--output_dir={tmp}/out",
            "--input_encoding=klingon",
        ],
        "--input_encoding='klingon' is not an encoding Python knows",
    ),
    *[
        (
            f"analyze-latin1-{name}",
            ANALYZE,
            [
                "--init_checkpoint={pretrained}",
                "--data_dir={tmp}/latin1/analysis",
                "--output_dir={tmp}/out",
                f"--analyses={name}",
            ],
            f"{{tmp}}/latin1/analysis/{path} line 1 is not valid utf-8 (byte 0xe8 at column {column}); pass "
            "--input_encoding=latin-1 (or the file's encoding) or --encoding_errors=replace",
        )
        for name, path, column in (("ged", "ged/fce/en_fce_dev.tsv", 3), ("blimp", "blimp/island.jsonl", 54))
    ],
    (
        "analyze-corrupt-checkpoint",
        ANALYZE,
        [
            "--init_checkpoint={tmp}/garbage_checkpoint",
            "--data_dir={shared}",
            "--output_dir={tmp}/out",
            "--analyses=ged",
        ],
        "garbage_checkpoint",
    ),
    # --- the n-best re-ranker
    ("rerank-missing-flags", RERANK, [], "--nbest, --init_checkpoint and --output_dir are required"),
    (
        "rerank-nbest-missing",
        RERANK,
        ["--nbest={tmp}/none.json", "--init_checkpoint={tmp}/empty_dir", "--output_dir={tmp}/out"],
        "--nbest={tmp}/none.json does not exist",
    ),
    (
        "rerank-nbest-malformed",
        RERANK,
        ["--nbest={tmp}/nbest_malformed.json", "--init_checkpoint={tmp}/empty_dir", "--output_dir={tmp}/out"],
        "nbest_malformed.json utterance 1 is not valid JSON (line 2 column 17: Expecting value); fix the file or pass "
        "--nbest=",
    ),
    (
        "rerank-hypotheses-not-a-list",
        RERANK,
        ["--nbest={tmp}/nbest_not_list.jsonl", "--init_checkpoint={tmp}/empty_dir", "--output_dir={tmp}/out"],
        "nbest_not_list.jsonl line 2 (utterance 1): `hypotheses` must be a non-empty list of hypothesis strings",
    ),
    (
        "rerank-unknown-scorer",
        RERANK,
        [
            "--nbest={tmp}/nbest.json",
            "--init_checkpoint={tmp}/empty_dir",
            "--output_dir={tmp}/out",
            "--scorers=disc_mean,bleu",
        ],
        "--scorers=bleu: unknown (available: disc_mean, disc_sum, pll, electric)",
    ),
    (
        "rerank-checkpoint-not-found",
        RERANK,
        ["--nbest={tmp}/nbest.json", "--init_checkpoint={tmp}/none", "--output_dir={tmp}/out"],
        "--init_checkpoint={tmp}/none does not exist",
    ),
    (
        "rerank-corrupt-checkpoint",
        RERANK,
        ["--nbest={tmp}/nbest.json", "--init_checkpoint={tmp}/garbage_checkpoint", "--output_dir={tmp}/out"],
        "garbage_checkpoint",
    ),
    (
        "rerank-pll-without-generator",
        RERANK,
        ["--nbest={tmp}/nbest.json", "--init_checkpoint={pretrained}", "--output_dir={tmp}/out", "--scorers=pll"],
        "--scorers=pll needs the checkpoint's generator",
    ),
    # --- export_model.py
    ("export-missing-flags", EXPORT, [], "--init_checkpoint and --output_dir are required"),
    ("export-checkpoint-not-found", EXPORT, ["--init_checkpoint={tmp}/none", "--output_dir={tmp}/out"], "none"),
    (
        "export-empty-checkpoint-dir",
        EXPORT,
        ["--init_checkpoint={tmp}/empty_dir", "--output_dir={tmp}/out"],
        "empty_dir",
    ),
    (
        "export-corrupt-checkpoint",
        EXPORT,
        ["--init_checkpoint={tmp}/garbage_checkpoint", "--output_dir={tmp}/out"],
        "garbage_checkpoint",
    ),
    (
        "export-bad-model-kind",
        EXPORT,
        ["--init_checkpoint={tmp}/empty_dir", "--output_dir={tmp}/out", "--model=tagger"],
        "model",
    ),
    # --- convert_checkpoint.py
    ("convert-missing-flags", CONVERT, [], "--from and --to are required"),
    ("convert-source-not-found", CONVERT, ["--from={tmp}/none", "--to={tmp}/out"], "none"),
    ("convert-empty-source-dir", CONVERT, ["--from={tmp}/empty_dir", "--to={tmp}/out"], "empty_dir"),
    ("convert-corrupt-source", CONVERT, ["--from={tmp}/garbage_checkpoint", "--to={tmp}/out"], "garbage_checkpoint"),
    ("convert-bad-format", CONVERT, ["--from={tmp}/empty_dir", "--to={tmp}/out", "--to_format=onnx"], "to_format"),
]


# Known misbehaviour in a file owned elsewhere (reported, not fixed here); strict, so the fix shows up.
KNOWN_FAILURES = {}  # case id -> reason; strict xfail, so a fixed case must leave this table


def _params():
    for case_id, *values in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[case_id])] if case_id in KNOWN_FAILURES else []
        yield pytest.param(*values, id=case_id, marks=marks)


def _run_case(request, tmp_path, entry_point, args, fragment, prefix=()):
    """Runs one case in `tmp_path`; returns (completed process, the fragment with its placeholders filled, seconds
    the process took)."""
    bad_input_files.write_inputs(tmp_path)
    records, vocab = request.getfixturevalue("pretraining_data")
    bad_input_files.write_corrupt_shards(tmp_path, records)
    values = dict(tmp=tmp_path, records=records, vocab=vocab, shared=REPO_ROOT.parent / "shared" / "data")
    if any("{pretrained}" in arg for arg in args):
        values["pretrained"] = request.getfixturevalue("pretrained_tiny")
    args = [arg.format(**values) for arg in args]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_CONFIG", None)
    program = entry_point.split() if entry_point.startswith("-m ") else [str(REPO_ROOT / entry_point)]
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, *prefix, *program, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    return result, fragment.format(**values), time.perf_counter() - start


def _check_one_line(result, fragment, tmp_path):
    lines = [line for line in result.stderr.splitlines() if line.strip() and not RUNTIME_LOG_LINE.match(line)]
    errors = [line for line in lines if "error" in line.lower()]
    assert result.returncode != 0, result.stdout[-1000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(errors) == 1 and fragment in errors[0], result.stderr[-2000:]
    assert not (tmp_path / "out").exists(), f"partial output left: {os.listdir(tmp_path / 'out')}"


@pytest.mark.benchmark
@pytest.mark.parametrize("entry_point, args, fragment", list(_params()))
def test_bad_input_gives_one_line_error_and_leaves_nothing(request, tmp_path, entry_point, args, fragment):
    result, fragment, _ = _run_case(request, tmp_path, entry_point, args, fragment)
    _check_one_line(result, fragment, tmp_path)


# Cases whose check needs no model: answered before TensorFlow is imported.
FAST_CASES = [
    "build-missing-corpus",
    "build-corpus-no-match",
    "build-corpus-is-dir",
    "build-missing-vocab-flag",
    "build-vocab-not-found",
    "build-missing-output",
    "build-bad-encoding",
    "pretrain-missing-data-flag",
    "pretrain-missing-model-dir",
    "pretrain-data-no-match",
    "pretrain-vocab-not-found",
    "pretrain-zero-steps",
    "pretrain-negative-lr",
    "pretrain-tpu-node-local-data",
    "pretrain-worker-hosts-wrong-strategy",
    "pretrain-jit-under-mirrored",
    "pretrain-save-steps-vs-execution",
    "pretrain-init-checkpoint-missing",
    "pretrain-eval-data-missing",
    "pretrain-unexpected-argument",
    "pretrain-init-generator-missing",
    "pretrain-checkpoint-steps-not-int",
    "pretrain-eval-mode-without-data",
    "pretrain-generator-without-init",
    "finetune-unknown-task",
    "finetune-missing-checkpoint",
    "finetune-bad-lr-decay",
    "finetune-zero-trials",
    "finetune-worker-hosts-wrong-strategy",
    "finetune-bad-encoding",
    "finetune-bad-encoding-errors",
    "finetune-own-train-file-missing",
    "finetune-tagging-file-missing",
    "export-missing-flags",
    "export-checkpoint-not-found",
    "convert-missing-flags",
    "convert-source-not-found",
    "score-missing-model-dir",
    "score-model-dir-not-found",
    "score-nothing-to-score",
    "score-input-file-missing",
    "score-latin1-input-file",
    "score-bad-encoding",
    "analyze-missing-flags",
    "analyze-checkpoint-not-found",
    "analyze-unknown-analysis",
    "analyze-data-dir-lacks-fce",
    "analyze-heldout-no-match",
    "analyze-compare-without-representations",
    "analyze-compare-not-found",
    "rerank-missing-flags",
    "rerank-nbest-missing",
    "rerank-nbest-malformed",
    "rerank-hypotheses-not-a-list",
    "rerank-unknown-scorer",
    "rerank-checkpoint-not-found",
    "pretrain-negative-collective-timeout",
    "analyze-bad-encoding",
]
# Reports, when the process ends, whether TensorFlow was ever imported; then runs the entry point as `python` does.
_REPORT_TENSORFLOW = (
    "import atexit, runpy, sys; atexit.register(lambda: print('tensorflow imported:', "
    "'tensorflow' in sys.modules, file=sys.stderr)); program = sys.argv[1]; "
    "sys.argv = sys.argv[1:] if program != '-m' else sys.argv[2:]; "
    "runpy.run_path(program, run_name='__main__') if program != '-m' else "
    "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)"
)


@pytest.mark.parametrize("case_id", FAST_CASES)
def test_checks_that_need_no_model_answer_before_tensorflow(request, tmp_path, case_id):
    _, entry_point, args, fragment = next(case for case in CASES if case[0] == case_id)
    result, fragment, _ = _run_case(request, tmp_path, entry_point, args, fragment, prefix=("-c", _REPORT_TENSORFLOW))
    assert "tensorflow imported: False" in result.stderr, result.stderr[-2000:]
    result.stderr = result.stderr.replace("tensorflow imported: False", "")
    # Not timed here (a loaded CI machine makes wall time meaningless): without TensorFlow the answer costs the
    # interpreter's start-up only.
    _check_one_line(result, fragment, tmp_path)


def test_the_table_is_large_enough():
    assert len(CASES) >= 90 and {case[1] for case in CASES} == {
        BUILD,
        PRETRAIN,
        FINETUNE,
        EXPORT,
        CONVERT,
        SCORE,
        ANALYZE,
        RERANK,
    }
    assert set(FAST_CASES) <= {case[0] for case in CASES}
