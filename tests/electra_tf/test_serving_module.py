"""`ServingModule`: its signatures take the parameters of its methods by name, and what it serves is float32."""

import numpy as np
import tensorflow as tf

from electra_tf.serving_module import ServingModule, id_model_inputs, served_outputs


class PairSum(ServingModule):
    """Four id inputs, two text inputs given as `serve_text`: the names a subclass chooses are the signatures'."""

    def __init__(self):
        super().__init__("pair_sum", tokenizer=None, max_seq_length=8, serve_text=self._serve_pair)
        self.offset = tf.Variable(10, dtype=tf.int32)

    def _serve_ids(self, input_ids, input_mask, segment_ids, word_positions):
        return {"total": input_ids + input_mask + segment_ids + word_positions + self.offset}

    def _serve_pair(self, question, context):
        features = {name: tf.strings.length(question)[:, None] for name in ("input_ids", "input_mask", "segment_ids")}
        features["word_positions"] = tf.strings.length(context)[:, None]
        return self._serve_packed(features, returned=("input_ids",))


def test_signatures_take_the_methods_parameters_by_name(tmp_path):
    written = PairSum().write(str(tmp_path / "export"))
    assert written == str(tmp_path / "export")
    loaded = tf.saved_model.load(written)
    assert sorted(loaded.signatures) == ["serve_text", "serving_default"]

    by_ids = loaded.signatures["serving_default"]
    assert sorted(by_ids.structured_input_signature[1]) == ["input_ids", "input_mask", "segment_ids", "word_positions"]
    ones = tf.ones([1, 2], tf.int32)
    assert by_ids(input_ids=ones, input_mask=ones, segment_ids=ones, word_positions=ones)["total"].numpy().tolist() == [
        [14, 14]
    ]

    by_text = loaded.signatures["serve_text"]
    assert sorted(by_text.structured_input_signature[1]) == ["context", "question"]
    served = by_text(question=tf.constant(["abc"]), context=tf.constant(["abcdefg"]))
    assert sorted(served) == ["input_ids", "total"]  # only the packed features `returned` names
    assert served["input_ids"].numpy().tolist() == [[3]]
    assert served["total"].numpy().tolist() == [[3 * 3 + 7 + 10]]


def test_served_outputs_are_float32_and_ids_unchanged():
    calls = []

    def model(inputs, training):
        calls.append(training)
        return {"scores": tf.cast(inputs["token_ids"], tf.float16) / 4, "ids": inputs["token_ids"]}

    ids = tf.constant([[1, 2]], tf.int32)
    outputs = served_outputs(model, id_model_inputs(ids, ids, ids))
    assert calls == [False]
    assert outputs["scores"].dtype == tf.float32 and outputs["ids"].dtype == tf.int32
    np.testing.assert_array_equal(outputs["scores"].numpy(), [[0.25, 0.5]])


def test_id_model_inputs_are_the_backbones_with_a_heads_own():
    ids, mask, segments, positions = (tf.constant([[value]]) for value in (1, 2, 3, 4))
    inputs = id_model_inputs(ids, mask, segments, word_positions=positions)
    assert {name: value.numpy().item() for name, value in inputs.items()} == {
        "token_ids": 1,
        "padding_mask": 2,
        "segment_ids": 3,
        "word_positions": 4,
    }
