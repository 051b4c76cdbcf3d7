"""A discriminator's replaced-token logit for each word of tagged sentences.

A word's score is the logit at its first word piece: the piece the tagging tasks label, and the one a word-level
label (FCE's c/i) speaks for. Later pieces of a word are left out rather than pooled, so every word is scored by
one position of the discriminator whatever its length. Sentences longer than a window are split into windows of whole
words (`finetune.tagging.features`), so each word is scored in some context and none is dropped.
"""

import numpy as np

BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")


def length_sorted_batches(inputs, batch_size=64):
    """(rows, batch) over the windows `inputs` (the backbone's inputs): windows of similar length batched together
    (shortest first), each batch cut to its longest window. Padding is masked out of attention, so the real
    positions' outputs do not depend on it, and sentences padded to `max_seq_length` would otherwise cost it whole."""
    lengths = np.sum(np.asarray(inputs["padding_mask"]), axis=1)
    order = np.argsort(lengths, kind="stable")
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        length = max(1, int(lengths[rows].max()))
        yield rows, {name: np.asarray(inputs[name])[rows, :length] for name in BACKBONE_INPUTS}


def window_logits(discriminator, inputs, batch_size=64):
    """float64 [windows, length] replaced-token logits of the windows `inputs` (the backbone's inputs); padding
    positions past a batch's longest window are 0."""
    logits = np.zeros(np.shape(inputs["token_ids"]), np.float64)
    for rows, batch in length_sorted_batches(inputs, batch_size):
        values = np.asarray(discriminator(batch, training=False), np.float64)
        logits[rows, : values.shape[1]] = values
    return logits


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
    from finetune.tagging.features import featurize  # TensorFlow: imported when a model is scored

    features = featurize(sentences, tokenizer, max_seq_length, tag_ids={})
    logits = window_logits(discriminator, features.inputs(), batch_size)
    return [values.astype(np.float64) for values in per_sentence(features, logits)]
