"""SavedModel export of the discriminator for TF Serving, with a token-id and a raw-text signature, and `write_model`,
which writes any serving module as a SavedModel or, its token-id signature alone, as a LiteRT or ONNX file."""

import tensorflow as tf

from electra_tf.export_formats import check_export_format
from electra_tf.inputs import pack_single_segments
from electra_tf.saved_model_writer import write_serving_model


class SingleTextServingModule(tf.Module):
    """A network behind two signatures: `serving_default` on int32 `input_ids`, `input_mask`, `segment_ids`
    [batch, seq], and `serve_text` on a string vector, packed in-graph as `[CLS] text [SEP]` (truncated to
    `max_seq_length`), which returns the same outputs plus the `input_ids` and `input_mask` it built."""

    def __init__(self, tokenizer, max_seq_length, name):
        super().__init__(name=name)
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        id_spec = tf.TensorSpec([None, None], tf.int32)
        self.serve_ids = tf.function(self._serve_ids, input_signature=[id_spec, id_spec, id_spec])
        self.serve_text = tf.function(self._serve_text, input_signature=[tf.TensorSpec([None], tf.string)])

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        raise NotImplementedError

    def _serve_text(self, texts):
        features = pack_single_segments(
            self.tokenizer.tokenize(texts), self.max_seq_length, self.tokenizer.cls_id, self.tokenizer.sep_id
        )
        outputs = self._serve_ids(**features)
        outputs.update(input_ids=features["input_ids"], input_mask=features["input_mask"])
        return outputs

    def signatures(self):
        return {"serving_default": self.serve_ids, "serve_text": self.serve_text}


class DiscriminatorServingModule(SingleTextServingModule):
    """The discriminator: `logits` [batch, seq] (positive for "replaced") and `replaced_probability`."""

    def __init__(self, discriminator, tokenizer, max_seq_length):
        super().__init__(tokenizer, max_seq_length, name="electra_discriminator")
        self.discriminator = discriminator

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        logits = tf.cast(
            self.discriminator(
                {"token_ids": input_ids, "padding_mask": input_mask, "segment_ids": segment_ids}, training=False
            ),
            tf.float32,
        )
        return {"logits": logits, "replaced_probability": tf.math.sigmoid(logits)}


def write_model(module, output_dir, signatures, export_format="saved_model", max_seq_length=128, quantize=None):
    """Write `module` to `output_dir` atomically: a SavedModel with `signatures` ({name: tf.function}), or, for
    `export_format` "litert" / "onnx", `output_dir`/model.tflite / model.onnx of its `serving_default` at
    [batch, max_seq_length] (`electra_tf.id_model_export`), with `quantize="int8"` int8 weights (dynamic-range).
    Returns what was written."""
    check_export_format(export_format, quantize=quantize)
    if export_format == "saved_model":
        return write_serving_model(module, output_dir, signatures)
    from electra_tf.id_model_export import write_id_model

    return write_id_model(
        module, signatures["serving_default"], output_dir, export_format, max_seq_length, quantize=quantize
    )


def export_discriminator(
    discriminator, tokenizer, output_dir, max_seq_length=128, export_format="saved_model", quantize=None
):
    """Write the discriminator to `output_dir` atomically (staged in a sibling directory, then renamed): a SavedModel,
    or with `export_format` "litert" / "onnx" its token-id signature at `max_seq_length` as model.tflite / model.onnx
    (`tokenizer` is then unused and may be None), with `quantize="int8"` int8 weights."""
    module = DiscriminatorServingModule(discriminator, tokenizer, max_seq_length)
    return write_model(module, output_dir, module.signatures(), export_format, max_seq_length, quantize)
