import math
import random

import numpy as np
import pytest

from data_prep.example_builder import ExampleBuilder

CLS, SEP = 101, 102


def _generated_corpus(rng, num_documents):
    """Documents of random sentences; token = 1000 * (document + 1) + position in the document, so every token
    says which document it came from and where."""
    documents = []
    for doc in range(num_documents):
        sentences, position = [], 0
        for _ in range(rng.randint(1, 30)):
            length = rng.randint(1, 40)
            sentences.append([1000 * (doc + 1) + position + i for i in range(length)])
            position += length
        documents.append(sentences)
    return documents


def _segments(example):
    """Splits an example into (A, B) token lists after checking the [CLS] A [SEP] (B [SEP]) layout."""
    ids, mask, segments = example.input_ids, example.input_mask, example.segment_ids
    length = int(mask.sum())
    assert mask.tolist() == [1] * length + [0] * (len(mask) - length)
    padding = [0] * (len(ids) - length)
    assert ids[length:].tolist() == padding and segments[length:].tolist() == padding
    assert ids[0] == CLS and ids[length - 1] == SEP
    seps = [i for i in range(length) if ids[i] == SEP]
    assert len(seps) in (1, 2)
    first_sep = seps[0]
    assert segments[: first_sep + 1].tolist() == [0] * (first_sep + 1)
    assert segments[first_sep + 1 : length].tolist() == [1] * (length - first_sep - 1)
    if len(seps) == 1:
        assert first_sep == length - 1
    return ids[1:first_sep].tolist(), ids[first_sep + 1 : length - 1].tolist()


def test_layout_lengths_and_document_boundaries():
    rng = random.Random(0)
    documents = _generated_corpus(rng, 400)
    builder = ExampleBuilder(64, CLS, SEP, random.Random(1))
    num_examples = 0
    for doc_index, document in enumerate(documents):
        sentence_of = {token: index for index, sentence in enumerate(document) for token in sentence}
        next_sentence = 0  # The first sentence no earlier example of this document has taken.
        examples = builder.add_document(document)
        assert examples, "every non-empty document yields at least one example"
        for example in examples:
            num_examples += 1
            for array in example:
                assert array.shape == (64,) and array.dtype == np.int32
            first, second = _segments(example)
            assert first, "segment A is never empty"
            # No example crosses a document: every token comes from this document.
            assert {token // 1000 - 1 for token in first + second} == {doc_index}
            # A starts at the start of a sentence no earlier example took (truncated tokens are dropped, not carried
            # over; a trailing sentence may vanish whole); A and B are whole sentences in document order, only the
            # end of each cut by truncation.
            assert sentence_of[first[0]] >= next_sentence and first[0] == document[sentence_of[first[0]]][0]
            for segment in (first, second):
                assert segment == sorted(segment)
                for token in segment:
                    sentence = document[sentence_of[token]]
                    assert token == sentence[0] or token - 1 in segment
            next_sentence = max(sentence_of[token] for token in first + second) + 1
    assert num_examples > 1000


def test_single_segment_and_random_length_frequencies():
    # One-token sentences make the rules observable: a two-segment example always gets a segment B, and an
    # example closes exactly at its target length (cut to L - 3 or L - 2 by the truncation).
    length, num_tokens = 32, 1_500_000
    builder = ExampleBuilder(length, CLS, SEP, random.Random(7))
    examples = builder.add_document([[5]] * num_tokens)[:-1]  # The document's last example is cut short by its end.
    n = len(examples)
    single = sum(int(example.segment_ids.sum() == 0) for example in examples) / n
    assert abs(single - 0.1) < 4 * math.sqrt(0.1 * 0.9 / n)
    # A random target in [5, L] gives fewer than L - 3 content tokens unless it is L - 3 .. L.
    short = (
        sum(int(example.input_mask.sum() - 2 - (example.segment_ids.sum() > 0) < length - 3) for example in examples)
        / n
    )
    expected = 0.05 * (length - 3 - 5) / (length - 5 + 1)
    assert abs(short - expected) < 4 * math.sqrt(expected * (1 - expected) / n)
    # The random lengths cover the whole range [5, L - 4].
    contents = {int(example.input_mask.sum()) for example in examples}
    assert min(contents) == 5 + 2 or min(contents) == 5 + 3


def test_two_segments_split_near_half():
    builder = ExampleBuilder(128, CLS, SEP, random.Random(3))
    examples = builder.add_document([[7] * 10] * 500)
    two = [_segments(example) for example in examples[:-1] if example.segment_ids.sum() > 0]
    first_lengths = [len(first) for first, _ in two if len(first) + len(_) >= 120]
    # Segment A targets (L - 3) // 2 = 62 tokens (less after a random target), give or take a 10-token sentence.
    assert first_lengths and all(48 <= n <= 72 for n in first_lengths)


def test_truncation_drops_the_overflow_of_long_sentences():
    builder = ExampleBuilder(16, CLS, SEP, random.Random(0))
    examples = builder.add_document([list(range(1000, 1100)), list(range(2000, 2005))])
    first, second = _segments(examples[0])
    assert first == list(range(1000, 1014))  # L - 2 tokens of the 100-token sentence; the rest is dropped
    assert second == []
    # The next example starts with the next sentence, not with the dropped tokens.
    assert _segments(examples[1])[0] == list(range(2000, 2005))


def test_same_rng_seed_same_examples():
    documents = _generated_corpus(random.Random(5), 50)

    def build(seed):
        builder = ExampleBuilder(48, CLS, SEP, random.Random(seed))
        return [tuple(map(tuple, example)) for document in documents for example in builder.add_document(document)]

    assert build(11) == build(11)
    assert build(11) != build(12)


def test_empty_sentences_and_documents_yield_nothing():
    builder = ExampleBuilder(16, CLS, SEP, random.Random(0))
    assert builder.add_document([]) == []
    assert builder.add_document([[], []]) == []


def test_too_short_max_seq_length():
    with pytest.raises(ValueError, match="at least 5"):
        ExampleBuilder(4, CLS, SEP, random.Random(0))
