"""Gradient accumulation: N micro-batches give the update of the whole batch (weights, optimizer state and logs),
on one device and under MirroredStrategy, in pre-training (clipping active, AdamW and LAMB) and fine-tuning, one after
the other or (fine-tuning) at once; the MirroredStrategy runs and LAMB's are benchmarks."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.training.choices import check_gradient_accumulation
from electra_tf.training.pretrainer import ElectraPretrainer
from tests.accumulation_run import ACCUMULATION, CLIP_NORM, tiny_config, train_classifier, train_pretrainer
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def mirrored_runs(tmp_path_factory):
    """The runs of `tests.accumulation_run` under MirroredStrategy on two logical CPUs, in a process of their own."""
    output = tmp_path_factory.mktemp("accumulation") / "mirrored.npz"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-m", "tests.accumulation_run", str(output)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(np.load(output))


@pytest.fixture(scope="module")
def whole_batch_runs():
    """case -> (weights, logs) without accumulation on one device, what every accumulated run of the case must end
    with; each case runs once, when a test first asks for it."""
    runs = {}

    def run(case):
        if case not in runs:
            runs[case] = train_classifier(1) if case == "classifier" else train_pretrainer(case.split("_", 1)[1], 1)
        return runs[case]

    return run


def _assert_same_run(actual, expected):
    (actual_weights, actual_logs), (expected_weights, expected_logs) = actual, expected
    assert len(actual_weights) == len(expected_weights)
    for index, (value, reference) in enumerate(zip(actual_weights, expected_weights)):
        np.testing.assert_allclose(value, reference, rtol=1e-5, atol=1e-6, err_msg=f"trainable variable {index}")
    assert actual_logs.keys() == expected_logs.keys()
    for name, value in expected_logs.items():
        np.testing.assert_allclose(actual_logs[name], value, rtol=1e-5, err_msg=name)


# LAMB's case is a benchmark (`pytest -m benchmark`): accumulation hands every optimizer the same summed gradient, and
# its two runs take twenty seconds.
@pytest.mark.parametrize("optimizer", ["keras_adamw", pytest.param("lamb", marks=pytest.mark.benchmark)])
def test_accumulated_pretraining_update_equals_the_whole_batch(whole_batch_runs, optimizer):
    """Four micro-batches of 2 per step, two steps: the weights, the loss (the global mean, not a mean of the
    micro-batches' means) and every metric are those of batches of 8; clipping acted on every step."""
    expected = whole_batch_runs(f"pretraining_{optimizer}")
    assert expected[1]["gradient_norm"] > CLIP_NORM
    _assert_same_run(train_pretrainer(optimizer, ACCUMULATION), expected)


def test_accumulated_classifier_update_equals_the_whole_batch(whole_batch_runs):
    """The fine-tuning classifier with Keras' compiled loss, batches of 8, 8 and 5 (micro-batches 2, 2, 1)."""
    _assert_same_run(train_classifier(ACCUMULATION), whole_batch_runs("classifier"))


# 3 micro-batches is a benchmark (`pytest -m benchmark`): 8 has the micro-batches filled up with copies that 3 has, and
# whole ones besides; the micro-batches of uneven size are the accumulation test's (2, 2 and 1).
@pytest.mark.parametrize("concurrent_micro_batches", [pytest.param(3, marks=pytest.mark.benchmark), 8])
def test_concurrent_micro_batches_train_and_evaluate_as_the_whole_batch(whole_batch_runs, concurrent_micro_batches):
    """Batches of 8, 8 and 5 as 3 micro-batches at once (3, 3 and 2 rows; the last batch's third micro-batch filled up
    with a copy of its last row), or as 8 (the last batch's three last micro-batches only copies): the weights, the
    training logs and the validation's loss and accuracy are the whole batches'."""
    _assert_same_run(
        train_classifier(1, concurrent_micro_batches=concurrent_micro_batches), whole_batch_runs("classifier")
    )


def test_concurrent_micro_batches_predict_as_the_whole_batch():
    from electra_tf.models import build_discriminator
    from finetune.models import ElectraTextClassifier
    from tests.accumulation_run import classifier_data

    config = tiny_config().with_vocab(50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    keras.utils.set_random_seed(0)
    classifier = ElectraTextClassifier(build_discriminator(config).backbone, num_classes=3)
    features, _ = classifier_data()
    classifier.compile()
    whole = classifier.predict(features, batch_size=8, verbose=0)
    classifier.compile(concurrent_micro_batches=2)
    concurrent = classifier.predict(features, batch_size=8, verbose=0)
    assert concurrent.shape == whole.shape == (21, 3)
    np.testing.assert_allclose(concurrent, whole, rtol=1e-5, atol=1e-6)


# Benchmarks (`pytest -m benchmark`): XLA's compilation is most of their half-minute each; the accumulation and the
# concurrent micro-batches they compile are checked without XLA above.
@pytest.mark.benchmark
@pytest.mark.parametrize(
    "micro_batches", [{"gradient_accumulation_steps": ACCUMULATION}, {"concurrent_micro_batches": 3}]
)
def test_micro_batches_compile_with_xla(whole_batch_runs, micro_batches):
    """Under XLA a micro-batch is a slice of a size known when compiling: the classifier's last batch of 5 runs as
    micro-batches of 2, 2 and 2 in turn (one copied row, left out of the loss), or at once, and the run ends as the
    whole batches without XLA (the reference the other runs meet; an XLA reference would cost a second
    compilation)."""
    settings = {"gradient_accumulation_steps": 1, **micro_batches}
    _assert_same_run(train_classifier(jit_compile=True, **settings), whole_batch_runs("classifier"))


def _saved_run(saved, case):
    """(weights, logs) of `case` in the arrays `tests.accumulation_run` saved."""
    count = len([name for name in saved if name.startswith(f"{case}/") and "/logs/" not in name])
    logs = {name.rsplit("/", 1)[1]: value for name, value in saved.items() if name.startswith(f"{case}/logs/")}
    return [saved[f"{case}/{index}"] for index in range(count)], logs


# Benchmarks (`pytest -m benchmark`): the process of the MirroredStrategy runs costs most of a minute. In the suite,
# accumulation on one device (above) and the replicas' gradients adding up to one device's
# (tests/electra_tf/training/test_replica_updates.py).
@pytest.mark.benchmark
def test_accumulated_pretraining_under_mirrored_strategy_equals_the_whole_batch_on_one_device(
    mirrored_runs, whole_batch_runs
):
    """Two replicas, each running its 4 examples of a batch as 4 micro-batches of one, end as one device with
    batches of 8."""
    case = "pretraining_keras_adamw"
    _assert_same_run(_saved_run(mirrored_runs, case), whole_batch_runs(case))


@pytest.mark.benchmark
def test_accumulated_classifier_under_mirrored_strategy_equals_its_whole_batch(mirrored_runs):
    _assert_same_run(_saved_run(mirrored_runs, "classifier"), _saved_run(mirrored_runs, "classifier_whole_batch"))
    assert np.isfinite(mirrored_runs["dropout/logs/loss"]), "dropout draws its masks inside the micro-batch loop"


def test_tagger_loss_weighted_by_sample_weights_is_the_whole_batch_mean():
    """The tagger's loss divides by the sum of the batch's sample weights, which differs between micro-batches: the
    accumulated update is still the whole batch's."""
    from electra_tf.models import build_discriminator
    from finetune.models import ElectraTokenClassifier
    from finetune.optimization import create_finetuning_optimizer

    config = tiny_config(hidden_dropout=0.0, attention_dropout=0.0).with_vocab(
        50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4
    )
    rng = np.random.default_rng(3)
    ids = rng.integers(5, 50, size=(12, 10)).astype(np.int32)
    mask = (np.arange(10)[None] < rng.integers(3, 11, size=(12, 1))).astype(np.int32)
    x = {
        "token_ids": ids * mask,
        "segment_ids": np.zeros_like(ids),
        "padding_mask": mask,
        "word_positions": np.tile(np.arange(10, dtype=np.int32), (12, 1)),
    }
    tags = rng.integers(0, 3, size=(12, 10)).astype(np.int32)
    weights = (mask * rng.integers(0, 2, size=(12, 10))).astype(np.float32)

    def train(gradient_accumulation_steps):
        keras.utils.set_random_seed(0)
        tagger = ElectraTokenClassifier(build_discriminator(config).backbone, tags=["a", "b", "c"], dropout=0.0)
        tagger.compile(
            optimizer=create_finetuning_optimizer(tagger.num_layers, 1e-3, 3),
            gradient_accumulation_steps=gradient_accumulation_steps,
        )
        history = tagger.fit(tf.data.Dataset.from_tensor_slices((x, tags, weights)).batch(4), verbose=0)
        assert int(tagger.optimizer.iterations.numpy()) == 3, "one update per batch"
        return (
            [variable.numpy() for variable in tagger.trainable_variables],
            {name: values[-1] for name, values in history.history.items()},
        )

    _assert_same_run(train(4), train(1))


def test_compile_keeps_the_setting_in_a_saved_model(tmp_path):
    from electra_tf.models import build_discriminator
    from finetune.models import ElectraTextClassifier

    config = ElectraConfig.from_preset("tiny").with_vocab(50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    classifier = ElectraTextClassifier(build_discriminator(config).backbone)
    classifier.compile(gradient_accumulation_steps=2)
    classifier.optimizer.build(classifier.trainable_variables)
    path = str(tmp_path / "classifier.keras")
    classifier.save(path)
    restored = keras.saving.load_model(path)
    assert restored.gradient_accumulation_steps == 2 and restored.optimizer.built
    with pytest.raises(ConfigError, match="gradient_accumulation_steps must be a positive integer, got 0") as raised:
        classifier.compile(gradient_accumulation_steps=0)
    assert raised.value.arguments == ("gradient_accumulation_steps",)
    classifier.compile(concurrent_micro_batches=2)
    classifier.optimizer.build(classifier.trainable_variables)
    classifier.save(path)
    restored = keras.saving.load_model(path)
    assert (restored.concurrent_micro_batches, restored.gradient_accumulation_steps) == (2, 1)
    with pytest.raises(ConfigError, match="concurrent_micro_batches must be a positive integer, got True") as raised:
        classifier.compile(concurrent_micro_batches=True)
    assert raised.value.arguments == ("concurrent_micro_batches",)
    with pytest.raises(
        ConfigError,
        match=r"^gradient_accumulation_steps=2 and concurrent_micro_batches=4: set one of them, the other to 1$",
    ) as raised:
        classifier.compile(gradient_accumulation_steps=2, concurrent_micro_batches=4)
    assert raised.value.arguments == ("gradient_accumulation_steps", "concurrent_micro_batches")


def test_a_batch_that_does_not_split_into_the_micro_batches_is_refused_naming_both_arguments():
    check_gradient_accumulation(4, 8)
    check_gradient_accumulation(4, 8, num_replicas=2)
    with pytest.raises(
        ConfigError,
        match=r"^train_batch_size=10 does not split into gradient_accumulation_steps=4 "
        r"equal micro-batches: train_batch_size is the batch of one optimizer "
        r"update and must be a multiple of 4$",
    ) as raised:
        check_gradient_accumulation(4, 10)
    assert raised.value.arguments == ("train_batch_size", "gradient_accumulation_steps")
    with pytest.raises(
        ConfigError,
        match=r"^train_batch_size=8 does not split into gradient_accumulation_steps=8 "
        r"equal micro-batches on each of 2 replicas: .* multiple of 16$",
    ):
        check_gradient_accumulation(8, 8, num_replicas=2)
    with pytest.raises(ConfigError, match="gradient_accumulation_steps must be a positive integer, got 2.5"):
        check_gradient_accumulation(2.5)


def _pretrainer(**overrides):
    config = ElectraConfig.from_preset(
        "tiny",
        vocab_size=300,
        pad_id=0,
        unk_id=1,
        cls_id=2,
        sep_id=3,
        mask_id=4,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        **overrides,
    )
    return ElectraPretrainer(config, max_seq_length=32, num_train_steps=10)


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"objective": "electra_15"},
        {"objective": "mlm"},
        {"objective": "replace_mlm"},
        {"objective": "all_tokens_mlm"},
        {"objective": "electric"},
        {"generator_training": "annealed"},
        {"two_stage_steps": 5},
    ],
    ids=lambda overrides: "-".join(f"{name}={value}" for name, value in overrides.items()) or "electra",
)
def test_every_loss_is_the_sum_of_its_coefficients_times_its_sums(overrides):
    """What accumulation relies on: each objective's loss is linear in its sums at fixed counts."""
    from tests.accumulation_run import pretraining_batches

    model = _pretrainer(**overrides)
    batch = {name: value[:4] for name, value in pretraining_batches(steps=1).items()}
    stats = model.pretraining_statistics(model.pretraining_outputs(batch, step=3, training=True))
    coefficients = model.loss_coefficients(stats, step=3)
    assert coefficients and all(name.endswith("_loss_sum") for name in coefficients)
    linear = sum(float(coefficient) * float(stats[name]) for name, coefficient in coefficients.items())
    assert float(model.pretraining_loss(stats, stats, step=3)) == pytest.approx(linear, rel=1e-6)


def test_config_round_trip_keeps_the_accumulation():
    model = ElectraPretrainer(
        ElectraConfig.from_preset("tiny", vocab_size=300), max_seq_length=32, gradient_accumulation_steps=4
    )
    assert ElectraPretrainer.from_config(model.get_config()).gradient_accumulation_steps == 4
