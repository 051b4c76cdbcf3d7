"""SQuAD questions -> sliding-window model inputs `[CLS] question [SEP] context-window [SEP]`, with each token's exact
character span in its context.

Alignment goes through the tokenizer's byte offsets (tensorflow-text), converted to character offsets, so answers
map to tokens and predicted tokens map back to the original context text (accents, unicode, odd whitespace and answers
that start or end inside a word all keep their raw characters) without BERT's whitespace-token heuristics.

Windows follow BERT's `run_squad.py`: the question is cut to `max_query_length` word pieces, the context is covered
by windows of up to `max_seq_length - len(question) - 3` tokens that start `doc_stride` tokens apart, and a token that
lies in several windows counts as "max context" in the one where it has the most context on its smaller side.
"""

import dataclasses

import numpy as np

from electra_tf.errors import ConfigError

MAX_SEQ_LENGTH = 512
DOC_STRIDE = 128
MAX_QUERY_LENGTH = 64
_TOKENIZE_CHUNK = 2048  # texts per tokenizer call: bounds the ragged tensors' memory


@dataclasses.dataclass
class SquadFeatures:
    """One row per window. Token-level arrays are [num_features, max_seq_length]; `token_char_start/end` give the
    half-open character span of a context token in its question's context (-1 for question, special and padding
    tokens). `start/end_positions` are the training answer's token positions, 0 ([CLS]) when the answer is not
    inside the window or the question is unanswerable; `is_impossible` is 1 then."""

    input_ids: np.ndarray
    input_mask: np.ndarray
    segment_ids: np.ndarray
    question_index: np.ndarray
    token_char_start: np.ndarray
    token_char_end: np.ndarray
    token_is_max_context: np.ndarray
    start_positions: np.ndarray
    end_positions: np.ndarray
    is_impossible: np.ndarray

    def inputs(self):
        return {"input_ids": self.input_ids, "input_mask": self.input_mask, "segment_ids": self.segment_ids}

    def labels(self):
        return {
            "start_positions": self.start_positions,
            "end_positions": self.end_positions,
            "is_impossible": self.is_impossible,
        }

    def __len__(self):
        return len(self.question_index)


def byte_to_char_offsets(texts, byte_offsets_per_text):
    """Character offsets of UTF-8 byte offsets: `byte_offsets_per_text[i]` (int array) index into `texts[i]`.

    A byte offset inside a multi-byte character maps to that character; offset len(bytes) maps to len(text).
    """
    result = []
    for text, offsets in zip(texts, byte_offsets_per_text):
        encoded = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        # A character starts at every byte that is not a UTF-8 continuation byte (10xxxxxx).
        char_of_byte = np.cumsum((encoded & 0xC0) != 0x80) - 1
        char_of_byte = np.append(char_of_byte, len(text))
        result.append(char_of_byte[np.asarray(offsets, dtype=np.int64)])
    return result


def tokenize_contexts(tokenizer, contexts):
    """Per context: (ids, char_start, char_end) numpy arrays, the character spans half-open into the context."""
    tokens = []
    for begin in range(0, len(contexts), _TOKENIZE_CHUNK):
        chunk = contexts[begin : begin + _TOKENIZE_CHUNK]
        ids, starts, ends = tokenizer.tokenize_with_offsets(chunk)
        splits = ids.row_splits.numpy()
        flat_ids, flat_starts, flat_ends = ids.flat_values.numpy(), starts.flat_values.numpy(), ends.flat_values.numpy()
        rows = [slice(splits[i], splits[i + 1]) for i in range(len(chunk))]
        char_starts = byte_to_char_offsets(chunk, [flat_starts[row] for row in rows])
        # The end is exclusive: map the piece's last byte and step one character past it.
        char_ends = [last + 1 for last in byte_to_char_offsets(chunk, [flat_ends[row] - 1 for row in rows])]
        tokens.extend(
            (flat_ids[row].astype(np.int32), char_starts[i].astype(np.int32), char_ends[i].astype(np.int32))
            for i, row in enumerate(rows)
        )
    return tokens


def tokenize_questions(tokenizer, texts, max_query_length):
    """Word-piece ids of each question, its first `max_query_length` pieces (BERT's cut)."""
    result = []
    for begin in range(0, len(texts), _TOKENIZE_CHUNK):
        ragged = tokenizer.tokenize(list(texts[begin : begin + _TOKENIZE_CHUNK]))
        splits, values = ragged.row_splits.numpy(), ragged.flat_values.numpy().astype(np.int32)
        result.extend(
            values[splits[i] : min(splits[i + 1], splits[i] + max_query_length)] for i in range(len(splits) - 1)
        )
    return result


def answer_token_span(char_start, char_end, answer_start, answer_end):
    """(first, last) context tokens overlapping characters [answer_start, answer_end), or None if none does."""
    first = int(np.searchsorted(char_end, answer_start, side="right"))
    last = int(np.searchsorted(char_start, answer_end, side="left")) - 1
    return (first, last) if first <= last else None


def window_starts(num_tokens, window_length, doc_stride):
    """(start, length) of BERT's context windows over `num_tokens` tokens."""
    spans, start = [], 0
    while True:
        length = min(num_tokens - start, window_length)
        spans.append((start, length))
        if start + length >= num_tokens:
            return spans
        start += min(length, doc_stride)


def max_context_mask(spans, num_tokens):
    """[num_spans, num_tokens] bool: token t is "max context" in span j (BERT's `_check_is_max_context`: score
    min(left, right) + 0.01 * length, the first span wins ties)."""
    positions = np.arange(num_tokens)
    scores = np.full((len(spans), num_tokens), -np.inf)
    for j, (start, length) in enumerate(spans):
        inside = slice(start, start + length)
        left, right = positions[inside] - start, start + length - 1 - positions[inside]
        scores[j, inside] = np.minimum(left, right) + 0.01 * length
    best = np.argmax(scores, axis=0)
    return best[None, :] == np.arange(len(spans))[:, None]


def featurize(data, tokenizer, max_seq_length=MAX_SEQ_LENGTH, doc_stride=DOC_STRIDE, max_query_length=MAX_QUERY_LENGTH):
    """`SquadFeatures` for every window of every question of `data` (a `readers.SquadData`)."""
    if max_seq_length < max_query_length + 4:
        raise ConfigError(
            f"max_seq_length={max_seq_length} leaves no room for the context after a question of "
            f"up to max_query_length={max_query_length} word pieces; raise it or lower the latter",
            arguments=("max_seq_length", "max_query_length"),
        )
    if doc_stride <= 0:
        raise ConfigError(f"doc_stride must be positive, got {doc_stride}", arguments=("doc_stride",))
    contexts = tokenize_contexts(tokenizer, data.contexts)
    questions = tokenize_questions(tokenizer, [q.question_text for q in data.questions], max_query_length)
    plans = []  # per question: (question ids, context tokens, windows, max-context mask, answer token span)
    for index, question in enumerate(data.questions):
        ids, char_start, char_end = contexts[question.context_index]
        spans = window_starts(len(ids), max_seq_length - len(questions[index]) - 3, doc_stride)
        answer = None
        if not question.is_impossible and question.answer_start is not None:
            answer = answer_token_span(
                char_start, char_end, question.answer_start, question.answer_start + len(question.answer_text)
            )
        plans.append((spans, max_context_mask(spans, len(ids)), answer))

    num_features = sum(len(spans) for spans, _, _ in plans)
    shape = (num_features, max_seq_length)
    input_ids, input_mask, segment_ids = (np.zeros(shape, np.int32) for _ in range(3))
    token_char_start, token_char_end = np.full(shape, -1, np.int32), np.full(shape, -1, np.int32)
    token_is_max_context = np.zeros(shape, bool)
    question_index, start_positions, end_positions = (np.zeros(num_features, np.int32) for _ in range(3))
    is_impossible = np.ones(num_features, np.int32)
    row = 0
    for index, (spans, max_context, answer) in enumerate(plans):
        query = questions[index]
        ids, char_start, char_end = contexts[data.questions[index].context_index]
        offset = len(query) + 2  # position of the first context token: after [CLS] question [SEP]
        for j, (start, length) in enumerate(spans):
            input_ids[row, 0] = tokenizer.cls_id
            input_ids[row, 1 : offset - 1] = query
            input_ids[row, offset - 1] = tokenizer.sep_id
            window = slice(start, start + length)
            input_ids[row, offset : offset + length] = ids[window]
            input_ids[row, offset + length] = tokenizer.sep_id
            input_mask[row, : offset + length + 1] = 1
            segment_ids[row, offset : offset + length + 1] = 1
            token_char_start[row, offset : offset + length] = char_start[window]
            token_char_end[row, offset : offset + length] = char_end[window]
            token_is_max_context[row, offset : offset + length] = max_context[j, window]
            question_index[row] = index
            if answer is not None and answer[0] >= start and answer[1] < start + length:
                start_positions[row] = answer[0] - start + offset
                end_positions[row] = answer[1] - start + offset
                is_impossible[row] = 0
            row += 1
    return SquadFeatures(
        input_ids,
        input_mask,
        segment_ids,
        question_index,
        token_char_start,
        token_char_end,
        token_is_max_context,
        start_positions,
        end_positions,
        is_impossible,
    )
