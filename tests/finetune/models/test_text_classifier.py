"""The keras-hub-shaped Keras API: `from_preset`, `compile()` without arguments, `fit`/`predict` on Python lists of
raw strings learn a keyword task; `.keras` and `export()` round trips predict the same."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from finetune.models import ElectraTextClassifier
from finetune.optimization import create_finetuning_optimizer
from tests.finetune.synthetic_glue import keyword_examples

MAX_SEQ_LENGTH = 16
BATCH_SIZE = 16
EPOCHS = 3


def _dataset(examples, shuffle_seed=None):
    texts, labels = zip(*examples)
    dataset = tf.data.Dataset.from_tensor_slices((list(texts), np.array(labels, dtype="int32")))
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(examples), seed=shuffle_seed)
    return dataset.batch(BATCH_SIZE)


@pytest.fixture(scope="module")
def fine_tuned(pretrained_tiny):
    """(model, dev examples) after plain-Keras fine-tuning on Python lists of raw strings, compiled with defaults."""
    keras.utils.set_random_seed(0)
    train, dev = keyword_examples(480, seed=10), keyword_examples(200, seed=11)
    model = ElectraTextClassifier.from_preset(pretrained_tiny, num_classes=2, max_seq_length=MAX_SEQ_LENGTH)
    model.compile()  # the reference's fine-tuning optimizer for the backbone's size
    texts, labels = zip(*train)
    model.fit(list(texts), list(labels), batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=0)
    return model, dev


def test_keras_fit_on_raw_strings_reaches_high_dev_accuracy(fine_tuned):
    """Keras API: the tiny pre-trained model learns the keyword task from raw text with `fit`."""
    model, dev = fine_tuned
    logs = model.evaluate(_dataset(dev), return_dict=True, verbose=0)
    print(f"Keras API dev accuracy: {logs['accuracy']:.3f}")
    assert logs["accuracy"] >= 0.9
    texts = [text for text, _ in dev]  # a Python list, as keras-hub tasks take it
    predicted = np.argmax(model.predict(texts, batch_size=64, verbose=0), axis=-1)
    assert np.mean(predicted == np.array([label for _, label in dev])) == pytest.approx(logs["accuracy"])
    # NumPy arrays of strings and lists of labels are accepted as well, with the same results.
    labels = [label for _, label in dev]
    np.testing.assert_allclose(
        model.predict(np.array(texts), batch_size=64, verbose=0),
        model.predict(texts, batch_size=64, verbose=0),
        rtol=1e-6,
        atol=1e-6,
    )
    from_arrays = model.evaluate(np.array(texts), np.array(labels), batch_size=64, return_dict=True, verbose=0)
    assert from_arrays["accuracy"] == pytest.approx(logs["accuracy"])


def test_saved_and_reloaded_model_predicts_the_same(fine_tuned, tmp_path):
    """The `.keras` round trip (vocabulary, weights, optimizer) gives identical outputs on raw text."""
    model, dev = fine_tuned
    texts = tf.constant([text for text, _ in dev])
    expected = model.predict(texts, batch_size=64, verbose=0)
    path = str(tmp_path / "fine_tuned.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    np.testing.assert_array_equal(restored.predict(texts, batch_size=64, verbose=0), expected)
    np.testing.assert_array_equal(restored.preprocessor.text_tokenizer.vocab, model.preprocessor.text_tokenizer.vocab)
    # The optimizer comes back with its state, so training can continue where it stopped.
    assert int(restored.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy()) > 0
    assert restored.optimizer.lr_multipliers == model.optimizer.lr_multipliers


def test_exported_saved_model_serves_raw_text(fine_tuned, tmp_path):
    model, dev = fine_tuned
    texts = tf.constant([text for text, _ in dev[:8]])
    path = str(tmp_path / "exported")
    model.export(path)
    reloaded = tf.saved_model.load(path)  # keep a reference: its variables die with it
    served = reloaded.signatures["serve_text"](texts=texts)
    np.testing.assert_allclose(served["logits"].numpy(), model.predict(texts, verbose=0), rtol=1e-5, atol=1e-5)
    by_ids = reloaded.signatures["serving_default"](
        input_ids=served["input_ids"], input_mask=served["input_mask"], segment_ids=served["segment_ids"]
    )
    np.testing.assert_allclose(by_ids["logits"].numpy(), served["logits"].numpy(), rtol=1e-6, atol=1e-6)


def test_sentence_pairs_train_through_fit(pretrained_tiny):
    """Pairs arrive as a (texts_a, texts_b) tuple; label: does B repeat a word of A."""
    rng = np.random.default_rng(3)
    texts_a, texts_b, labels = [], [], []
    for index in range(64):
        words = [f"w{i}" for i in rng.choice(195, size=6, replace=False)]
        shared = index % 2
        other = [f"w{i}" for i in rng.choice(195, size=4) if f"w{i}" not in words][:3]
        texts_a.append(" ".join(words[:3]))
        texts_b.append(" ".join(([words[0]] if shared else []) + other))
        labels.append(shared)
    dataset = tf.data.Dataset.from_tensor_slices(((texts_a, texts_b), labels)).batch(16)
    model = ElectraTextClassifier.from_preset(pretrained_tiny, num_classes=2, max_seq_length=MAX_SEQ_LENGTH)
    model.compile(optimizer=create_finetuning_optimizer(model.num_layers, 1e-3, 4))
    history = model.fit(dataset, epochs=1, shuffle=False, verbose=0)
    assert np.isfinite(history.history["loss"][-1])
    packed = model.preprocessor(x=(tf.constant(texts_a[:1]), tf.constant(texts_b[:1])))
    assert 1 in packed["segment_ids"].numpy()


@pytest.mark.parametrize("regression", [False, True])
def test_training_computes_the_last_layer_for_cls_alone_with_the_graphs_outputs_and_gradients(regression):
    """In training the backbone's last layer computes [CLS] alone (`call`); with dropout off the outputs and every
    gradient are those of the functional graph, whose layers compute every position."""
    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator

    keras.utils.set_random_seed(0)
    config = ElectraConfig.from_preset("tiny", hidden_dropout=0.0, attention_dropout=0.0)
    model = ElectraTextClassifier(build_discriminator(config).backbone, num_classes=3, regression=regression, dropout=0)
    rng = np.random.default_rng(0)
    mask = np.ones((4, 9), "int32")
    mask[1, 5:] = 0
    inputs = {
        "token_ids": rng.integers(1, 120, (4, 9)).astype("int32") * mask,
        "segment_ids": np.zeros((4, 9), "int32"),
        "padding_mask": mask,
    }

    def outputs_and_gradients(training):
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=training)
            loss = tf.reduce_sum(tf.sin(outputs))
        return outputs, tape.gradient(loss, model.trainable_variables)

    trained, trained_gradients = outputs_and_gradients(True)
    graph, graph_gradients = outputs_and_gradients(False)
    assert trained.shape == graph.shape == ((4,) if regression else (4, 3))
    np.testing.assert_allclose(trained, graph, atol=1e-5)
    for ours, reference in zip(trained_gradients, graph_gradients, strict=True):
        np.testing.assert_allclose(tf.convert_to_tensor(ours), tf.convert_to_tensor(reference), rtol=1e-5, atol=1e-5)
