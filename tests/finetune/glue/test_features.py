"""GLUE examples encoded as BERT encodes them (`[CLS] A [SEP] B [SEP]`, longest-first truncation), labels and batches.

The packer itself is checked exhaustively in tests/electra_tf/test_inputs.py."""

import numpy as np
import pytest

from finetune.glue.features import (
    encode_examples,
    features_to_dataset,
    label_ids,
    with_swapped_pairs,
)
from finetune.glue.readers import Example, read_examples
from tests.bert_layout import bert_encode


@pytest.fixture(scope="module")
def tokenizer(shared_data):
    from electra_tf.tokenizer import ElectraTokenizer

    return ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))


def test_real_mrpc_dev_encoding(shared_data, tokenizer):
    examples = read_examples(str(shared_data / "glue"), "MRPC", "dev")[:64]
    features = encode_examples(examples, tokenizer, "MRPC", max_seq_length=32)
    for i, example in enumerate(examples):
        tokens_a = tokenizer.tokenize([example.text_a])[0].numpy().tolist()
        tokens_b = tokenizer.tokenize([example.text_b])[0].numpy().tolist()
        ids, mask, segments = bert_encode(tokens_a, tokens_b, 32)
        assert features.input_ids[i].tolist() == ids
        assert features.input_mask[i].tolist() == mask
        assert features.segment_ids[i].tolist() == segments
    assert features.label_ids.tolist() == [int(e.label) for e in examples]
    full = encode_examples(examples[:1], tokenizer, "MRPC")  # the task's default length, 128
    tokens = tokenizer.convert_ids_to_tokens(full.input_ids[0][full.input_mask[0] == 1])
    assert full.input_ids.shape == (1, 128)
    assert tokens[:5] == ["[CLS]", "he", "said", "the", "foods"]
    assert tokens.count("[SEP]") == 2 and tokens[-1] == "[SEP]"
    assert tokens[tokens.index("[SEP]") + 1 :][:4] == ['"', "the", "foods", "##er"]


def test_real_cola_single_sentences(shared_data, tokenizer):
    examples = read_examples(str(shared_data / "glue"), "CoLA", "dev")[:20]
    features = encode_examples(examples, tokenizer, "CoLA", max_seq_length=8)
    for i, example in enumerate(examples):
        tokens = tokenizer.tokenize([example.text_a])[0].numpy().tolist()
        assert features.input_ids[i].tolist() == bert_encode(tokens, None, 8)[0]
    assert not features.segment_ids.any()


def test_swapped_pairs_follow_the_originals():
    examples = [Example("train-0", "a0", "b0", "1"), Example("train-1", "a1", "b1", "0")]
    doubled = with_swapped_pairs(examples)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in doubled] == [
        ("train-0", "a0", "b0", "1"),
        ("train-1", "a1", "b1", "0"),
        ("train-0-swapped", "b0", "a0", "1"),
        ("train-1-swapped", "b1", "a1", "0"),
    ]
    with pytest.raises(ValueError, match="sentence pairs"):
        with_swapped_pairs([Example("train-0", "a", None, "1")])


def test_label_ids():
    examples = [
        Example("dev-0", "a", "b", "not_entailment"),
        Example("dev-1", "a", "b", "entailment"),
        Example("test-0", "a", "b", None),
    ]
    assert label_ids(examples, "RTE").tolist() == [1, 0, -1]
    scores = label_ids([Example("dev-0", "a", "b", 3.8), Example("test-0", "a", "b", None)], "STS-B")
    assert scores.dtype == np.float32 and scores[0] == np.float32(3.8) and np.isnan(scores[1])


def test_mixed_pairs_and_singles_are_refused(tokenizer):
    with pytest.raises(ValueError, match="mix sentence pairs"):
        encode_examples([Example("x-0", "a", "b", "1"), Example("x-1", "a", None, "1")], tokenizer, "MRPC")


def test_dataset_batches(tokenizer):
    examples = [Example(f"dev-{i}", f"sentence number {i}", "the other one", "entailment") for i in range(5)]
    features = encode_examples(examples, tokenizer, "RTE", max_seq_length=16)
    batches = list(features_to_dataset(features, batch_size=2))
    assert [batch[1].shape[0] for batch in batches] == [2, 2, 1]
    inputs, labels = batches[0]
    assert set(inputs) == {"token_ids", "segment_ids", "padding_mask"}  # the backbone's inputs
    # 9 tokens ([CLS] sentence number i [SEP] the other one [SEP]): up to 16 every length has its own width.
    assert inputs["token_ids"].shape == (2, 9) and inputs["token_ids"].dtype.name == "int32"
    all_ids = np.concatenate([batch[0]["token_ids"].numpy() for batch in batches])
    assert sorted(map(tuple, all_ids)) == sorted(map(tuple, features.input_ids[:, :9]))
    assert not features.input_ids[:, 9:].any()  # what the cut dropped was padding
