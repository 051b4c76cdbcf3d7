"""The base of every serving module (discriminator, generator, fine-tuned classifier, tagger and SQuAD model): a
network behind TF Serving's two signatures, and the one way such a module is written (SavedModel, LiteRT or ONNX)."""

import inspect

import tensorflow as tf

from electra_tf.export_formats import check_export_format
from electra_tf.id_model_export import write_id_model
from electra_tf.models import backbone_inputs
from electra_tf.saved_model_writer import write_serving_model

TOKEN_IDS = tf.TensorSpec([None, None], tf.int32)
TEXTS = tf.TensorSpec([None], tf.string)


def _serving_function(method, spec):
    """`method` as a tf.function taking `spec` for each of its parameters: their names are the signature's input
    names, which TF Serving clients send and LiteRT / ONNX files keep."""
    return tf.function(method, input_signature=[spec] * len(inspect.signature(method).parameters))


def id_model_inputs(input_ids, input_mask, segment_ids, **more_inputs):
    """The backbone's inputs (`backbone_inputs`) of the id signature's `input_ids`, `input_mask` and `segment_ids`,
    with `more_inputs` (a head's own inputs) as they are."""
    features = {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
    return backbone_inputs(features) | more_inputs


def served_outputs(model, inputs):
    """`model`'s outputs (a tensor or a dict of them) on `inputs` in inference mode, every floating one as float32
    whatever the model computes in; ids stay as they are."""

    def as_served(value):
        return tf.cast(value, tf.float32) if value.dtype.is_floating else value

    return tf.nest.map_structure(as_served, model(inputs, training=False))


class ServingModule(tf.Module):
    """A network behind two signatures: `serving_default`, `_serve_ids` on int32 [batch, seq] tensors, and
    `serve_text`, `_serve_text` (or the `serve_text` method given) on string vectors; each takes the parameters of its
    method, by name.

    `tokenizer` is tracked so that its vocabulary tables are saved with the module (None when only token ids are
    written); `max_seq_length` is the length text is packed to and LiteRT / ONNX files take.
    """

    def __init__(self, name, tokenizer, max_seq_length, serve_text=None):
        super().__init__(name=name)
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.serve_ids = _serving_function(self._serve_ids, TOKEN_IDS)
        self.serve_text = _serving_function(serve_text or self._serve_text, TEXTS)

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        raise NotImplementedError

    def _serve_text(self, texts):
        raise NotImplementedError

    def _serve_packed(self, features, returned=None):
        """The id signature's outputs on `features` (its inputs, packed from text in-graph), with the features named
        in `returned` (all of them by default) as outputs too."""
        outputs = self._serve_ids(**features)
        outputs.update({name: features[name] for name in returned or features})
        return outputs

    def signatures(self):
        return {"serving_default": self.serve_ids, "serve_text": self.serve_text}

    def write(self, output_dir, export_format="saved_model", quantize=None):
        """Write the module to `output_dir` atomically: a SavedModel of both signatures, or, for `export_format`
        "litert" / "onnx", `output_dir`/model.tflite / model.onnx of `serving_default` at [batch, max_seq_length]
        (`electra_tf.id_model_export`), with `quantize="int8"` int8 weights (dynamic-range). Returns what was
        written."""
        check_export_format(export_format, quantize=quantize)
        if export_format == "saved_model":
            return write_serving_model(self, output_dir, self.signatures())
        return write_id_model(self, self.serve_ids, output_dir, export_format, self.max_seq_length, quantize=quantize)
