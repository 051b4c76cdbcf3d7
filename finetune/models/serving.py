"""SavedModel export of a fine-tuned `ElectraTextClassifier` for TF Serving, with a token-id and a raw-text signature.

Written the way the discriminator's and generator's exports are (`write_serving_model`); `ElectraTextClassifier.export`
and `electra-export --model=classifier` (with `saved_classifier` reading the `.keras` file) call it.
"""

import tensorflow as tf

from electra_tf.export import write_model
from electra_tf.models.lora import merged_lora


class ClassifierServingModule(tf.Module):
    """The fine-tuned classifier, its tokenizer's tables and two signatures.

    `serving_default`: int32 `input_ids`, `input_mask`, `segment_ids` [batch, seq] -> float32 `logits`
    ([batch, classes]; regression: [batch]) and, for classification, `probabilities` (softmax of the logits) and,
    when the classifier has `labels`, `labels`: the predicted label strings [batch].
    `serve_text`: single sentences: a string vector `texts`; sentence pairs: string vectors `text_a` and `text_b` ->
    the same outputs plus the `input_ids`, `input_mask` and `segment_ids` it packed in-graph (the classifier's own
    `ElectraTextClassifierPreprocessor`, so serving tokenises exactly as training did).
    """

    def __init__(self, text_classifier, text_pairs):
        super().__init__(name="electra_text_classifier")
        self.classifier = text_classifier
        self.preprocessor = text_classifier.preprocessor
        # Tracked here as well so the vocabulary tables are saved whatever Keras tracks inside the layer.
        self.tokenizer = self.preprocessor.text_tokenizer
        self.regression = text_classifier.regression
        self.label_mapping = text_classifier.label_mapping
        id_spec = tf.TensorSpec([None, None], tf.int32)
        text_spec = tf.TensorSpec([None], tf.string)
        self.serve_ids = tf.function(self._serve_ids, input_signature=[id_spec, id_spec, id_spec])
        if text_pairs:
            self.serve_text = tf.function(self._serve_text_pairs, input_signature=[text_spec, text_spec])
        else:
            self.serve_text = tf.function(self._serve_texts, input_signature=[text_spec])

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        logits = tf.cast(
            self.classifier(
                {"token_ids": input_ids, "padding_mask": input_mask, "segment_ids": segment_ids}, training=False
            ),
            tf.float32,
        )
        if self.regression:
            return {"logits": logits}
        outputs = {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1)}
        if self.label_mapping is not None:
            outputs["labels"] = self.label_mapping.gather(tf.argmax(logits, axis=-1))
        return outputs

    def _serve_features(self, features):
        outputs = self._serve_ids(**features)
        outputs.update(features)
        return outputs

    def _serve_texts(self, texts):
        return self._serve_features(self.preprocessor.pack(texts))

    def _serve_text_pairs(self, text_a, text_b):
        return self._serve_features(self.preprocessor.pack((text_a, text_b)))


def export_classifier(text_classifier, output_dir, text_pairs=False, export_format="saved_model", quantize=None):
    """Write the classifier to `output_dir` atomically (a LoRA classifier's kernels merged: `merged_lora`): a
    SavedModel, or with `export_format` "litert" / "onnx" its token-id signature at the preprocessor's
    `max_seq_length` as model.tflite / model.onnx, with `quantize="int8"` int8 weights."""
    module = ClassifierServingModule(merged_lora(text_classifier), text_pairs)
    return write_model(
        module,
        output_dir,
        {"serving_default": module.serve_ids, "serve_text": module.serve_text},
        export_format,
        text_classifier.preprocessor.max_seq_length,
        quantize,
    )
