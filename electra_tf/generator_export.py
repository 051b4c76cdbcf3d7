"""SavedModel export of the generator (a masked language model) for TF Serving.

Kept apart from `export.py` (the discriminator's) so the two exports evolve independently; both stage the SavedModel
in a sibling directory and rename it into place.
"""

import tensorflow as tf

from electra_tf.export import write_serving_model
from electra_tf.inputs import pack_single_segments


class GeneratorServingModule(tf.Module):
    """The generator, the tokenizer's tables and two signatures.

    `serving_default`: int32 `input_ids`, `input_mask`, `segment_ids` [batch, seq] -> `logits` [batch, seq, vocab]
    (float32, every position) and `predicted_ids` [batch, seq] (the arg-max token). Put [MASK] where a prediction is
    wanted, as in BERT.
    `serve_text`: a string vector -> the same outputs plus the `input_ids` and `input_mask` it tokenised in-graph.
    """

    def __init__(self, generator, tokenizer, max_seq_length):
        super().__init__(name="electra_generator")
        self.generator = generator
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        id_spec = tf.TensorSpec([None, None], tf.int32)
        self.serve_ids = tf.function(self._serve_ids, input_signature=[id_spec, id_spec, id_spec])
        self.serve_text = tf.function(self._serve_text, input_signature=[tf.TensorSpec([None], tf.string)])

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        shape = tf.shape(input_ids)
        # Our generator computes logits at given positions only; serving asks for all of them.
        every_position = tf.tile(tf.range(shape[1])[tf.newaxis, :], [shape[0], 1])
        logits = tf.cast(self.generator(
            {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids,
             "masked_lm_positions": every_position}, training=False), tf.float32)
        return {"logits": logits, "predicted_ids": tf.argmax(logits, axis=-1, output_type=tf.int32)}

    def _serve_text(self, texts):
        features = pack_single_segments(self.tokenizer.tokenize(texts), self.max_seq_length, self.tokenizer.cls_id,
                                        self.tokenizer.sep_id)
        outputs = self._serve_ids(**features)
        outputs.update(input_ids=features["input_ids"], input_mask=features["input_mask"])
        return outputs


def export_generator(generator, tokenizer, output_dir, max_seq_length=128):
    """Write the generator's SavedModel to `output_dir` atomically."""
    module = GeneratorServingModule(generator, tokenizer, max_seq_length)
    return write_serving_model(module, output_dir, {"serving_default": module.serve_ids,
                                                    "serve_text": module.serve_text})
