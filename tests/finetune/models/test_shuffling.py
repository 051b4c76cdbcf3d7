"""`fit` on data in memory shuffles every epoch, reproducibly under `keras.utils.set_random_seed`, in the text
classifier and the tagger alike, and without Keras' warning that `shuffle=True` is ignored."""

import warnings

import keras
import pytest

from electra_tf.config import ElectraConfig
from electra_tf.models import build_discriminator
from finetune.models import (
    ElectraTextClassifier,
    ElectraTextClassifierPreprocessor,
    ElectraTokenClassifier,
    ElectraTokenClassifierPreprocessor,
)

# One layer: the order `fit` feeds the examples in does not depend on the depth, and each eager step costs less.
CONFIG = ElectraConfig.from_preset("tiny", num_layers=1).with_vocab(
    200, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4
)
FIRST_WORDS = list(range(10, 20))  # example k starts with word w<k>: token id 5 + k in the synthetic vocabulary
EPOCHS = 3


def _classifier(vocab):
    model = ElectraTextClassifier(
        build_discriminator(CONFIG).backbone,
        labels=["no", "yes"],
        preprocessor=ElectraTextClassifierPreprocessor(vocab, max_seq_length=8),
    )
    texts = [f"w{k} w1 w2" for k in FIRST_WORDS]
    return model, texts, ["yes" if k % 2 else "no" for k in FIRST_WORDS]


def _tagger(vocab):
    model = ElectraTokenClassifier(
        build_discriminator(CONFIG).backbone,
        tags=["A", "B"],
        preprocessor=ElectraTokenClassifierPreprocessor(vocab, max_seq_length=8),
    )
    words = [[f"w{k}", "w1"] for k in FIRST_WORDS]
    return model, words, [["A", "B"] for _ in FIRST_WORDS]


def _batch_orders(model, x, y, seed, **fit_kwargs):
    """Per epoch, the examples in the order `fit` fed them to its steps (by their first word)."""
    model.compile(run_eagerly=True)
    seen = []

    def recording_train_step(data):
        seen.extend(int(token) - 5 for token in data[0]["token_ids"][:, 1].numpy())
        if len(seen) > len(data[0]["token_ids"]):
            return {"loss": keras.ops.zeros(())}
        # The order is fit's, whatever the steps do: they leave the weights alone (after each compile() an update
        # would trace the new optimizer's compiled update again), the first builds the metrics fit reports.
        return model.test_step(data)

    model.train_step = recording_train_step
    keras.utils.set_random_seed(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(x, y, batch_size=4, epochs=EPOCHS, verbose=0, **fit_kwargs)
    del model.train_step  # the class's again, for the next call to wrap
    assert not [w for w in caught if "shuffle" in str(w.message)], [str(w.message) for w in caught]
    count = len(seen) // EPOCHS
    return [seen[epoch * count : (epoch + 1) * count] for epoch in range(EPOCHS)]


# The tagger's case is a benchmark (`pytest -m benchmark`): both task models take `fit` from `LabelledTask`, and each
# case takes over ten seconds.
@pytest.mark.parametrize("build", [_classifier, pytest.param(_tagger, marks=pytest.mark.benchmark)])
def test_fit_on_lists_shuffles_every_epoch_reproducibly(pretraining_data, build):
    model, x, y = build(pretraining_data[1])
    orders = _batch_orders(model, x, y, seed=1)
    assert all(sorted(order) == FIRST_WORDS for order in orders)
    assert orders[0] != orders[1] != orders[2] and orders[0] != FIRST_WORDS
    assert _batch_orders(model, x, y, seed=1) == orders
    assert _batch_orders(model, x, y, seed=2) != orders
    assert _batch_orders(model, x, y, seed=1, shuffle=False) == [FIRST_WORDS] * EPOCHS


def test_validation_split_holds_out_the_last_examples_before_shuffling(pretraining_data):
    model, x, y = _classifier(pretraining_data[1])
    orders = _batch_orders(model, x, y, seed=1, validation_split=0.2)
    assert all(sorted(order) == FIRST_WORDS[:8] for order in orders) and orders[0] != orders[1]
    assert len(model.history.history["val_loss"]) == EPOCHS
