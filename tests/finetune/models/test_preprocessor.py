"""The raw-text preprocessing layer: same ids as the GLUE feature encoder, in eager and graph mode, and saved vocab."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.errors import ConfigError
from finetune.glue.features import encode_examples
from finetune.glue.readers import read_tsv
from finetune.models import ElectraTextClassifierPreprocessor


@pytest.fixture(scope="module")
def bert_vocab(shared_data):
    return str(shared_data / "vocab" / "bert-uncased-vocab.txt")


@pytest.mark.parametrize("task,file_name", [("MRPC", "MRPC/dev.tsv"), ("SST-2", "SST-2/dev.tsv")])
def test_preprocessor_equals_the_glue_feature_encoder_on_real_text(shared_data, bert_vocab, task, file_name):
    examples = read_tsv(str(shared_data / "glue" / file_name), task, "dev").examples[:300]
    expected = encode_examples(examples, _tokenizer(bert_vocab), task, max_seq_length=40)
    preprocessor = ElectraTextClassifierPreprocessor(bert_vocab, max_seq_length=40)
    texts_a = tf.constant([example.text_a for example in examples])
    inputs = texts_a if examples[0].text_b is None else (texts_a, tf.constant([e.text_b for e in examples]))
    graph_preprocess = tf.function(lambda x: preprocessor(x=x))  # the way it runs inside model.fit
    for packed in (preprocessor(x=inputs), graph_preprocess(inputs)):
        for name, values in expected.inputs().items():
            np.testing.assert_array_equal(packed[name].numpy(), values, err_msg=name)


def _tokenizer(vocab_file):
    from electra_tf.tokenizer import ElectraTokenizer

    return ElectraTokenizer(vocab_file)


def test_accepted_input_forms_give_the_same_ids(bert_vocab):
    preprocessor = ElectraTextClassifierPreprocessor(bert_vocab, max_seq_length=12)
    texts = ["Hello world!", "A second, longer sentence here."]
    reference = preprocessor(tf.constant(texts))["token_ids"].numpy()
    np.testing.assert_array_equal(preprocessor(texts)["token_ids"].numpy(), reference)
    np.testing.assert_array_equal(preprocessor(tf.constant([[t] for t in texts]))["token_ids"].numpy(), reference)
    np.testing.assert_array_equal(preprocessor(tf.constant(texts[0]))["token_ids"].numpy(), reference[:1])
    cls_id, sep_id = 101, 102
    assert reference[0].tolist()[:5] == [cls_id, 7592, 2088, 999, sep_id]  # [CLS] hello world ! [SEP]


def test_config_round_trip_and_errors(bert_vocab):
    preprocessor = ElectraTextClassifierPreprocessor(bert_vocab, max_seq_length=16, do_lower_case=True)
    clone = ElectraTextClassifierPreprocessor.from_config(preprocessor.get_config())
    np.testing.assert_array_equal(
        clone(["Some text."])["token_ids"].numpy(), preprocessor(["Some text."])["token_ids"].numpy()
    )
    with pytest.raises(ConfigError, match="no vocabulary"):
        ElectraTextClassifierPreprocessor(None)(["text"])
    with pytest.raises(ConfigError, match="one or two text segments"):
        preprocessor(x=(tf.constant(["a"]),) * 3)
    with pytest.raises(ConfigError, match="at least 5"):
        ElectraTextClassifierPreprocessor(bert_vocab, max_seq_length=4)
