"""SavedModel export of a fine-tuned `ElectraTextClassifier` for TF Serving, with a token-id and a raw-text signature.

A `ServingModule`, as the discriminator's and generator's exports are; `ElectraTextClassifier.export` and
`electra-export --model=classifier` (with `saved_classifier` reading the `.keras` file) call it.
"""

import tensorflow as tf

from electra_tf.models.lora import merged_lora
from electra_tf.serving_module import ServingModule, id_model_inputs, served_outputs


class ClassifierServingModule(ServingModule):
    """The fine-tuned classifier, its tokenizer's tables and two signatures.

    `serving_default`: int32 `input_ids`, `input_mask`, `segment_ids` [batch, seq] -> float32 `logits`
    ([batch, classes]; regression: [batch]) and, for classification, `probabilities` (softmax of the logits) and,
    when the classifier has `labels`, `labels`: the predicted label strings [batch].
    `serve_text`: single sentences: a string vector `texts`; sentence pairs: string vectors `text_a` and `text_b` ->
    the same outputs plus the `input_ids`, `input_mask` and `segment_ids` it packed in-graph (the classifier's own
    `ElectraTextClassifierPreprocessor`, so serving tokenises exactly as training did).
    """

    def __init__(self, text_classifier, text_pairs):
        preprocessor = text_classifier.preprocessor
        # The tokenizer is the module's as well, so the vocabulary tables are saved whatever Keras tracks in the layer.
        super().__init__(
            "electra_text_classifier",
            preprocessor.text_tokenizer,
            preprocessor.max_seq_length,
            serve_text=self._serve_text_pairs if text_pairs else self._serve_texts,
        )
        self.classifier = text_classifier
        self.preprocessor = preprocessor
        self.regression = text_classifier.regression
        self.label_mapping = text_classifier.label_mapping

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        logits = served_outputs(self.classifier, id_model_inputs(input_ids, input_mask, segment_ids))
        if self.regression:
            return {"logits": logits}
        outputs = {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1)}
        if self.label_mapping is not None:
            outputs["labels"] = self.label_mapping.gather(tf.argmax(logits, axis=-1))
        return outputs

    def _serve_texts(self, texts):
        return self._serve_packed(self.preprocessor.pack(texts))

    def _serve_text_pairs(self, text_a, text_b):
        return self._serve_packed(self.preprocessor.pack((text_a, text_b)))


def export_classifier(text_classifier, output_dir, text_pairs=False, export_format="saved_model", quantize=None):
    """Write the classifier to `output_dir` atomically (a LoRA classifier's kernels merged: `merged_lora`): a
    SavedModel, or with `export_format` "litert" / "onnx" its token-id signature at the preprocessor's
    `max_seq_length` as model.tflite / model.onnx, with `quantize="int8"` int8 weights."""
    module = ClassifierServingModule(merged_lora(text_classifier), text_pairs)
    return module.write(output_dir, export_format, quantize)
