"""`ElectraTokenClassifier` and its preprocessor: word packing against the tokenizer, Keras `fit` on Python lists of
words and tags, raw text with offsets, `.keras` round trip."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.tokenizer import ElectraTokenizer
from finetune.models import ElectraTokenClassifier, ElectraTokenClassifierPreprocessor

MAX_SEQ_LENGTH = 24
TAGS = ["LOW", "MID", "HIGH"]


def _tag(word):
    """A word-identity tagging task on the synthetic vocabulary (w0 ... w194)."""
    number = int(word[1:])
    return TAGS[0] if number < 65 else TAGS[1] if number < 130 else TAGS[2]


def _sentences(count, seed):
    rng = np.random.default_rng(seed)
    sentences = [[f"w{i}" for i in rng.integers(0, 195, size=rng.integers(3, 12))] for _ in range(count)]
    return sentences, [[_tag(word) for word in sentence] for sentence in sentences]


def test_words_are_packed_as_the_tokenizer_splits_them(pretraining_data):
    vocab = pretraining_data[1]
    preprocessor = ElectraTokenClassifierPreprocessor(vocab, max_seq_length=8)
    tokenizer = ElectraTokenizer(vocab)
    words = [["w1", "w2,w3", "zzz"], ["w4"] * 10]
    features, tags, weights = preprocessor(words, tf.ragged.constant([[0, 1, 2], [1] * 10]))
    expected = [tokenizer.cls_id] + [piece for word in words[0] for piece in tokenizer.tokenize([word])[0].numpy()]
    expected += [tokenizer.sep_id]
    # "w2,w3" is three pieces (w2 , w3), "zzz" one [UNK]: word starts 1, 2, 5.
    assert features["token_ids"].numpy()[0].tolist() == expected + [0] * (8 - len(expected))
    assert features["word_positions"].numpy()[0].tolist() == [1, 2, 5, 0, 0, 0, 0, 0]
    assert features["padding_mask"].numpy()[0].tolist() == [1] * 7 + [0]
    # The second sentence has 10 one-piece words: 6 fit between [CLS] and [SEP]; the rest weigh nothing.
    assert features["word_positions"].numpy()[1].tolist() == [1, 2, 3, 4, 5, 6, 0, 0]
    assert weights.numpy().tolist() == [[1, 1, 1, 0, 0, 0, 0, 0], [1] * 6 + [0, 0]]
    assert tags.numpy()[0].tolist()[:3] == [0, 1, 2]


def test_a_preprocessor_without_vocabulary_or_room_says_so(pretraining_data):
    from electra_tf.errors import ConfigError
    from finetune.models import ElectraTextClassifierPreprocessor

    with pytest.raises(ConfigError, match="max_seq_length must be at least 3 for ElectraTokenClassifierPreprocessor"):
        ElectraTokenClassifierPreprocessor(pretraining_data[1], max_seq_length=2)
    with pytest.raises(ConfigError, match="max_seq_length must be at least 5 for ElectraTextClassifierPreprocessor"):
        ElectraTextClassifierPreprocessor(pretraining_data[1], max_seq_length=4)
    with pytest.raises(ConfigError, match="ElectraTokenClassifierPreprocessor has no vocabulary: pass vocab_file="):
        ElectraTokenClassifierPreprocessor(None)(["some text"])


def test_raw_text_is_split_into_words_with_their_offsets(pretraining_data):
    preprocessor = ElectraTokenClassifierPreprocessor(pretraining_data[1], max_seq_length=16)
    text = "w5 w6, w7"
    words, starts, ends = preprocessor.split_text(tf.constant([text]))
    assert [word.decode() for word in words.to_list()[0]] == ["w5", "w6", ",", "w7"]
    assert [text[s:e] for s, e in zip(starts.to_list()[0], ends.to_list()[0])] == ["w5", "w6", ",", "w7"]


@pytest.fixture(scope="module")
def fine_tuned(pretrained_tiny):
    keras.utils.set_random_seed(0)
    train_words, train_tags = _sentences(400, seed=1)
    tagger = ElectraTokenClassifier.from_preset(pretrained_tiny, tags=TAGS, max_seq_length=MAX_SEQ_LENGTH)
    tagger.compile()
    tagger.fit(train_words, train_tags, batch_size=16, epochs=3, verbose=0)
    return tagger


def test_fit_on_python_lists_of_words_and_tags_learns_the_task(fine_tuned):
    words, tags = _sentences(100, seed=2)
    logits = fine_tuned.predict(words, verbose=0)
    assert logits.shape == (100, MAX_SEQ_LENGTH, len(TAGS)) and logits.dtype == np.float32
    predicted = [[TAGS[i] for i in row[: len(sentence)]] for row, sentence in zip(np.argmax(logits, -1), words)]
    accuracy = np.mean([p == g for ps, gs in zip(predicted, tags) for p, g in zip(ps, gs)])
    assert accuracy > 0.9, accuracy
    loss, word_accuracy = fine_tuned.evaluate(words, tags, verbose=0)
    assert word_accuracy == pytest.approx(accuracy, abs=1e-6)


def test_tag_returns_words_tags_and_offsets_of_raw_text(fine_tuned):
    (tagged,) = fine_tuned.tag(["w1 w100, w190"])
    assert [(word, start, end) for word, _, start, end in tagged] == [
        ("w1", 0, 2),
        ("w100", 3, 7),
        (",", 7, 8),
        ("w190", 9, 13),
    ]
    assert [tag for word, tag, _, _ in tagged if word != ","] == ["LOW", "MID", "HIGH"]
    (given,) = fine_tuned.tag([["w1", "w100"]])
    assert [tag for _, tag, _, _ in given] == ["LOW", "MID"]


def test_saved_tagger_reloads_and_predicts_the_same(fine_tuned, tmp_path):
    words, _ = _sentences(8, seed=3)
    fine_tuned.save(tmp_path / "tagger.keras")
    loaded = keras.saving.load_model(tmp_path / "tagger.keras")
    assert loaded.tags == TAGS
    np.testing.assert_allclose(loaded.predict(words, verbose=0), fine_tuned.predict(words, verbose=0), atol=1e-5)


def test_unknown_tags_and_too_few_tags_are_refused(fine_tuned):
    from electra_tf.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^y holds labels \['NOPE'\] that are not in tags=\['LOW', 'MID', 'HIGH'\]$"):
        fine_tuned.fit([["w1"]], [["NOPE"]], verbose=0)
    with pytest.raises(ConfigError, match=r"^tags must name two or more distinct labels in id order, got \['O'\]$"):
        ElectraTokenClassifier(fine_tuned.backbone, tags=["O"])


def test_exported_tagger_serves_raw_text_with_word_tags_and_offsets(fine_tuned, tmp_path):
    from tests.serving_session import run_like_tf_serving

    fine_tuned.export(str(tmp_path / "export"))
    texts = ["w1 w100, w190", "w7"]
    outputs = run_like_tf_serving(str(tmp_path / "export"), "serve_text", {"texts": texts})
    expected = fine_tuned.tag(texts)
    assert outputs["num_words"] == [4, 1]
    for row, tagged in enumerate(expected):
        assert outputs["words"][row][: len(tagged)] == [word for word, _, _, _ in tagged]
        assert outputs["tags"][row][: len(tagged)] == [tag for _, tag, _, _ in tagged]
        assert outputs["word_starts"][row][: len(tagged)] == [start for _, _, start, _ in tagged]
        assert outputs["word_ends"][row][: len(tagged)] == [end for _, _, _, end in tagged]
    assert outputs["tags"][1][1:] == ["", "", ""] and outputs["tag_ids"][1][1:] == [-1, -1, -1]
