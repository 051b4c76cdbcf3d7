"""Calibration on the detector's own task in its own domain: held-out pre-training TFRecords (e.g. the shards a run
kept out with --eval_tfrecords) corrupted by the checkpoint's generator as in pre-training (`corruption`), every real
piece but [CLS] and [SEP] scored. Threshold and temperature are fitted on the even-numbered windows and reported on
both halves (`pos.split_calibration`); every piece goes to `heldout_pieces.jsonl`, from which the summary is
recomputed."""

import os

import numpy as np

from electra_studies.discriminator_analysis.corruption import corrupt
from electra_studies.discriminator_analysis.pos import split_calibration
from electra_studies.discriminator_analysis.word_scores import window_logits
from electra_tf.analysis import detection_metrics
from electra_tf.errors import DataError
from electra_tf.io_utils import atomic_write_json_lines, read_json_lines

PIECES_FILE = "heldout_pieces.jsonl"
BATCH_SIZE = 16


def run_heldout(discriminator, generator, file_patterns, output_dir, max_seq_length=128, max_windows=1024, seed=0):
    """Scores up to `max_windows` records of `file_patterns`, writes `heldout_pieces.jsonl` (`window`, `position`,
    `replaced`, `p_replaced`), returns `split_calibration` of the pieces."""
    from electra_tf.data.pretraining_dataset import corrupt_records_reported, make_pretraining_dataset

    config = generator.electra_config
    dataset = make_pretraining_dataset(
        file_patterns, max_seq_length, BATCH_SIZE, is_training=False, argument="heldout_tfrecords"
    )
    pieces, windows = [], 0
    with corrupt_records_reported({"heldout_tfrecords": file_patterns}):
        batches = [batch for _, batch in zip(range(-(-max_windows // BATCH_SIZE)), dataset)]
    for batch_index, batch in enumerate(batches):
        if windows >= max_windows:
            break
        keep = max_windows - windows
        inputs = {
            "token_ids": batch["input_ids"].numpy()[:keep],
            "segment_ids": batch["segment_ids"].numpy()[:keep],
            "padding_mask": batch["input_mask"].numpy()[:keep],
        }
        corruption = corrupt(generator, inputs, seed=seed * 100003 + batch_index)
        p = detection_metrics.sigmoid(window_logits(discriminator, {**inputs, "token_ids": corruption.token_ids}))
        scored = (inputs["padding_mask"] == 1) & ~np.isin(inputs["token_ids"], (config.cls_id, config.sep_id))
        for row, position in zip(*np.nonzero(scored)):
            pieces.append(
                {
                    "window": windows + int(row),
                    "position": int(position),
                    "replaced": int(corruption.replaced[row, position]),
                    "p_replaced": float(p[row, position]),
                }
            )
        windows += len(inputs["token_ids"])
    if windows < 2:
        raise DataError(
            f"{file_patterns}: fewer than {BATCH_SIZE} records; heldout_tfrecords needs held-out "
            "pre-training shards (electra-build-data output)",
            arguments=("heldout_tfrecords",),
        )
    path = os.path.join(output_dir, PIECES_FILE)
    atomic_write_json_lines(path, pieces)
    return summary_from_pieces(path)


def summary_from_pieces(path):
    pieces = read_json_lines(path)
    return split_calibration(
        np.array([piece["replaced"] for piece in pieces]),
        np.array([piece["p_replaced"] for piece in pieces]),
        np.array([piece["window"] for piece in pieces]),
    )
