"""Raw strings -> the backbone's int32 inputs, in-graph, as a keras-hub `Preprocessor` (so exported models serve raw
text)."""

import keras
import tensorflow as tf

from electra_tf.errors import ConfigError
from electra_tf.inputs import pack_segment_pairs, pack_single_segments
from electra_tf.models.backbone import backbone_inputs
from finetune.models.vocabulary_preprocessor import ElectraVocabularyPreprocessor


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifierPreprocessor(ElectraVocabularyPreprocessor):
    """Tokenises text with `ElectraTokenizer` (tensorflow-text, BERT-exact) and packs `[CLS] A [SEP] (B [SEP])`.

    Call it on a string tensor [batch] (single sentences) or on a pair `x=(texts_a, texts_b)` of string tensors
    (sentence pairs: longest-first truncation, as BERT), optionally with labels `y` and `sample_weight` as keras-hub
    preprocessors take them (a bare 2-tuple argument is read as `(x, y)`, keras-hub's convention; `fit` hands pairs
    over as `x` already). A [batch, 1] tensor (as from `keras.Input(shape=(1,), dtype="string")`) is treated as
    [batch]; a Python list of strings is a batch of single sentences. Returns the backbone's inputs, int32
    [batch, max_seq_length] `token_ids`, `segment_ids`, `padding_mask` (zero-padded), packed with `y` and
    `sample_weight` when given.

    The vocabulary is saved inside `.keras` files as an asset, so a saved model does not depend on `vocab_file`.
    """

    min_seq_length = 5  # [CLS] A [SEP] B [SEP]

    def call(self, x, y=None, sample_weight=None):
        features = backbone_inputs(self.pack(x))
        return keras.utils.pack_x_y_sample_weight(features, y, sample_weight)

    def pack(self, inputs):
        """The reference's features (`input_ids`, `input_mask`, `segment_ids`) of raw text `inputs`."""
        tokenizer = self.require_tokenizer()
        segments = self._as_segments(inputs)
        ids = [tokenizer.tokenize(texts) for texts in segments]
        if len(ids) == 1:
            return pack_single_segments(ids[0], self.max_seq_length, tokenizer.cls_id, tokenizer.sep_id)
        return pack_segment_pairs(ids[0], ids[1], self.max_seq_length, tokenizer.cls_id, tokenizer.sep_id)

    @staticmethod
    def _as_segments(inputs):
        if isinstance(inputs, dict):
            raise ConfigError(
                "ElectraTextClassifierPreprocessor takes as x a string tensor or a (texts_a, texts_b) "
                "tuple, not a dict",
                arguments=("x",),
            )
        if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(item, (str, bytes)) for item in inputs):
            inputs = tf.constant(list(inputs))
        segments = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(segments) not in (1, 2):
            raise ConfigError(
                f"ElectraTextClassifierPreprocessor takes as x one or two text segments, got {len(segments)}",
                arguments=("x",),
            )
        return [_as_string_vector(segment) for segment in segments]


def _as_string_vector(texts):
    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    if texts.shape.rank == 0:
        return texts[tf.newaxis]
    if texts.shape.rank == 2 and texts.shape[-1] == 1:
        return tf.squeeze(texts, axis=-1)
    if texts.shape.rank != 1:
        raise ConfigError(
            f"ElectraTextClassifierPreprocessor takes as x a vector of strings per segment, got shape {texts.shape}",
            arguments=("x",),
        )
    return texts
