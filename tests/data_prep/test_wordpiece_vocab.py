import pytest

from data_prep import wordpiece_vocab
from electra_tf.errors import DataError
from electra_tf.tokenizer import ElectraTokenizer
from tests.data_prep.helpers import write_corpus


def test_counts_normalised_words(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("Café, CAFÉ!\n\nnaïve cafe\n", encoding="utf-8")
    assert wordpiece_vocab.count_words(str(path)) == {"cafe": 3, ",": 1, "!": 1, "naive": 1}
    assert wordpiece_vocab.count_words(str(path), do_lower_case=False)["CAFÉ"] == 1


def test_learned_vocab_has_reserved_tokens_first_and_covers_the_corpus(tmp_path):
    corpus = write_corpus(tmp_path / "c.txt", 200, seed=4)
    counts = wordpiece_vocab.count_words(corpus)
    vocab = wordpiece_vocab.learn_vocab(counts, 150)
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert len(vocab) <= 150 and len(set(vocab)) == len(vocab)
    assert "##s" in vocab and "the" in vocab
    output = tmp_path / "vocab.txt"
    wordpiece_vocab.write_vocab(vocab, str(output))
    tokenizer = ElectraTokenizer(str(output))
    assert tokenizer.vocab == vocab
    ids = tokenizer.tokenize([open(corpus).read()]).to_list()[0]
    assert tokenizer.unk_id not in ids  # every character of the corpus has a piece
    assert len(ids) < 0.6 * sum(len(word) * n for word, n in counts.items())  # pieces are longer than characters


def test_learning_from_nothing_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="no words to learn a vocabulary from"):
        wordpiece_vocab.learn_vocab({}, 100)
    with pytest.raises(DataError, match="^vocab_size=5 leaves no room"):
        wordpiece_vocab.learn_vocab({"a": 1}, 5)


def test_existing_vocab_needs_the_reserved_tokens(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    with pytest.raises(DataError, match=r"lacks \[MASK\]"):
        wordpiece_vocab.check_existing_vocab(str(path))
