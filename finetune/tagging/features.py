"""Tagged sentences -> fixed-length windows of word pieces for the tagger, and window predictions back to sentences.

A sentence whose pieces do not fit `max_seq_length - 2` is split into consecutive windows of whole words, each packed
on its own; predictions are put back together in word order, so no word is ever cut off (a single word longer than
a window keeps its first pieces, which is all its tag needs).
"""

import dataclasses

import numpy as np
import tensorflow as tf

from finetune.batching import length_bucketed_batches


@dataclasses.dataclass
class TaggingFeatures:
    """Int32 arrays [num_windows, max_seq_length] and where each window comes from.

    `tags` holds tag ids at word k of the window in column k (0 elsewhere), `weights` 1 there; `windows` lists
    (sentence index, first word, number of words) per row.
    """

    token_ids: np.ndarray
    padding_mask: np.ndarray
    word_positions: np.ndarray
    tags: np.ndarray
    weights: np.ndarray
    windows: list
    num_sentences: int

    def inputs(self):
        return {
            "token_ids": self.token_ids,
            "segment_ids": np.zeros_like(self.token_ids),
            "padding_mask": self.padding_mask,
            "word_positions": self.word_positions,
        }

    def dataset(self, batch_size=None, pad_to_max_length=False):
        """(inputs, tags, weights) of the windows in order: unbatched without `batch_size`, else in batches cut to
        their bucket width unless `pad_to_max_length` (`finetune.batching.length_bucketed_batches`)."""
        dataset = tf.data.Dataset.from_tensor_slices((self.inputs(), self.tags, self.weights))
        if not batch_size:
            return dataset
        return length_bucketed_batches(dataset, batch_size, pad_to_max_length=pad_to_max_length)

    def sentence_predictions(self, window_predictions):
        """Per sentence, the predicted tag ids of its words, from [num_windows, max_seq_length] window predictions."""
        sentences = [[] for _ in range(self.num_sentences)]
        for row, (sentence, _, num_words) in enumerate(self.windows):
            sentences[sentence].extend(int(tag) for tag in window_predictions[row, :num_words])
        return sentences


def word_piece_counts(sentences, tokenizer, batch_size=1024):
    """Per sentence, the word-piece ids of each word (lists), as `ElectraTokenizer.tokenize_words` gives them."""
    pieces = []
    for start in range(0, len(sentences), batch_size):
        words = tf.ragged.constant(
            [list(sentence.words) for sentence in sentences[start : start + batch_size]], dtype=tf.string
        )
        pieces.extend(tokenizer.tokenize_words(words).to_list())
    return pieces


def windows_of(piece_counts, capacity):
    """(first word, number of words) of consecutive windows holding at most `capacity` pieces each (a longer single
    word gets a window of its own)."""
    windows, first, used = [], 0, 0
    for index, count in enumerate(piece_counts):
        if index > first and used + count > capacity:
            windows.append((first, index - first))
            first, used = index, 0
        used += count
    if piece_counts:
        windows.append((first, len(piece_counts) - first))
    return windows


def featurize(sentences, tokenizer, max_seq_length, tag_ids):
    """`TaggingFeatures` of `sentences` (objects with `words` and `tags`), tags mapped to ids by `tag_ids`; words
    whose tag `tag_ids` does not hold (an unlabelled word) get weight 0."""
    capacity = max_seq_length - 2
    rows = {name: [] for name in ("token_ids", "padding_mask", "word_positions", "tags", "weights")}
    windows = []
    for index, (sentence, pieces) in enumerate(zip(sentences, word_piece_counts(sentences, tokenizer))):
        for first, num_words in windows_of([len(word) for word in pieces], capacity):
            ids, positions = [tokenizer.cls_id], []
            for word in pieces[first : first + num_words]:
                positions.append(len(ids))
                ids.extend(word)
            ids = ids[: capacity + 1] + [tokenizer.sep_id]
            window_tags = sentence.tags[first : first + num_words]
            rows["token_ids"].append(_padded(ids, max_seq_length))
            rows["padding_mask"].append(_padded([1] * len(ids), max_seq_length))
            rows["word_positions"].append(_padded(positions, max_seq_length))
            rows["tags"].append(_padded([tag_ids.get(tag, 0) for tag in window_tags], max_seq_length))
            rows["weights"].append(_padded([int(tag in tag_ids) for tag in window_tags], max_seq_length))
            windows.append((index, first, num_words))
    arrays = {name: np.asarray(values, np.int32).reshape(-1, max_seq_length) for name, values in rows.items()}
    arrays["weights"] = arrays["weights"].astype(np.float32)
    return TaggingFeatures(**arrays, windows=windows, num_sentences=len(sentences))


def _padded(values, length):
    return list(values) + [0] * (length - len(values))
