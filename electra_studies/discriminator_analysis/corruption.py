"""Text corrupted by a checkpoint's own generator, as in pre-training: the discriminator's task, on held-out text.

The reference's masking (`mask_prob` of the pieces, 85 % of those shown as [MASK], the rest kept) and a Gumbel-max
sample from the generator at its pre-training temperature, with the generator's config; numpy's seeded generator
supplies the noise, so a seed fixes the corruption.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from electra_tf.pretraining.masking import mask_inputs
from electra_tf.pretraining.positions import positions_indicator
from electra_tf.pretraining.sampling import gumbel_max_sample, replace_tokens


@dataclasses.dataclass
class Corruption:
    """int32 [windows, length] arrays: the corrupted ids, 1 where the piece was chosen for masking, 1 where the
    written token differs from the original (a sample equal to the original is not a replacement)."""

    token_ids: np.ndarray
    chosen: np.ndarray
    replaced: np.ndarray


def corrupt(generator, inputs, seed=0, batch_size=64):
    """Corrupts the windows `inputs` (`token_ids`, `segment_ids`, `padding_mask`) with `generator` (an
    `ElectraGenerator` whose `electra_config` holds the masking settings and special ids)."""
    config = generator.electra_config
    token_ids = np.asarray(inputs["token_ids"], np.int32)
    num_windows, length = token_ids.shape
    max_predictions = config.max_predictions_per_seq(length)
    rng = np.random.default_rng(seed)
    outputs = {name: [] for name in ("token_ids", "chosen", "replaced")}
    for start in range(0, num_windows, batch_size):
        ids = tf.constant(token_ids[start : start + batch_size])
        padding = tf.constant(np.asarray(inputs["padding_mask"][start : start + batch_size], np.int32))
        rows = ids.shape[0]
        masked = mask_inputs(
            ids,
            padding,
            tf.constant(rng.random((rows, length), np.float32)),
            tf.constant(rng.random((rows, max_predictions), np.float32)),
            mask_prob=config.mask_prob,
            max_predictions=max_predictions,
            mask_token_fraction=config.mask_token_fraction,
            mask_id=config.mask_id,
            special_ids=(config.cls_id, config.sep_id, config.mask_id),
        )
        logits = generator(
            {
                "token_ids": masked.input_ids,
                "segment_ids": tf.constant(inputs["segment_ids"][start : start + batch_size]),
                "padding_mask": padding,
                "mask_positions": masked.masked_lm_positions,
            },
            training=False,
        )
        noise = tf.constant(rng.random((rows, max_predictions, logits.shape[-1]), np.float32))
        sampled = gumbel_max_sample(logits, noise, config.temperature)
        corrupted, labels = replace_tokens(ids, sampled, masked.masked_lm_positions, masked.masked_lm_weights)
        chosen = positions_indicator(masked.masked_lm_positions, masked.masked_lm_weights > 0, length)
        outputs["token_ids"].append(corrupted.numpy())
        outputs["chosen"].append(chosen.numpy().astype(np.int32))
        outputs["replaced"].append(labels.numpy())
    if not num_windows:
        empty = np.zeros((0, length), np.int32)
        return Corruption(empty, empty, empty)
    return Corruption(**{name: np.concatenate(values).astype(np.int32) for name, values in outputs.items()})
