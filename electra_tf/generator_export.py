"""SavedModel export of the generator (a masked language model) for TF Serving."""

import tensorflow as tf

from electra_tf.export import SingleTextServingModule
from electra_tf.serving_module import id_model_inputs, served_outputs


class GeneratorServingModule(SingleTextServingModule):
    """The generator: `logits` [batch, seq, vocab] (float32, every position) and `predicted_ids` [batch, seq] (the
    arg-max token). Put [MASK] where a prediction is wanted, as in BERT."""

    def __init__(self, generator, tokenizer, max_seq_length):
        super().__init__("electra_generator", tokenizer, max_seq_length)
        self.generator = generator

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        shape = tf.shape(input_ids)
        # Our generator computes logits at given positions only; serving asks for all of them.
        every_position = tf.tile(tf.range(shape[1])[tf.newaxis, :], [shape[0], 1])
        inputs = id_model_inputs(input_ids, input_mask, segment_ids, mask_positions=every_position)
        logits = served_outputs(self.generator, inputs)
        return {"logits": logits, "predicted_ids": tf.argmax(logits, axis=-1, output_type=tf.int32)}


def export_generator(generator, tokenizer, output_dir, max_seq_length=128):
    """Write the generator's SavedModel to `output_dir` atomically."""
    return GeneratorServingModule(generator, tokenizer, max_seq_length).write(output_dir)
