"""Raw strings -> the backbone's int32 inputs, in-graph, as a keras-hub `Preprocessor` (so exported models serve raw
text)."""

import os

import keras
import keras_hub
import tensorflow as tf

from electra_tf.errors import ConfigError
from electra_tf.inputs import pack_segment_pairs, pack_single_segments
from electra_tf.models.backbone import backbone_inputs
from electra_tf.tokenizer import ElectraTokenizer

VOCAB_ASSET = "vocab.txt"


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifierPreprocessor(keras_hub.models.Preprocessor):
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

    def __init__(self, vocab_file=None, max_seq_length=128, do_lower_case=True, strip_accents=None, **kwargs):
        super().__init__(**kwargs)
        if max_seq_length < 5:
            raise ConfigError(f"max_seq_length must be at least 5 for [CLS] A [SEP] B [SEP], got {max_seq_length}")
        self.vocab_file = vocab_file
        self.max_seq_length = int(max_seq_length)
        self.do_lower_case = bool(do_lower_case)
        self.strip_accents = strip_accents
        self.text_tokenizer = None
        # Without a file here (a model being loaded elsewhere), `load_assets` provides the saved vocabulary.
        if vocab_file and os.path.isfile(vocab_file):
            self._set_tokenizer(vocab_file)
        self.built = True

    def _set_tokenizer(self, vocab_file):
        self.text_tokenizer = ElectraTokenizer(vocab_file, do_lower_case=self.do_lower_case,
                                          strip_accents=self.strip_accents)
        # Build the tensorflow-text models now, eagerly, rather than on first use inside a traced train step.
        with tf.init_scope():
            self.text_tokenizer.tokenize(tf.constant(["warm up"]))

    def call(self, x, y=None, sample_weight=None):
        features = backbone_inputs(self.pack(x))
        return keras.utils.pack_x_y_sample_weight(features, y, sample_weight)

    def pack(self, inputs):
        """The reference's features (`input_ids`, `input_mask`, `segment_ids`) of raw text `inputs`."""
        if self.text_tokenizer is None:
            raise ConfigError("ElectraTextClassifierPreprocessor has no vocabulary: pass vocab_file=<vocab.txt> (or load it from a "
                              ".keras file, which holds the vocabulary)")
        segments = self._as_segments(inputs)
        tokenizer = self.text_tokenizer
        ids = [tokenizer.tokenize(texts) for texts in segments]
        if len(ids) == 1:
            return pack_single_segments(ids[0], self.max_seq_length, tokenizer.cls_id, tokenizer.sep_id)
        return pack_segment_pairs(ids[0], ids[1], self.max_seq_length, tokenizer.cls_id, tokenizer.sep_id)

    @staticmethod
    def _as_segments(inputs):
        if isinstance(inputs, dict):
            raise ConfigError("ElectraTextClassifierPreprocessor takes a string tensor or a (texts_a, texts_b) tuple, not a dict")
        if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(item, (str, bytes)) for item in inputs):
            inputs = tf.constant(list(inputs))
        segments = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(segments) not in (1, 2):
            raise ConfigError(f"ElectraTextClassifierPreprocessor takes one or two text segments, got {len(segments)}")
        return [_as_string_vector(segment) for segment in segments]

    def save_assets(self, dir_path):
        # Written from the loaded vocabulary, not copied: the original file may be gone (a model loaded from .keras).
        with open(os.path.join(dir_path, VOCAB_ASSET), "w", encoding="utf-8") as handle:
            handle.write("\n".join(self.text_tokenizer.vocab) + "\n")

    def load_assets(self, dir_path):
        self._set_tokenizer(os.path.join(dir_path, VOCAB_ASSET))

    def get_config(self):
        config = super().get_config()
        config.update(vocab_file=self.vocab_file, max_seq_length=self.max_seq_length,
                      do_lower_case=self.do_lower_case, strip_accents=self.strip_accents)
        return config


def _as_string_vector(texts):
    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    if texts.shape.rank == 0:
        return texts[tf.newaxis]
    if texts.shape.rank == 2 and texts.shape[-1] == 1:
        return tf.squeeze(texts, axis=-1)
    if texts.shape.rank != 1:
        raise ConfigError(f"ElectraTextClassifierPreprocessor takes a vector of strings per segment, got shape {texts.shape}")
    return texts
