"""ELECTRA's rules for packing tokenised sentences into fixed-length pre-training examples.

The rules are those of the reference's `build_pretraining_dataset.py`:

* sentences (lines) of one document are concatenated until the current target length is reached; a document's end
  closes the example being built, so no example crosses documents;
* with probability 0.1 the example is a single segment; otherwise segment A takes sentences up to (L - 3) // 2 tokens
  (a sentence that would overflow A goes there anyway half of the time while B is still empty) and B takes the rest;
* A is cut to L - 2 tokens and B to what is left after [CLS] A [SEP] ... [SEP]: tokens past the end are dropped,
  not carried over into the next example;
* with probability 0.05 the *next* example's target length is a random integer in [5, L], else L;
* layout [CLS] A [SEP] B [SEP] (or [CLS] A [SEP]), segment ids 0 then 1, zero padding to L.

Randomness comes from the `random.Random` the caller passes, so one generator per output shard makes every shard
reproducible on its own, whichever process builds it.
"""

import collections

import numpy as np

SINGLE_SEGMENT_PROBABILITY = 0.1
RANDOM_LENGTH_PROBABILITY = 0.05
MIN_RANDOM_LENGTH = 5
# Added to a segment target so that "single segment" means every sentence lands in segment A.
_UNBOUNDED = 1 << 30

PretrainingExample = collections.namedtuple("PretrainingExample", ["input_ids", "input_mask", "segment_ids"])
PretrainingExample.__doc__ = "One example: three int32 arrays of length max_seq_length."


class ExampleBuilder:
    """Turns documents (lists of token-id sentences) into `PretrainingExample`s.

    Args:
        max_seq_length: L, the length of every example (at least 5).
        cls_id, sep_id: ids of [CLS] and [SEP]; padding uses id 0 as the reference does.
        rng: a `random.Random`; the builder's only source of randomness.
    """

    def __init__(self, max_seq_length, cls_id, sep_id, rng):
        if max_seq_length < MIN_RANDOM_LENGTH:
            raise ValueError(f"max_seq_length must be at least {MIN_RANDOM_LENGTH}, got {max_seq_length}")
        self.max_seq_length = max_seq_length
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.rng = rng
        self._target_length = max_seq_length
        self._sentences = []
        self._length = 0

    def add_document(self, sentences):
        """Adds one document's sentences (sequences of token ids, in order); returns the examples it completes."""
        examples = []
        for sentence in sentences:
            if len(sentence) == 0:  # A line of nothing but whitespace or control characters.
                continue
            self._sentences.append(sentence)
            self._length += len(sentence)
            if self._length >= self._target_length:
                examples.append(self._create_example())
        if self._length:  # The document ends the example: examples never cross documents.
            examples.append(self._create_example())
        return examples

    def _create_example(self):
        rng = self.rng
        if rng.random() < SINGLE_SEGMENT_PROBABILITY:
            first_target = _UNBOUNDED
        else:
            first_target = (self._target_length - 3) // 2  # Room for [CLS] and two [SEP].
        first, second = [], []
        for sentence in self._sentences:
            if (
                not first
                or len(first) + len(sentence) < first_target
                or (not second and len(first) < first_target and rng.random() < 0.5)
            ):
                first.extend(sentence)
            else:
                second.extend(sentence)
        first = first[: self.max_seq_length - 2]
        second = second[: max(0, self.max_seq_length - len(first) - 3)]

        self._sentences = []
        self._length = 0
        if rng.random() < RANDOM_LENGTH_PROBABILITY:
            self._target_length = rng.randint(MIN_RANDOM_LENGTH, self.max_seq_length)
        else:
            self._target_length = self.max_seq_length
        return self._layout(first, second)

    def _layout(self, first, second):
        length = self.max_seq_length
        input_ids = np.zeros(length, np.int32)
        input_mask = np.zeros(length, np.int32)
        segment_ids = np.zeros(length, np.int32)
        tokens = [self.cls_id, *first, self.sep_id]
        num_first = len(tokens)
        if second:
            tokens += [*second, self.sep_id]
        input_ids[: len(tokens)] = tokens
        input_mask[: len(tokens)] = 1
        segment_ids[num_first : len(tokens)] = 1
        return PretrainingExample(input_ids, input_mask, segment_ids)
