"""BERT WordPiece tokenisation on tensorflow-text ops, matching BERT's reference `tokenization.py`.

`tensorflow_text.FastBertTokenizer` differs from the reference BERT tokenizer in ways that change ids on real text
(measured on the SQuAD v1.1 dev contexts with the BERT uncased vocabulary):

* its lower-casing is ICU case folding with NFKC, so "½" becomes "1⁄2", "ß" becomes "ss", "ς" becomes "σ";
  BERT uses Python's `str.lower()`;
* it replaces control and format characters (e.g. zero-width spaces) with a space, splitting words, and keeps
  U+FFFD; BERT deletes them;
* its 100-per-word limit counts UTF-8 bytes; BERT's counts characters.

So this module keeps BERT's order of operations with tensorflow-text building blocks: split the raw text into words
(whitespace, punctuation, CJK characters), normalise each word (delete control characters, lower-case, NFD, drop
non-spacing marks), then run `FastWordpieceTokenizer` on the words without its own pre-tokenisation. Splitting the
raw text first is what lets `tokenize_with_offsets` report byte offsets into the caller's strings.

None of those differences can arise in printable ASCII text (plus tab, CR, LF): there `FastBertTokenizer` gives
BERT's ids, about seven times faster than the exact path, so `tokenize` routes such strings (most lines of English
corpora) through it and the rest through the exact path.
"""

import dataclasses
import functools
import hashlib

import tensorflow as tf
import tensorflow_text as tf_text

from electra_tf.errors import DataError
from electra_tf.preflight import require_vocab_file

PAD_TOKEN, UNK_TOKEN, CLS_TOKEN, SEP_TOKEN, MASK_TOKEN = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS = (PAD_TOKEN, UNK_TOKEN, CLS_TOKEN, SEP_TOKEN, MASK_TOKEN)
SUFFIX_INDICATOR = "##"
# BERT maps words longer than this many characters (not bytes) to [UNK].
MAX_CHARS_PER_WORD = 100

# Python's str.split() (used by BERT after its clean-up) splits on these; other C0/C1 controls are deleted first.
_WHITESPACE = r"[\t\n\r \p{Zs}\x{2028}\x{2029}]"
# BERT's _is_punctuation: the ASCII non-alphanumerics plus Unicode category P*. The four extra characters are not
# punctuation themselves but become punctuation after BERT's lower-case + NFD + accent stripping, which BERT applies
# before splitting (U+1FEF GREEK VARIA -> "`", U+2260/226E/226F -> "=", "<", ">" plus a combining mark).
_PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}\x{1FEF}\x{2260}\x{226E}\x{226F}]"
# BERT's _is_chinese_char: CJK Unified Ideographs blocks, each a word of its own.
_CJK = (
    r"[\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}\x{2B740}-\x{2B81F}"
    r"\x{2B820}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]"
)
_SPLIT_PATTERN = f"{_WHITESPACE}+|{_PUNCTUATION}|{_CJK}"
_KEEP_PATTERN = f"{_PUNCTUATION}|{_CJK}"
# Strings made only of these characters take the FastBertTokenizer path (see the module docstring).
_FAST_PATH_TEXT = r"[\t\n\r\x20-\x7e]*"
# BERT's _clean_text deletes NUL, U+FFFD and categories Cc/Cf except tab, newline and carriage return.
_DELETED_CHARACTERS = r"[\x{0}-\x{8}\x{B}\x{C}\x{E}-\x{1F}\x{7F}-\x{9F}\p{Cf}\x{FFFD}]"


@dataclasses.dataclass(frozen=True)
class TokenizerSettings:
    """How text is normalised before WordPiece: what a vocabulary was built with and a model must be served with.

    Args:
        do_lower_case: lower-case the text (BERT uncased); False for a cased vocabulary.
        strip_accents: NFD-decompose and drop non-spacing marks; None follows `do_lower_case`, as BERT does.
    """

    do_lower_case: bool = True
    strip_accents: bool = None

    def __post_init__(self):
        object.__setattr__(self, "do_lower_case", bool(self.do_lower_case))
        resolved = self.do_lower_case if self.strip_accents is None else bool(self.strip_accents)
        object.__setattr__(self, "strip_accents", resolved)

    def to_dict(self):
        return dataclasses.asdict(self)

    def overridden(self, do_lower_case=None, strip_accents=None):
        """These settings with the given values put over them (None keeps a value). A new `do_lower_case` without
        `strip_accents` follows BERT's rule: accents are stripped when lower-casing."""
        if do_lower_case is None:
            return TokenizerSettings(self.do_lower_case, self.strip_accents if strip_accents is None else strip_accents)
        return TokenizerSettings(do_lower_case, strip_accents)


# What BERT's and the reference's tokenisation do when nothing says otherwise (models saved before the settings were).
BERT_UNCASED = TokenizerSettings(do_lower_case=True)


def vocab_fingerprint(vocab_file):
    """Returns the sha256 hex digest of the vocabulary file's bytes (recorded in data manifests)."""
    with open(vocab_file, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_vocab(vocab_file):
    """Reads a BERT-style vocab.txt (one token per line, id = line number) with clear errors."""
    require_vocab_file(vocab_file)
    with open(vocab_file, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(
            f"vocabulary file {vocab_file} is not UTF-8 ({error}); check vocab_file", arguments=("vocab_file",)
        ) from None
    # BERT strips each line; a trailing newline does not add a token.
    vocab = [line.strip() for line in text.splitlines()]
    while vocab and not vocab[-1]:
        vocab.pop()
    if not vocab:
        raise DataError(
            f"vocabulary file {vocab_file} is empty: pass vocab_file=<a non-empty vocab.txt>", arguments=("vocab_file",)
        )
    seen = {}
    for index, token in enumerate(vocab):
        if not token:
            raise DataError(
                f"vocabulary file {vocab_file} has an empty token on line {index + 1}; check vocab_file",
                arguments=("vocab_file",),
            )
        if token in seen:
            raise DataError(
                f"vocabulary file {vocab_file} repeats {token!r} on lines {seen[token] + 1} and {index + 1}; "
                "check vocab_file",
                arguments=("vocab_file",),
            )
        seen[token] = index
    return vocab


class BasicTokenizer:
    """BERT's basic tokenisation (no vocabulary): split into words, then normalise each word as BERT does.

    Also used to count words when learning a vocabulary, so that learning and tokenising agree on what a word is.
    """

    def __init__(self, do_lower_case=True, strip_accents=None):
        self.do_lower_case = bool(do_lower_case)
        self.strip_accents = self.do_lower_case if strip_accents is None else bool(strip_accents)

    def split_words(self, texts):
        """Ragged [batch, (words)] normalised words, with the raw words' byte offsets into `texts`."""
        words, starts, ends = self.split_raw_words(texts)
        return self.normalize(words)[0], starts, ends

    def split_raw_words(self, texts):
        """Splits on whitespace, punctuation and CJK characters without changing the text: (words, starts, ends)."""
        texts = tf.convert_to_tensor(texts, dtype=tf.string)
        # The regex splitter stops at NUL; BERT deletes NUL anyway, so swap it for another deleted 1-byte character.
        texts = tf.strings.regex_replace(texts, r"\x00", "\x01")
        return tf_text.regex_split_with_offsets(texts, _SPLIT_PATTERN, _KEEP_PATTERN)

    def normalize_strings(self, values):
        """Deletes control characters, lower-cases, strips accents (as configured); any-shape string tensor."""
        values = tf.strings.regex_replace(values, _DELETED_CHARACTERS, "")
        if self.do_lower_case:
            values = tf.strings.lower(values, encoding="utf-8")
        if self.strip_accents:
            values = tf_text.normalize_utf8(values, "NFD")
            values = tf.strings.regex_replace(values, r"\p{Mn}", "")
        return values

    def normalize(self, words):
        """Normalises ragged raw words; words over 100 characters become "[UNK]". Returns (words, too_long)."""
        values = self.normalize_strings(words.flat_values)
        too_long = tf.strings.length(values, unit="UTF8_CHAR") > MAX_CHARS_PER_WORD
        # "[UNK]" cannot come out of the word splitter ("[" is punctuation), so it only ever means "too long".
        values = tf.where(too_long, tf.constant(UNK_TOKEN), values)
        return words.with_flat_values(values), too_long

    def raw_piece_spans(self, raw_words, too_long, piece_starts, piece_ends):
        """Maps word-piece byte offsets in each normalised word back to byte offsets in the raw word.

        Normalisation works character by character, so normalising each raw character separately gives, per word,
        the cumulative normalised length at each raw character boundary; a normalised offset is then located with a
        binary search. `raw_words`, `too_long` are [num_words]; the piece offsets are ragged [num_words, (pieces)].
        """
        chars = tf.strings.unicode_split(raw_words, "UTF-8")
        raw_lengths = tf.cast(tf.strings.length(chars), tf.int64)
        normalized_lengths = tf.cast(tf.strings.length(self.normalize_strings(chars.flat_values)), tf.int64)
        raw_ends = tf.math.cumsum(raw_lengths, axis=-1)
        normalized_ends = tf.math.cumsum(raw_lengths.with_flat_values(normalized_lengths), axis=-1)
        normalized_ends_dense = normalized_ends.to_tensor(default_value=tf.int64.max)
        raw_ends_dense = tf.concat([tf.zeros_like(normalized_ends_dense[:, :1]), raw_ends.to_tensor()], axis=1)
        starts_dense = piece_starts.to_tensor(default_value=0)
        ends_dense = piece_ends.to_tensor(default_value=1)
        # The raw character holding normalised byte p is the first whose cumulative normalised end exceeds p.
        last_index = tf.shape(normalized_ends_dense, out_type=tf.int64)[1] - 1

        def raw_char_index(normalized_offsets):
            found = tf.searchsorted(normalized_ends_dense, normalized_offsets, side="right", out_type=tf.int64)
            return tf.minimum(found, last_index)

        raw_starts = tf.gather(raw_ends_dense, raw_char_index(starts_dense), batch_dims=1)
        raw_stops = tf.gather(raw_ends_dense, raw_char_index(ends_dense - 1) + 1, batch_dims=1)
        # A word replaced by [UNK] for its length is one piece spanning the whole raw word.
        too_long = too_long[:, tf.newaxis]
        word_lengths = tf.cast(tf.strings.length(raw_words), tf.int64)[:, tf.newaxis]
        raw_starts = tf.where(too_long, tf.zeros_like(raw_starts), raw_starts)
        raw_stops = tf.where(too_long, word_lengths + tf.zeros_like(raw_stops), raw_stops)
        mask = tf.sequence_mask(piece_starts.row_lengths(), tf.shape(starts_dense, out_type=tf.int64)[1])
        return tf.boolean_mask(raw_starts, mask), tf.boolean_mask(raw_stops, mask)


class ElectraTokenizer:
    """BERT basic + WordPiece tokenisation of strings into int32 ids, on tensorflow-text ops.

    Args:
        vocab_file: path to a BERT-style vocab.txt that contains [PAD] [UNK] [CLS] [SEP] [MASK].
        do_lower_case: lower-case the text as BERT uncased does.
        strip_accents: NFD-decompose and drop non-spacing marks; defaults to `do_lower_case`, as BERT.
    """

    def __init__(self, vocab_file, do_lower_case=True, strip_accents=None):
        self.vocab_file = vocab_file
        self.basic_tokenizer = BasicTokenizer(do_lower_case, strip_accents)
        self.do_lower_case = self.basic_tokenizer.do_lower_case
        self.strip_accents = self.basic_tokenizer.strip_accents
        self.vocab = load_vocab(vocab_file)
        self.vocab_size = len(self.vocab)
        self._token_to_id = {token: index for index, token in enumerate(self.vocab)}
        missing = [token for token in SPECIAL_TOKENS if token not in self._token_to_id]
        if missing:
            raise DataError(
                f"vocabulary file {vocab_file} lacks the special tokens {' '.join(missing)}; pass a BERT-style "
                "vocab_file or rebuild it with electra-build-vocab",
                arguments=("vocab_file",),
            )
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (
            self._token_to_id[token] for token in SPECIAL_TOKENS
        )

    # The tensorflow-text models take a fraction of a second to build; build them on first use only, so that
    # constructing a tokenizer to check a vocabulary or look up special ids stays cheap. init_scope keeps their
    # tensors eager even when the first use is inside a tf.function or a tf.data map.
    @functools.cached_property
    def _wordpiece(self):
        longest = max(len(token.encode("utf-8")) for token in self.vocab)
        with tf.init_scope():
            return self._build_wordpiece(longest)

    def _build_wordpiece(self, longest):
        return tf_text.FastWordpieceTokenizer(
            vocab=self.vocab,
            suffix_indicator=SUFFIX_INDICATOR,
            # BasicTokenizer.normalize applies the 100-character limit; this only has to admit such words.
            max_bytes_per_word=max(4 * MAX_CHARS_PER_WORD, longest),
            token_out_type=tf.int32,
            unknown_token=UNK_TOKEN,
            no_pretokenization=True,
            support_detokenization=True,
        )

    @functools.cached_property
    def _fast_ascii_tokenizer(self):
        with tf.init_scope():
            return self._build_fast_ascii_tokenizer()

    def _build_fast_ascii_tokenizer(self):
        return tf_text.FastBertTokenizer(
            vocab=self.vocab,
            suffix_indicator=SUFFIX_INDICATOR,
            max_bytes_per_word=MAX_CHARS_PER_WORD,  # Bytes are characters in ASCII.
            token_out_type=tf.int32,
            unknown_token=UNK_TOKEN,
            lower_case_nfd_strip_accents=self.do_lower_case,
        )

    def fingerprint(self):
        """sha256 of the vocabulary file's bytes."""
        return vocab_fingerprint(self.vocab_file)

    @property
    def settings(self):
        """The `TokenizerSettings` this tokenizer normalises text with."""
        return TokenizerSettings(self.do_lower_case, self.strip_accents)

    @classmethod
    def from_settings(cls, vocab_file, settings):
        """An `ElectraTokenizer` on `vocab_file` with `settings` (a `TokenizerSettings`)."""
        return cls(vocab_file, settings.do_lower_case, settings.strip_accents)

    def token_to_id(self, token):
        return self._token_to_id.get(token, self.unk_id)

    def id_to_token(self, token_id):
        return self.vocab[int(token_id)]

    def convert_ids_to_tokens(self, ids):
        return [self.vocab[int(i)] for i in ids]

    def tokenize(self, texts):
        """Token ids, a ragged int32 tensor [batch, (num_word_pieces)] for a 1-D batch of strings."""
        texts = tf.convert_to_tensor(texts, dtype=tf.string)
        is_ascii = tf.strings.regex_full_match(texts, _FAST_PATH_TEXT)
        ascii_index = tf.where(is_ascii)[:, 0]
        other_index = tf.where(tf.logical_not(is_ascii))[:, 0]
        ascii_ids = self._fast_ascii_tokenizer.tokenize(tf.gather(texts, ascii_index))
        other_ids = self.tokenize_exactly(tf.gather(texts, other_index))
        # Put the rows back in input order.
        order = tf.argsort(tf.concat([ascii_index, other_index], axis=0))
        return tf.gather(tf.concat([ascii_ids, other_ids], axis=0), order)

    def tokenize_exactly(self, texts):
        """`tokenize` without the ASCII fast path (same ids; kept public so tests can compare the two)."""
        words, _, _ = self.basic_tokenizer.split_words(texts)
        return self._wordpiece.tokenize(words).merge_dims(-2, -1)

    def tokenize_words(self, words):
        """Word-piece ids of given words, ragged int32 [batch, (words), (pieces)] for ragged strings
        [batch, (words)].

        Each word is tokenised as BERT tokenises text (it may split further at punctuation, "U.S." -> u . s .); the
        pieces of its parts are concatenated. A word that yields no piece (only deleted characters) becomes [UNK],
        so that every word keeps a first piece to be labelled.
        """
        words = tf.convert_to_tensor(words) if not isinstance(words, tf.RaggedTensor) else words
        flat_words = words.flat_values
        parts, _, _ = self.basic_tokenizer.split_words(flat_words)  # [num_words, (parts)]
        pieces = self._wordpiece.tokenize(parts).merge_dims(-2, -1)  # [num_words, (pieces)]
        # Row-wise concatenation with one [UNK] for each empty row (none for the others).
        empty = tf.cast(tf.equal(pieces.row_lengths(), 0), tf.int64)
        unknown = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(empty)], tf.constant(self.unk_id, tf.int32)), empty
        )
        return words.with_flat_values(tf.concat([pieces, unknown], axis=1))

    def tokenize_with_offsets(self, texts):
        """(ids, start_offsets, end_offsets): ragged [batch, (num_word_pieces)], byte offsets into each input string.

        A piece's span covers the raw characters whose normalised form it consumed (so "Héllo" -> "hello" spans
        all of "Héllo"); deleted characters at a piece's edges are left out of it.
        """
        basic = self.basic_tokenizer
        raw_words, word_starts, _ = basic.split_raw_words(texts)
        words, too_long = basic.normalize(raw_words)
        ids, piece_starts, piece_ends = self._wordpiece.tokenize_with_offsets(words)
        starts, ends = basic.raw_piece_spans(raw_words.flat_values, too_long, piece_starts.values, piece_ends.values)
        word_starts = tf.expand_dims(word_starts, -1)
        starts = word_starts + piece_starts.with_flat_values(starts)
        ends = word_starts + piece_ends.with_flat_values(ends)
        return ids.merge_dims(-2, -1), starts.merge_dims(-2, -1), ends.merge_dims(-2, -1)

    def detokenize(self, ids):
        """Joins word pieces back into space-separated words (lossy, as every BERT detokenizer)."""
        return self._wordpiece.detokenize(ids)
