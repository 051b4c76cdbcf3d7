"""A discriminator's replaced-token logit for each word of tagged sentences.

A word's score is the logit at its first word piece: the piece the tagging tasks label, and the one a word-level
label (FCE's c/i) speaks for. Later pieces of a word are left out rather than pooled, so every word is scored by
one position of the discriminator whatever its length. Sentences longer than a window are split into windows of whole
words (`finetune.tagging.features`), so each word is scored in some context and none is dropped.
"""

import numpy as np

from finetune.tagging.features import featurize

BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")


def window_logits(discriminator, inputs, batch_size=64):
    """float64 [windows, length] replaced-token logits of the windows `inputs` (the backbone's inputs)."""
    rows = []
    for start in range(0, len(inputs["token_ids"]), batch_size):
        batch = {name: inputs[name][start:start + batch_size] for name in BACKBONE_INPUTS}
        rows.append(np.asarray(discriminator(batch, training=False), np.float64))
    length = inputs["token_ids"].shape[1]
    return np.concatenate(rows) if rows else np.zeros((0, length))


def per_sentence(features, window_values):
    """The values [windows, length] at each word's first piece, regrouped per sentence: a list of [num_words]
    arrays in the order of the sentences `features` was built from."""
    at_words = np.take_along_axis(np.asarray(window_values), features.word_positions, axis=1)
    values = [[] for _ in range(features.num_sentences)]
    for row, (sentence, _, num_words) in enumerate(features.windows):
        values[sentence].extend(at_words[row, :num_words])
    return [np.asarray(sentence_values) for sentence_values in values]


def word_logits(discriminator, tokenizer, sentences, max_seq_length=128, batch_size=64):
    """Per sentence, float64 [num_words] logits of "replaced" at each word's first piece.

    Args:
        discriminator: a model mapping the backbone's inputs to logits [batch, seq] (an `ElectraDiscriminator`).
        tokenizer: the `ElectraTokenizer` the discriminator was trained with.
        sentences: objects with `words` (and `tags`, unused here).
    """
    features = featurize(sentences, tokenizer, max_seq_length, tag_ids={})
    logits = window_logits(discriminator, features.inputs(), batch_size)
    return [values.astype(np.float64) for values in per_sentence(features, logits)]
