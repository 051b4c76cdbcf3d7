"""BERT's input layout for one example, transcribed from its `run_classifier.py` as the independent reference the
packer's tests hold it against: `_truncate_seq_pair`, then `[CLS] A [SEP] (B [SEP])`, segment ids, mask, padding."""

CLS, SEP, PAD = 101, 102, 0  # BERT's uncased vocabulary


def bert_truncate(tokens_a, tokens_b, budget):
    """BERT's `_truncate_seq_pair`: drop the last token of the longer list (B on ties) until the pair fits."""
    tokens_a, tokens_b = list(tokens_a), list(tokens_b)
    while len(tokens_a) + len(tokens_b) > budget:
        (tokens_a if len(tokens_a) > len(tokens_b) else tokens_b).pop()
    return tokens_a, tokens_b


def bert_encode(tokens_a, tokens_b, max_seq_length, pad_id=PAD):
    """(input ids, mask, segment ids) of one example as lists, as BERT's `convert_single_example` lays them out."""
    if tokens_b is None:
        tokens_a = list(tokens_a)[: max_seq_length - 2]
        ids, segments = [CLS] + tokens_a + [SEP], [0] * (len(tokens_a) + 2)
    else:
        tokens_a, tokens_b = bert_truncate(tokens_a, tokens_b, max_seq_length - 3)
        ids = [CLS] + tokens_a + [SEP] + tokens_b + [SEP]
        segments = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
    padding = max_seq_length - len(ids)
    return ids + [pad_id] * padding, [1] * len(ids) + [0] * padding, segments + [0] * padding
