"""SavedModel export of the discriminator for TF Serving, with a token-id and a raw-text signature, or its token-id
signature alone as a LiteRT or ONNX file."""

import tensorflow as tf

from electra_tf.inputs import pack_single_segments
from electra_tf.serving_module import ServingModule, id_model_inputs, served_outputs


class SingleTextServingModule(ServingModule):
    """A network behind `serving_default` on int32 `input_ids`, `input_mask`, `segment_ids` [batch, seq], and
    `serve_text` on a string vector, packed in-graph as `[CLS] text [SEP]` (truncated to `max_seq_length`), which
    returns the same outputs plus the `input_ids` and `input_mask` it built."""

    def _serve_text(self, texts):
        features = pack_single_segments(
            self.tokenizer.tokenize(texts), self.max_seq_length, self.tokenizer.cls_id, self.tokenizer.sep_id
        )
        return self._serve_packed(features, returned=("input_ids", "input_mask"))


class DiscriminatorServingModule(SingleTextServingModule):
    """The discriminator: `logits` [batch, seq] (positive for "replaced") and `replaced_probability`."""

    def __init__(self, discriminator, tokenizer, max_seq_length):
        super().__init__("electra_discriminator", tokenizer, max_seq_length)
        self.discriminator = discriminator

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        logits = served_outputs(self.discriminator, id_model_inputs(input_ids, input_mask, segment_ids))
        return {"logits": logits, "replaced_probability": tf.math.sigmoid(logits)}


def export_discriminator(
    discriminator, tokenizer, output_dir, max_seq_length=128, export_format="saved_model", quantize=None
):
    """Write the discriminator to `output_dir` atomically (staged in a sibling directory, then renamed): a SavedModel,
    or with `export_format` "litert" / "onnx" its token-id signature at `max_seq_length` as model.tflite / model.onnx
    (`tokenizer` is then unused and may be None), with `quantize="int8"` int8 weights."""
    module = DiscriminatorServingModule(discriminator, tokenizer, max_seq_length)
    return module.write(output_dir, export_format, quantize)
