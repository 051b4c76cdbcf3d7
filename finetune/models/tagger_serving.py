"""SavedModel export of a fine-tuned `ElectraTokenClassifier` for TF Serving: an id signature and a raw-text one with
word-level outputs (TF Serving returns dense tensors only, so per-word outputs are padded to the longest text)."""

import tensorflow as tf

from electra_tf.models.lora import merged_lora
from electra_tf.serving_module import ServingModule, id_model_inputs, served_outputs


class TaggerServingModule(ServingModule):
    """The tagger, its tokenizer's tables, its tag names and two signatures.

    `serving_default`: int32 `input_ids`, `input_mask`, `segment_ids`, `word_positions` [batch, seq] (as
    `ElectraTokenClassifierPreprocessor` packs them) -> float32 `logits` [batch, seq, tags] and int32 `tag_ids`.
    `serve_text`: a string vector `texts` -> per word, padded to the most words in the batch: `words` and `tags`
    (strings, "" after the last word), `tag_ids` (-1 there), `word_starts` / `word_ends` (byte offsets into the text,
    -1 there), and `num_words`; a word that did not fit `max_seq_length` pieces has tag "" and tag id -1.
    """

    def __init__(self, tagger):
        preprocessor = tagger.preprocessor
        super().__init__("electra_tagger", preprocessor.text_tokenizer, preprocessor.max_seq_length)
        self.tagger = tagger
        self.preprocessor = preprocessor
        self.label_mapping = tagger.label_mapping

    def _serve_ids(self, input_ids, input_mask, segment_ids, word_positions):
        inputs = id_model_inputs(input_ids, input_mask, segment_ids, word_positions=word_positions)
        logits = served_outputs(self.tagger, inputs)
        return {"logits": logits, "tag_ids": tf.argmax(logits, axis=-1, output_type=tf.int32)}

    def _serve_text(self, texts):
        words, starts, ends = self.preprocessor.split_text(texts)
        features, num_packed = self.preprocessor.pack(words)
        tag_ids = self._serve_ids(
            features["token_ids"], features["padding_mask"], features["segment_ids"], features["word_positions"]
        )["tag_ids"]
        width = tf.cast(tf.maximum(tf.reduce_max(words.row_lengths()), 1), tf.int32)
        packed = tf.sequence_mask(num_packed, width)
        # Words past max_seq_length have no prediction; pad or cut the predictions to the words' width.
        tag_ids = tf.pad(tag_ids, [[0, 0], [0, tf.maximum(width - tf.shape(tag_ids)[1], 0)]])[:, :width]
        tag_ids = tf.where(packed, tag_ids, -1)
        tags = tf.where(packed, self.label_mapping.gather(tf.maximum(tag_ids, 0)), "")
        return {
            "words": words.to_tensor(""),
            "tags": tags,
            "tag_ids": tag_ids,
            "word_starts": starts.to_tensor(-1),
            "word_ends": ends.to_tensor(-1),
            "num_words": tf.cast(words.row_lengths(), tf.int32),
        }


def export_tagger(tagger, output_dir, export_format="saved_model", quantize=None):
    """Write the tagger to `output_dir` atomically (a LoRA tagger's kernels merged: `merged_lora`): a SavedModel, or
    with `export_format` "litert" / "onnx" its token-id signature (with `word_positions`) at the preprocessor's
    `max_seq_length` as model.tflite / model.onnx, with `quantize="int8"` int8 weights."""
    return TaggerServingModule(merged_lora(tagger)).write(output_dir, export_format, quantize)
