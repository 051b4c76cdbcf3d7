"""Replaced-token detection with a pre-trained discriminator (the library behind `python -m electra_tf.score`)."""

import numpy as np

from electra_tf.inputs import encode_single_segments
from electra_tf.models.backbone import backbone_inputs
from electra_tf.pretrained import load_pretrained, load_tokenizer


def score_texts(discriminator, tokenizer, texts, max_seq_length=128, batch_size=32):
    """One dict per text: `text`, `tokens`, `replaced_probability` (per piece), `score`, `truncated`."""
    results = []
    for start in range(0, len(texts), batch_size):
        chunk = texts[start:start + batch_size]
        features, kept, truncated = encode_single_segments(tokenizer, chunk, max_seq_length)
        logits = np.asarray(discriminator(backbone_inputs(features), training=False), np.float64)
        for row, text in enumerate(chunk):
            piece_logits = logits[row, 1:1 + kept[row]]
            ids = features["input_ids"][row, 1:1 + kept[row]]
            log_p_original = -np.logaddexp(0.0, piece_logits)  # log(1 - sigmoid(logit))
            results.append({
                "text": text,
                "tokens": tokenizer.convert_ids_to_tokens(ids.tolist()),
                "replaced_probability": [round(float(p), 6) for p in 1.0 / (1.0 + np.exp(-piece_logits))],
                "score": float(log_p_original.mean()) if len(ids) else 0.0,
                "truncated": bool(truncated[row]),
            })
    return results


def load_scorer(model_dir):
    """(discriminator, tokenizer) from a pre-trained model directory with its tokenizer's files (vocabulary, casing)."""
    tokenizer = load_tokenizer(model_dir)  # First: a missing vocabulary is reported before the model loads.
    return load_pretrained(model_dir), tokenizer
