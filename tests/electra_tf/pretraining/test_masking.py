import numpy as np
import tensorflow as tf

from electra_tf.pretraining.masking import candidate_mask, mask_inputs, num_to_predict

PAD, CLS, SEP, MASK = 0, 101, 102, 103
MAX_PREDICTIONS = 19  # int((0.15 + 0.005) * 128)


def _batch(rng, batch=64, length=128):
    """Real-looking examples: [CLS] A [SEP] B [SEP], varied lengths, some [MASK] tokens already in the text."""
    ids = np.zeros((batch, length), np.int32)
    mask = np.zeros((batch, length), np.int32)
    for row in range(batch):
        real = int(rng.integers(4, length + 1))
        tokens = rng.integers(1000, 30000, size=real)
        tokens[0], tokens[real - 1] = CLS, SEP
        tokens[real // 2] = SEP
        tokens[rng.integers(1, real - 1, size=2)] = MASK
        ids[row, :real] = tokens
        mask[row, :real] = 1
    return ids, mask


def _draw(ids, mask, seed):
    rng = np.random.default_rng(seed)
    batch, length = ids.shape
    return mask_inputs(
        tf.constant(ids),
        tf.constant(mask),
        tf.constant(rng.random((batch, length)), tf.float32),
        tf.constant(rng.random((batch, MAX_PREDICTIONS)), tf.float32),
        mask_prob=0.15,
        max_predictions=MAX_PREDICTIONS,
        mask_token_fraction=0.85,
        mask_id=MASK,
        special_ids=(CLS, SEP, MASK),
    )


def test_count_formula_matches_reference():
    mask = np.zeros((6, 128), np.int32)
    for row, real in enumerate([1, 3, 10, 50, 128, 127]):
        mask[row, :real] = 1
    counts = num_to_predict(tf.constant(mask), 0.15, MAX_PREDICTIONS).numpy()
    expected = [max(1, min(MAX_PREDICTIONS, int(np.round(n * 0.15)))) for n in [1, 3, 10, 50, 128, 127]]
    assert counts.tolist() == expected == [1, 1, 2, 8, 19, 19]


def test_candidates_exclude_special_tokens_and_padding():
    ids = tf.constant([[CLS, 5, MASK, 7, SEP, PAD]])
    mask = tf.constant([[1, 1, 1, 1, 1, 0]])
    assert candidate_mask(ids, mask, (CLS, SEP, MASK)).numpy().tolist() == [[False, True, False, True, False, False]]


def test_masking_statistics_over_many_draws():
    rng = np.random.default_rng(0)
    ids, mask = _batch(rng)
    special = np.isin(ids, [CLS, SEP, MASK]) | (mask == 0)
    chosen_total = masked_total = kept_total = 0
    for seed in range(30):
        out = _draw(ids, mask, seed)
        positions = out.masked_lm_positions.numpy()
        weights = out.masked_lm_weights.numpy()
        masked_ids = out.input_ids.numpy()
        originals = out.masked_lm_ids.numpy()
        candidates = (~special).sum(axis=1)
        expected_counts = np.maximum(1, np.minimum(MAX_PREDICTIONS, np.round(mask.sum(1) * 0.15))).astype(int)
        np.testing.assert_array_equal(weights.sum(1), np.minimum(expected_counts, candidates))
        for row in range(len(ids)):
            used = positions[row][weights[row] > 0]
            assert len(set(used.tolist())) == len(used), "positions are sampled without replacement"
            assert not special[row, used].any(), "[CLS]/[SEP]/[MASK]/padding must never be chosen"
            np.testing.assert_array_equal(originals[row][weights[row] > 0], ids[row, used])
            became_mask = masked_ids[row, used] == MASK
            masked_total += became_mask.sum()
            kept_total += (masked_ids[row, used] == ids[row, used]).sum()
            chosen_total += len(used)
            untouched = np.setdiff1d(np.arange(ids.shape[1]), used)
            np.testing.assert_array_equal(masked_ids[row, untouched], ids[row, untouched])
    # Every chosen position is either [MASK] or its original token: no random replacement.
    assert masked_total + kept_total == chosen_total
    share = masked_total / chosen_total
    sigma = np.sqrt(0.85 * 0.15 / chosen_total)
    assert abs(share - 0.85) < 4 * sigma, (share, chosen_total)


def test_short_sequences_use_only_real_candidates():
    ids = np.array([[CLS, 7, SEP, 0, 0, 0, 0, 0]], np.int32)
    mask = np.array([[1, 1, 1, 0, 0, 0, 0, 0]], np.int32)
    out = mask_inputs(
        tf.constant(ids),
        tf.constant(mask),
        tf.random.uniform((1, 8)),
        tf.random.uniform((1, 3)),
        mask_prob=0.15,
        max_predictions=3,
        mask_token_fraction=1.0,
        mask_id=MASK,
        special_ids=(CLS, SEP, MASK),
    )
    assert out.masked_lm_weights.numpy().tolist() == [[1.0, 0.0, 0.0]]
    assert out.masked_lm_positions.numpy()[0, 0] == 1
    assert out.input_ids.numpy().tolist() == [[CLS, MASK, SEP, 0, 0, 0, 0, 0]]
