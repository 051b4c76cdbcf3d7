"""Words or raw text -> the backbone's int32 inputs and each word's first-piece position, in-graph, as a keras-hub
`Preprocessor` (so an exported tagger serves raw text)."""

import keras
import tensorflow as tf

from electra_tf.errors import ConfigError
from electra_tf.models.backbone import backbone_inputs
from finetune.models.vocabulary_preprocessor import ElectraVocabularyPreprocessor

WORD_POSITIONS = "word_positions"


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTokenClassifierPreprocessor(ElectraVocabularyPreprocessor):
    """Packs `[CLS] pieces of word 1, word 2, ... [SEP]` and records where each word's first piece is.

    Inputs `x`: raw strings [batch] (split into words as BERT splits text: at whitespace and punctuation), or words,
    ragged strings [batch, (words)] (a Python list of lists of strings is converted). `y`: one tag id per word, ragged
    int [batch, (words)]. Returns the backbone's `token_ids`, `segment_ids`, `padding_mask` [batch, max_seq_length] and
    `word_positions` [batch, max_seq_length] (the first piece of word k at `word_positions[:, k]`, 0 after the last
    word); with `y`, the tags padded to [batch, max_seq_length] with 0 and a `sample_weight` of 1 for each word that was
    packed (times the given `sample_weight`), so that the other pieces and the padding carry no loss.

    Words whose first piece does not fit in `max_seq_length - 2` pieces are left out (their weight is 0); the
    fine-tuning runner splits long sentences into windows so that this never happens there
    (`finetune.tagging.features`). The vocabulary is saved inside `.keras` files as an asset.
    """

    min_seq_length = 3  # [CLS] word [SEP]

    def warm_up(self, tokenizer):
        tokenizer.tokenize_words(tf.ragged.constant([["warm", "up"]]))

    def call(self, x, y=None, sample_weight=None):
        words = self.words(x)
        features, num_packed = self.pack(words)
        if y is None:
            return keras.utils.pack_x_y_sample_weight(features, None, sample_weight)
        tags, weights = self.pack_tags(y, num_packed)
        if sample_weight is not None:
            weights = weights * tf.cast(sample_weight, tf.float32)[:, tf.newaxis]
        return features, tags, weights

    def words(self, x):
        """The words of `x` (raw strings or words, see the class docstring) as ragged strings [batch, (words)]."""
        if isinstance(x, dict):
            raise ConfigError(
                "ElectraTokenClassifierPreprocessor takes as x strings or words, not a dict", arguments=("x",)
            )
        if isinstance(x, (list, tuple)):
            if all(isinstance(item, (str, bytes)) for item in x):
                x = tf.constant(list(x))
            else:
                x = tf.ragged.constant([list(words) for words in x], dtype=tf.string)
        if isinstance(x, tf.RaggedTensor):
            return x
        x = tf.convert_to_tensor(x, dtype=tf.string)
        if x.shape.rank == 2 and x.shape[-1] == 1:
            x = tf.squeeze(x, axis=-1)
        if x.shape.rank == 0:
            x = x[tf.newaxis]
        if x.shape.rank == 1:
            return self.split_text(x)[0]
        if x.shape.rank == 2:
            return tf.RaggedTensor.from_tensor(x, padding="")
        raise ConfigError(
            f"ElectraTokenClassifierPreprocessor takes as x strings [batch] or words [batch, words], "
            f"got shape {x.shape}",
            arguments=("x",),
        )

    def split_text(self, texts):
        """(words, start, end): ragged [batch, (words)] raw words of `texts` and their byte offsets."""
        return self.require_tokenizer().basic_tokenizer.split_raw_words(texts)

    def pack(self, words):
        """({backbone inputs, word_positions}, number of words packed per example) of ragged `words`."""
        tokenizer = self.require_tokenizer()
        pieces = tokenizer.tokenize_words(words)  # [batch, (words), (pieces)]
        capacity = self.max_seq_length - 2
        starts = tf.math.cumsum(pieces.row_lengths(axis=2), axis=1, exclusive=True)  # [batch, (words)]
        fits = starts < capacity
        num_packed = tf.reduce_sum(tf.cast(fits, tf.int32), axis=1)
        ids = pieces.merge_dims(1, 2)[:, :capacity]
        batch = tf.shape(ids.row_lengths())[0]
        cls = tf.fill([batch, 1], tf.constant(tokenizer.cls_id, tf.int32))
        sep = tf.fill([batch, 1], tf.constant(tokenizer.sep_id, tf.int32))
        ids = tf.concat([cls, ids, sep], axis=1)
        shape = [batch, self.max_seq_length]
        token_ids = ids.to_tensor(default_value=0, shape=shape)
        padding_mask = tf.ones_like(ids).to_tensor(default_value=0, shape=shape)
        positions = tf.ragged.boolean_mask(tf.cast(starts, tf.int32) + 1, fits).to_tensor(default_value=0, shape=shape)
        features = {"input_ids": token_ids, "input_mask": padding_mask, "segment_ids": tf.zeros_like(token_ids)}
        return {**backbone_inputs(features), WORD_POSITIONS: positions}, num_packed

    def pack_tags(self, tags, num_packed):
        """Word tags (ragged [batch, (words)]) padded to [batch, max_seq_length], with weight 1 on packed words."""
        if not isinstance(tags, tf.RaggedTensor):
            tags = tf.RaggedTensor.from_tensor(tf.convert_to_tensor(tags))
        tags = tf.cast(tags, tf.int32)
        shape = [tf.shape(num_packed)[0], self.max_seq_length]
        padded = tags[:, : self.max_seq_length].to_tensor(default_value=0, shape=shape)
        weights = tf.sequence_mask(num_packed, self.max_seq_length, dtype=tf.float32)
        return padded * tf.cast(weights, tf.int32), weights
