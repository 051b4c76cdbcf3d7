"""SavedModel export of the generator (a masked language model) for TF Serving."""

import tensorflow as tf

from electra_tf.export import SingleTextServingModule
from electra_tf.saved_model_writer import write_serving_model


class GeneratorServingModule(SingleTextServingModule):
    """The generator: `logits` [batch, seq, vocab] (float32, every position) and `predicted_ids` [batch, seq] (the
    arg-max token). Put [MASK] where a prediction is wanted, as in BERT."""

    def __init__(self, generator, tokenizer, max_seq_length):
        super().__init__(tokenizer, max_seq_length, name="electra_generator")
        self.generator = generator

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        shape = tf.shape(input_ids)
        # Our generator computes logits at given positions only; serving asks for all of them.
        every_position = tf.tile(tf.range(shape[1])[tf.newaxis, :], [shape[0], 1])
        logits = tf.cast(
            self.generator(
                {
                    "token_ids": input_ids,
                    "padding_mask": input_mask,
                    "segment_ids": segment_ids,
                    "mask_positions": every_position,
                },
                training=False,
            ),
            tf.float32,
        )
        return {"logits": logits, "predicted_ids": tf.argmax(logits, axis=-1, output_type=tf.int32)}


def export_generator(generator, tokenizer, output_dir, max_seq_length=128):
    """Write the generator's SavedModel to `output_dir` atomically."""
    module = GeneratorServingModule(generator, tokenizer, max_seq_length)
    return write_serving_model(module, output_dir, module.signatures())
