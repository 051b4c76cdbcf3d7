"""The output of an example does not depend on its batch's padding: logits of the same examples padded to 128 and
cut to their batch's longest agree within 1e-5, for the classifier, the tagger and both SQuAD heads, and predicting
in length buckets (`finetune.batching.predict_in_buckets`) gives the padded batches' outputs in the original order."""

import dataclasses

import keras
import numpy as np
import pytest

from electra_tf.config import PRESETS
from electra_tf.models import build_discriminator
from finetune.batching import predict_in_buckets
from finetune.models import ElectraTextClassifier, ElectraTokenClassifier
from finetune.models.squad_heads import MASKED_LOGIT
from finetune.models.squad_model import ElectraSquadModel

CONFIG = dataclasses.replace(PRESETS["tiny"], vocab_size=64, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
MAX_SEQ_LENGTH = 128
LENGTHS = [9, 23, 14, 40, 5, 31, 17, 12]
TOLERANCE = 1e-5


def _padded_examples(seed=0):
    """Sentence pairs of LENGTHS tokens padded to 128: [CLS] A [SEP] B [SEP], segment 1 on B, zeros after."""
    rng = np.random.default_rng(seed)
    n = len(LENGTHS)
    ids, segments, mask = (np.zeros((n, MAX_SEQ_LENGTH), np.int32) for _ in range(3))
    for row, length in enumerate(LENGTHS):
        ids[row, :length] = rng.integers(5, 64, length)
        split = length // 2
        ids[row, [0, split, length - 1]] = [CONFIG.cls_id, CONFIG.sep_id, CONFIG.sep_id]
        segments[row, split + 1 : length] = 1
        mask[row, :length] = 1
    return ids, segments, mask


def _cut(inputs):
    """`inputs` cut to the longest example of the batch (its padding mask's longest row)."""
    mask_name = "padding_mask" if "padding_mask" in inputs else "input_mask"
    longest = int(inputs[mask_name].sum(axis=1).max())
    return {name: value[:, :longest] if value.ndim == 2 else value for name, value in inputs.items()}, longest


def _backbone():
    keras.utils.set_random_seed(0)
    return build_discriminator(CONFIG).backbone


def _numpy(outputs):
    return {name: keras.ops.convert_to_numpy(value) for name, value in outputs.items()}


@pytest.mark.parametrize("regression", [False, True])
def test_classifier_logits_do_not_depend_on_padding(regression):
    model = ElectraTextClassifier(_backbone(), num_classes=3, regression=regression)
    ids, segments, mask = _padded_examples()
    padded = {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}
    cut, longest = _cut(padded)
    assert longest == max(LENGTHS) < MAX_SEQ_LENGTH
    expected = keras.ops.convert_to_numpy(model(padded, training=False))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model(cut, training=False)), expected, atol=TOLERANCE)
    np.testing.assert_allclose(predict_in_buckets(model, padded, batch_size=3), expected, atol=TOLERANCE)


def test_tagger_logits_do_not_depend_on_padding():
    model = ElectraTokenClassifier(_backbone(), tags=["A", "B", "C", "D"])
    ids, _, mask = _padded_examples(1)
    positions = np.zeros_like(ids)
    for row, length in enumerate(LENGTHS):
        positions[row, : length - 2] = np.arange(1, length - 1)  # one word per piece between [CLS] and [SEP]
    padded = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask, "word_positions": positions}
    cut, longest = _cut(padded)
    expected = keras.ops.convert_to_numpy(model(padded, training=False))
    assert expected.shape == (len(LENGTHS), MAX_SEQ_LENGTH, 4)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(model(cut, training=False)), expected[:, :longest], atol=TOLERANCE
    )
    bucketed = predict_in_buckets(model, padded, batch_size=3, sequence_outputs=True)
    for row, length in enumerate(LENGTHS):
        np.testing.assert_allclose(bucketed[row, : length - 2], expected[row, : length - 2], atol=TOLERANCE)


def _valid(outputs):
    """Per output, where it describes a real candidate: the joint head's beam is padded with masked positions (log-prob
    near -1e4, never an answer) when a window has fewer than `beam_size` context tokens, and which masked positions
    fill it depends on how many there are."""
    if "start_top_log_probs" not in outputs:
        return {name: np.ones(value.shape, bool) for name, value in outputs.items()}
    start = outputs["start_top_log_probs"] > MASKED_LOGIT / 2
    end = start[:, :, None] & (outputs["end_top_log_probs"] > MASKED_LOGIT / 2)
    return {
        name: start
        if name.startswith("start_top")
        else end
        if name.startswith("end_top")
        else np.ones(value.shape, bool)
        for name, value in outputs.items()
    }


def _assert_same_candidates(outputs, expected):
    valid = _valid(expected)
    assert set(outputs) == set(expected)
    for name, value in outputs.items():
        assert valid[name].any(), name
        if name.endswith("_index"):
            np.testing.assert_array_equal(value[valid[name]], expected[name][valid[name]], err_msg=name)
        else:
            np.testing.assert_allclose(value[valid[name]], expected[name][valid[name]], atol=TOLERANCE, err_msg=name)


@pytest.mark.parametrize("head", ["simple", "joint"])
def test_squad_head_outputs_do_not_depend_on_padding(head):
    model = ElectraSquadModel(_backbone(), head=head, version_2=True, beam_size=4)
    ids, segments, mask = _padded_examples(2)
    padded = {"input_ids": ids, "segment_ids": segments, "input_mask": mask}
    cut, longest = _cut(padded)
    expected = _numpy(model(padded, training=False))
    outputs = _numpy(model(cut, training=False))
    for name in ("start_logits", "end_logits"):
        if name in outputs:
            outputs[name] = np.pad(outputs[name], [(0, 0), (0, MAX_SEQ_LENGTH - longest)])
            expected[name] = np.where(mask > 0, expected[name], 0.0)
            outputs[name] = np.where(mask > 0, outputs[name], 0.0)
    _assert_same_candidates(outputs, expected)
    bucketed = predict_in_buckets(
        model, padded, batch_size=3, length_key="input_mask", sequence_outputs=("start_logits", "end_logits")
    )
    for name in ("start_logits", "end_logits"):
        if name in bucketed:
            bucketed[name] = np.where(mask > 0, bucketed[name], 0.0)
    _assert_same_candidates(bucketed, expected)
