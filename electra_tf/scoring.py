"""Text scorers: replaced-token detection with a pre-trained discriminator (the library behind electra-score,
`python -m electra_tf.commands.score`), a generator's pseudo-log-likelihood and Electric's one-pass one."""

import numpy as np
import tensorflow as tf

from electra_tf.checkpoints import DISCRIMINATOR
from electra_tf.errors import ConfigError
from electra_tf.inputs import encode_single_segments
from electra_tf.models import load_checkpoint
from electra_tf.models.backbone import FEATURE_NAMES, backbone_inputs


def score_texts(discriminator, tokenizer, texts, max_seq_length=128, batch_size=32):
    """One dict per text: `text`, `tokens`, `replaced_probability` (per piece), `score` (the mean over its pieces of
    log P(original), natural log), `score_sum` (their sum: it grows with the text's length) and `truncated`."""
    results = []
    for start in range(0, len(texts), batch_size):
        chunk = texts[start : start + batch_size]
        features, kept, truncated = encode_single_segments(tokenizer, chunk, max_seq_length)
        # Cut to the chunk's longest text: padding is masked out of attention, and would cost the full length.
        length = 2 + int(np.max(kept, initial=0))
        logits = np.asarray(
            discriminator(
                backbone_inputs({name: value[:, :length] for name, value in features.items()}), training=False
            ),
            np.float64,
        )
        for row, text in enumerate(chunk):
            piece_logits = logits[row, 1 : 1 + kept[row]]
            ids = features["input_ids"][row, 1 : 1 + kept[row]]
            log_p_original = -np.logaddexp(0.0, piece_logits)  # log(1 - sigmoid(logit))
            results.append(
                {
                    "text": text,
                    "tokens": tokenizer.convert_ids_to_tokens(ids.tolist()),
                    "replaced_probability": [round(float(p), 6) for p in 1.0 / (1.0 + np.exp(-piece_logits))],
                    "score": float(log_p_original.mean()) if len(ids) else 0.0,
                    "score_sum": float(log_p_original.sum()),
                    "truncated": bool(truncated[row]),
                }
            )
    return results


def pseudo_log_likelihoods(generator, tokenizer, texts, max_seq_length=128, batch_size=512):
    """Per text, the generator's pseudo-log-likelihood (Salazar et al., 2020): the sum over its word pieces (at most
    `max_seq_length - 2`) of log p(piece | the text with that piece alone replaced by [MASK]), natural log, float64.

    One masked copy of the text per piece; copies of texts of similar length are batched `batch_size` at a time and
    cut to the longest text of the batch (padding is masked out of attention, so the values do not depend on it).
    The generator predicts at the masked position only (`mask_positions`), so a copy costs one vocabulary projection;
    the log-softmax runs in the same graph, in float32 (in NumPy it would cost more than the generator). A text with
    no piece scores 0.
    """

    @tf.function(reduce_retracing=True)  # one graph for every batch shape; the log-softmax fused with the model
    def original_log_probabilities(inputs, original):
        logits = tf.cast(generator(inputs, training=False)[:, 0], tf.float32)
        return tf.gather(tf.nn.log_softmax(logits), original[:, None], batch_dims=1)[:, 0]

    totals = np.zeros(len(texts), np.float64)
    copies = []  # (pieces, text index, chunk features, row in chunk, position)
    for start in range(0, len(texts), batch_size):
        features, kept, _ = encode_single_segments(tokenizer, texts[start : start + batch_size], max_seq_length)
        copies += [
            (int(kept[row]), start + row, features, row, position)
            for row in range(len(kept))
            for position in range(1, 1 + kept[row])
        ]
    copies.sort(key=lambda copy: copy[0])  # stable: a text's copies stay together, in order
    for start in range(0, len(copies), batch_size):
        pieces, text_indices, chunks, chunk_rows, positions = zip(*copies[start : start + batch_size])
        length = 2 + max(pieces)
        inputs = {
            name: np.stack([chunk[feature][row, :length] for chunk, row in zip(chunks, chunk_rows)])
            for name, feature in FEATURE_NAMES.items()
        }
        positions = np.array(positions, np.int32)
        rows = np.arange(len(positions))
        original = inputs["token_ids"][rows, positions].copy()
        inputs["token_ids"][rows, positions] = tokenizer.mask_id
        log_probabilities = original_log_probabilities({**inputs, "mask_positions": positions[:, None]}, original)
        np.add.at(totals, list(text_indices), np.asarray(log_probabilities, np.float64))
    return totals


def electric_pseudo_log_likelihoods(discriminator, tokenizer, texts, max_seq_length=128, batch_size=128):
    """Per text, Electric's pseudo-log-likelihood (Clark et al., 2020) from one pass of its discriminator over the
    unmasked text: the sum over its word pieces (at most `max_seq_length - 2`; [CLS] and [SEP] left out) of the
    negative energies -E(x)_t, natural log, float64.

    -E(x)_t is log p(x_t | the rest) up to the log partition function, which noise-contrastive training leaves near
    zero (the model is self-normalised), so it stands for the PLL that a masked LM needs one pass per piece for.
    `discriminator`: an `ElectraDiscriminator` pre-trained with objective="electric" (its head gives the energies),
    e.g. `load_checkpoint(model_dir, kind="discriminator").model` of an Electric run. Texts are batched `batch_size`
    at a time in order of length, each batch cut to its longest text. A text with no piece scores 0.
    """
    objective = discriminator.electra_config.objective
    if objective != "electric":
        raise ConfigError(
            f"the discriminator was pre-trained with objective={objective!r}: its outputs are no "
            "energies; pass the discriminator of an objective=electric run",
            arguments=("objective",),
        )

    features, kept, _ = encode_single_segments(tokenizer, texts, max_seq_length)
    totals = np.zeros(len(texts), np.float64)
    order = np.argsort(kept, kind="stable")
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        length = 2 + int(kept[rows].max(initial=0))
        inputs = {name: features[feature][rows, :length] for name, feature in FEATURE_NAMES.items()}
        energy = np.asarray(discriminator(inputs, training=False), np.float64)
        pieces = np.arange(length)[None, :]
        in_text = (pieces >= 1) & (pieces <= kept[rows][:, None])
        totals[rows] = -np.where(in_text, energy, 0.0).sum(axis=1)
    return totals


def load_scorer(model_dir, vocab_file=None, allow_embedding_mismatch=False):
    """(discriminator, tokenizer) of the checkpoint at `model_dir` (any format `load_checkpoint` reads) with its
    tokenizer's files (vocabulary, casing); `vocab_file` replaces its vocabulary. `allow_embedding_mismatch` as in
    `load_checkpoint`."""
    loaded = load_checkpoint(
        model_dir,
        DISCRIMINATOR,
        vocab_file=vocab_file,
        allow_embedding_mismatch=allow_embedding_mismatch,
        argument="model_dir",
    )
    return loaded.model, loaded.tokenizer()
