import hashlib
import json
import unicodedata

import pytest
import tensorflow as tf

from electra_tf.errors import DataError
from electra_tf.tokenizer import ElectraTokenizer, vocab_fingerprint

# ---- A straightforward transcription of BERT's tokenization.py (BasicTokenizer + WordpieceTokenizer). ----


def _is_whitespace(char):
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def _is_control(char):
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char):
    cp = ord(char)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(char).startswith("P")


def _is_chinese_char(cp):
    return (
        (0x4E00 <= cp <= 0x9FFF)
        or (0x3400 <= cp <= 0x4DBF)
        or (0x20000 <= cp <= 0x2A6DF)
        or (0x2A700 <= cp <= 0x2B73F)
        or (0x2B740 <= cp <= 0x2B81F)
        or (0x2B820 <= cp <= 0x2CEAF)
        or (0xF900 <= cp <= 0xFAFF)
        or (0x2F800 <= cp <= 0x2FA1F)
    )


def _clean_text(text):
    output = []
    for char in text:
        cp = ord(char)
        if cp == 0 or cp == 0xFFFD or _is_control(char):
            continue
        output.append(" " if _is_whitespace(char) else char)
    return "".join(output)


def _tokenize_chinese_chars(text):
    return "".join(f" {char} " if _is_chinese_char(ord(char)) else char for char in text)


def _run_strip_accents(text):
    return "".join(char for char in unicodedata.normalize("NFD", text) if unicodedata.category(char) != "Mn")


def _run_split_on_punc(text):
    output, start_new_word = [], True
    for char in text:
        if _is_punctuation(char):
            output.append([char])
            start_new_word = True
        else:
            if start_new_word:
                output.append([])
            start_new_word = False
            output[-1].append(char)
    return ["".join(x) for x in output]


def reference_basic_tokenize(text, do_lower_case=True):
    text = _tokenize_chinese_chars(_clean_text(text))
    split_tokens = []
    for token in text.strip().split():
        if do_lower_case:
            token = _run_strip_accents(token.lower())
        split_tokens.extend(_run_split_on_punc(token))
    return " ".join(split_tokens).strip().split()


def reference_wordpiece(token, vocab, max_input_chars_per_word=100):
    if len(token) > max_input_chars_per_word:
        return ["[UNK]"]
    start, sub_tokens = 0, []
    while start < len(token):
        end, cur_substr = len(token), None
        while start < end:
            substr = token[start:end]
            if start > 0:
                substr = "##" + substr
            if substr in vocab:
                cur_substr = substr
                break
            end -= 1
        if cur_substr is None:
            return ["[UNK]"]
        sub_tokens.append(cur_substr)
        start = end
    return sub_tokens


def reference_ids(text, vocab):
    return [vocab[piece] for word in reference_basic_tokenize(text) for piece in reference_wordpiece(word, vocab)]


# ---- Fixtures ----


@pytest.fixture(scope="module")
def bert_vocab_file(shared_data):
    return str(shared_data / "vocab" / "bert-uncased-vocab.txt")


@pytest.fixture(scope="module")
def bert_tokenizer(bert_vocab_file):
    return ElectraTokenizer(bert_vocab_file)


@pytest.fixture(scope="module")
def bert_vocab(bert_tokenizer):
    return {token: index for index, token in enumerate(bert_tokenizer.vocab)}


@pytest.fixture(scope="module")
def squad_contexts(shared_data):
    with open(shared_data / "squad" / "dev-v1.1.json", encoding="utf-8") as f:
        data = json.load(f)
    return [paragraph["context"] for article in data["data"] for paragraph in article["paragraphs"]]


def _small_vocab(tmp_path, extra=()):
    tokens = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "hello",
        "world",
        "##s",
        "Hello",
        "cafe",
        "café",
        "caf",
        "##é",
        ",",
        "!",
        *extra,
    ]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return path


# ---- Tests ----


def test_special_ids_of_bert_uncased_vocab(bert_tokenizer):
    assert bert_tokenizer.vocab_size == 30522
    assert (
        bert_tokenizer.pad_id,
        bert_tokenizer.unk_id,
        bert_tokenizer.cls_id,
        bert_tokenizer.sep_id,
        bert_tokenizer.mask_id,
    ) == (0, 100, 101, 102, 103)


def test_squad_contexts_match_reference_bert_tokenization(bert_tokenizer, bert_vocab, squad_contexts):
    # All 2067 SQuAD v1.1 dev contexts, no exceptions: ids from tensorflow-text equal BERT's algorithm in Python.
    got = bert_tokenizer.tokenize(squad_contexts).to_list()
    mismatches = [i for i, text in enumerate(squad_contexts) if got[i] != reference_ids(text, bert_vocab)]
    assert mismatches == []
    # The contexts exercise the non-ASCII path too (accents, dashes, Greek, CJK, fractions).
    assert sum(not text.isascii() for text in squad_contexts) > 500


HARD_CASES = [
    "Héllo, Wörld! naïve CAFÉ déjà-vu",  # accents and punctuation
    "北京大学 and 東京 mixed with 한국어 and ひらがな",  # CJK ideographs are words; kana/hangul are not
    "zero\u200bwidth nul\x00byte replacement\ufffdchar soft\u00adhyphen bell\x07 tab\tcr\r\nlf",  # control chars
    "no\u00a0break\u3000ideographic\u2009thin space",  # Unicode whitespace
    "x" * 101 + " " + "y" * 100 + " " + "é" * 60,  # >100 chars -> [UNK]; 60 accented chars = 120 bytes is fine
    "ΟΔΟΣ ὁδός Straße ½ ﬁne ＡＢＣ",  # final sigma, ß, fraction, ligature, full-width: no NFKC folding
    "a≠b, a\u1fefb, İstanbul, (\u0301)",  # characters that become punctuation/vanish after NFD + accent stripping
    "",
    "   \t  ",
    "unaffable [MASK] [UNK] ##s",  # special-token text is split like any text
]


@pytest.mark.parametrize("text", HARD_CASES)
def test_hard_cases_match_reference(bert_tokenizer, bert_vocab, text):
    assert bert_tokenizer.tokenize([text]).to_list()[0] == reference_ids(text, bert_vocab)


def test_fast_ascii_path_agrees_with_exact_path(bert_tokenizer, squad_contexts):
    texts = squad_contexts[:300] + HARD_CASES + ["Plain ASCII, with punctuation: (1,234.5) & co.; 'quotes'!"]
    assert bert_tokenizer.tokenize(texts).to_list() == bert_tokenizer.tokenize_exactly(texts).to_list()


def test_offsets_cover_the_source_of_each_piece(bert_tokenizer, bert_vocab, squad_contexts):
    texts = ["Héllo, wörld! The unaffable café\u200bowner.", *squad_contexts[:50]]
    ids, starts, ends = bert_tokenizer.tokenize_with_offsets(texts)
    assert ids.to_list() == bert_tokenizer.tokenize(texts).to_list()
    for text, row_ids, row_starts, row_ends in zip(texts, ids.to_list(), starts.to_list(), ends.to_list()):
        raw = text.encode("utf-8")
        assert all(0 <= s < e <= len(raw) for s, e in zip(row_starts, row_ends))
        assert row_starts == sorted(row_starts)
        for token_id, start, end in zip(row_ids, row_starts, row_ends):
            piece = bert_tokenizer.id_to_token(token_id)
            if piece == "[UNK]":
                continue
            source = raw[start:end].decode("utf-8")
            # The source span normalises (as BERT does) to exactly the piece's text.
            assert "".join(reference_basic_tokenize(source)) == piece.removeprefix("##")
    first = [texts[0].encode()[s:e].decode() for s, e in zip(starts.to_list()[0], ends.to_list()[0])]
    assert first[:4] == ["Héllo", ",", "wörld", "!"]
    # BERT deletes the zero-width space, joining the words; it belongs to neither neighbouring piece's span.
    assert first[-4:] == ["café", "own", "er", "."]


def test_tokenize_inside_tf_data_map(tmp_path):
    tokenizer = ElectraTokenizer(str(_small_vocab(tmp_path)))
    dataset = tf.data.Dataset.from_tensor_slices(["hello worlds", "Hello, café!"]).batch(2)
    batch = next(iter(dataset.map(lambda texts: tokenizer.tokenize(texts).to_tensor())))
    names = [[tokenizer.id_to_token(i) for i in row if i] for row in batch.numpy()]
    assert names == [["hello", "world", "##s"], ["hello", ",", "cafe", "!"]]
    # The lazily built models were created eagerly, so eager calls still work after the graph call.
    assert tokenizer.tokenize(["hello"]).to_list() == [[5]]


def test_case_and_accent_options(tmp_path):
    vocab_file = str(_small_vocab(tmp_path))
    cased = ElectraTokenizer(vocab_file, do_lower_case=False)
    assert cased.strip_accents is False
    assert cased.convert_ids_to_tokens(cased.tokenize(["Hello café"]).to_list()[0]) == ["Hello", "café"]
    lower_keep_accents = ElectraTokenizer(vocab_file, do_lower_case=True, strip_accents=False)
    assert lower_keep_accents.convert_ids_to_tokens(lower_keep_accents.tokenize(["CAFÉ"]).to_list()[0]) == ["café"]
    lower = ElectraTokenizer(vocab_file)
    assert lower.convert_ids_to_tokens(lower.tokenize(["CAFÉ"]).to_list()[0]) == ["cafe"]


def test_detokenize_and_lookups(tmp_path):
    tokenizer = ElectraTokenizer(str(_small_vocab(tmp_path)))
    ids = tokenizer.tokenize(["hello worlds"])
    assert tokenizer.detokenize(ids).numpy().tolist() == [b"hello worlds"]
    assert tokenizer.token_to_id("world") == 6
    assert tokenizer.token_to_id("absent") == tokenizer.unk_id


def test_fingerprint_is_sha256_of_the_file(tmp_path):
    path = _small_vocab(tmp_path)
    assert ElectraTokenizer(str(path)).fingerprint() == hashlib.sha256(path.read_bytes()).hexdigest()
    before = vocab_fingerprint(path)
    path.write_text(path.read_text() + "extra\n")
    assert vocab_fingerprint(path) != before


def test_missing_vocab_names_path_and_flag(tmp_path):
    missing = tmp_path / "nope" / "vocab.txt"
    with pytest.raises(DataError, match=rf"{missing}.*pass vocab_file="):
        ElectraTokenizer(str(missing))


def test_empty_vocab_names_path_and_flag(tmp_path):
    empty = tmp_path / "vocab.txt"
    empty.write_text("\n\n")
    with pytest.raises(DataError, match=rf"{empty} is empty.*pass vocab_file="):
        ElectraTokenizer(str(empty))


def test_vocab_without_special_tokens_is_rejected(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\nhello\n")
    with pytest.raises(DataError, match=r"lacks the special tokens \[CLS\] \[SEP\] \[MASK\]"):
        ElectraTokenizer(str(path))
