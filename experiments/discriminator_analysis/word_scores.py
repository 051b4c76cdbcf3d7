"""A discriminator's replaced-token logit for each word of tagged sentences.

A word's score is the logit at its first word piece: the piece the tagging tasks label, and the one a word-level
label (FCE's c/i) speaks for. Later pieces of a word are left out rather than pooled, so every word is scored by
one position of the discriminator whatever its length. Sentences longer than a window are split into windows of whole
words (`finetune.tagging.features`), so each word is scored in some context and none is dropped.
"""

import numpy as np

from finetune.tagging.features import featurize

BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")


def word_logits(discriminator, tokenizer, sentences, max_seq_length=128, batch_size=64):
    """Per sentence, float64 [num_words] logits of "replaced" at each word's first piece.

    Args:
        discriminator: a model mapping the backbone's inputs to logits [batch, seq] (an `ElectraDiscriminator`).
        tokenizer: the `ElectraTokenizer` the discriminator was trained with.
        sentences: objects with `words` (and `tags`, unused here).
    """
    features = featurize(sentences, tokenizer, max_seq_length, tag_ids={})
    inputs = features.inputs()
    window_logits = []
    for start in range(0, len(features.windows), batch_size):
        batch = {name: inputs[name][start:start + batch_size] for name in BACKBONE_INPUTS}
        logits = np.asarray(discriminator(batch, training=False), np.float64)
        positions = inputs["word_positions"][start:start + batch_size]
        window_logits.append(np.take_along_axis(logits, positions, axis=1))
    window_logits = np.concatenate(window_logits) if window_logits else np.zeros((0, max_seq_length))
    scores = [[] for _ in sentences]
    for row, (sentence, _, num_words) in enumerate(features.windows):
        scores[sentence].extend(window_logits[row, :num_words])
    return [np.asarray(values, np.float64) for values in scores]
