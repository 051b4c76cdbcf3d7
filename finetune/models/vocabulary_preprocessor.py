"""What the classifier's and the tagger's preprocessors share: a WordPiece vocabulary saved inside `.keras` files as an
asset, the casing settings, and the sequence length."""

import os

import keras_hub
import tensorflow as tf

from electra_tf.errors import ConfigError
from electra_tf.tokenizer import ElectraTokenizer

VOCAB_ASSET = "vocab.txt"


class ElectraVocabularyPreprocessor(keras_hub.models.Preprocessor):
    """A keras-hub `Preprocessor` owning an `ElectraTokenizer` (`text_tokenizer`). Without a `vocab_file` on disk (a
    model being loaded elsewhere) `load_assets` provides the saved vocabulary, so a saved model does not depend on the
    original file. Subclasses set `min_seq_length` (the special tokens plus one piece per segment) and may override
    `warm_up`."""

    min_seq_length = 3

    def __init__(self, vocab_file=None, max_seq_length=128, do_lower_case=True, strip_accents=None, **kwargs):
        super().__init__(**kwargs)
        if max_seq_length < self.min_seq_length:
            raise ConfigError(
                f"max_seq_length must be at least {self.min_seq_length} for {type(self).__name__}, got "
                f"{max_seq_length}",
                arguments=("max_seq_length",),
            )
        self.vocab_file = vocab_file
        self.max_seq_length = int(max_seq_length)
        self.do_lower_case = bool(do_lower_case)
        self.strip_accents = strip_accents
        self.text_tokenizer = None
        if vocab_file and os.path.isfile(vocab_file):
            self.set_tokenizer(vocab_file)
        self.built = True

    @classmethod
    def from_tokenizer(cls, tokenizer, max_seq_length):
        """A preprocessor normalising and splitting text exactly as `tokenizer` (an `ElectraTokenizer`) does."""
        return cls(
            tokenizer.vocab_file,
            max_seq_length=max_seq_length,
            do_lower_case=tokenizer.do_lower_case,
            strip_accents=tokenizer.strip_accents,
        )

    def set_tokenizer(self, vocab_file):
        self.text_tokenizer = ElectraTokenizer(
            vocab_file, do_lower_case=self.do_lower_case, strip_accents=self.strip_accents
        )
        # Build the tensorflow-text models now, eagerly, rather than on first use inside a traced train step.
        with tf.init_scope():
            self.warm_up(self.text_tokenizer)

    def warm_up(self, tokenizer):
        tokenizer.tokenize(tf.constant(["warm up"]))

    def require_tokenizer(self):
        if self.text_tokenizer is None:
            raise ConfigError(
                f"{type(self).__name__} has no vocabulary: pass vocab_file=<vocab.txt> (or load it "
                "from a .keras file, which holds the vocabulary)",
                arguments=("vocab_file",),
            )
        return self.text_tokenizer

    def save_assets(self, dir_path):
        # Written from the loaded vocabulary, not copied: the original file may be gone (a model loaded from .keras).
        with open(os.path.join(dir_path, VOCAB_ASSET), "w", encoding="utf-8") as handle:
            handle.write("\n".join(self.text_tokenizer.vocab) + "\n")

    def load_assets(self, dir_path):
        self.set_tokenizer(os.path.join(dir_path, VOCAB_ASSET))

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_file=self.vocab_file,
            max_seq_length=self.max_seq_length,
            do_lower_case=self.do_lower_case,
            strip_accents=self.strip_accents,
        )
        return config
