import keras
import numpy as np
import pytest

from electra_tf.errors import ConfigError
from electra_tf.training.optimizers import AdamWeightDecay, create_optimizer
from electra_tf.training.schedules import WarmupLinearDecay


def _reference_adam_weight_decay(params, grads_per_step, lrs, decayed, wd=0.01, b1=0.9, b2=0.999, eps=1e-6,
                                 bias_correction=False):
    """NumPy transcription of the reference's AdamWeightDecayOptimizer.apply_gradients."""
    params = {k: v.astype(np.float64).copy() for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    for t, (grads, lr) in enumerate(zip(grads_per_step, lrs), start=1):
        for name, grad in grads.items():
            m[name] = b1 * m[name] + (1 - b1) * grad
            v[name] = b2 * v[name] + (1 - b2) * grad ** 2
            m_used, v_used = m[name], v[name]
            if bias_correction:
                m_used, v_used = m_used / (1 - b1 ** t), v_used / (1 - b2 ** t)
            update = m_used / (np.sqrt(v_used) + eps)
            if decayed[name]:
                update += wd * params[name]
            params[name] = params[name] - lr * update
    return params


def _model():
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(4, name="dense")(inputs)
    outputs = keras.layers.LayerNormalization(name="layer_norm")(hidden)
    return keras.Model(inputs, outputs)


@pytest.mark.parametrize("bias_correction", [False, True])
def test_matches_numpy_transcription_of_reference_update(bias_correction):
    model = _model()
    variables = model.trainable_variables
    names = [v.path for v in variables]
    decayed = {name: name.endswith("dense/kernel") for name in names}
    schedule = WarmupLinearDecay(0.1, num_train_steps=10, num_warmup_steps=3)
    optimizer = AdamWeightDecay(schedule, weight_decay=0.01, bias_correction=bias_correction)
    rng = np.random.default_rng(0)
    initial = {v.path: v.numpy() for v in variables}
    steps = [{name: rng.normal(size=v.shape) for name, v in zip(names, variables)} for _ in range(5)]
    for grads in steps:
        optimizer.apply([grads[name].astype(np.float32) for name in names], variables)
    lrs = [float(schedule(step)) for step in range(5)]
    expected = _reference_adam_weight_decay(initial, steps, lrs, decayed, bias_correction=bias_correction)
    for variable in variables:
        # float32 against a float64 transcription: updates are ~lr = 0.1 a step, so 2e-5 still catches any wrong term.
        # (Without bias correction the update is TensorFlow's fused Adam kernel, which rounds 1 - beta_2 in float32:
        # 0.00100005, so v is 5e-5 relatively larger than the reference's and an update ~2e-5 relatively smaller.)
        np.testing.assert_allclose(variable.numpy(), expected[variable.path], rtol=1e-4, atol=2e-5)
    assert lrs[0] == 0.0  # the reference's first update has learning rate 0 (warm-up multiplied)


def test_decay_skips_layer_norm_and_biases():
    model = _model()
    optimizer = AdamWeightDecay(0.1, weight_decay=0.5)
    optimizer.build(model.trainable_variables)
    decayed = sorted(v.path for v in model.trainable_variables if optimizer._use_weight_decay(v))
    assert decayed == ["dense/kernel"]


def test_schedule_values_at_chosen_steps():
    multiply = WarmupLinearDecay(1.0, num_train_steps=100, num_warmup_steps=10)
    sequential = WarmupLinearDecay(1.0, num_train_steps=100, num_warmup_steps=10, mode="sequential")
    steps = [0, 5, 10, 50, 100, 150]
    np.testing.assert_allclose([float(multiply(s)) for s in steps], [0, 0.475, 0.9, 0.5, 0, 0], atol=1e-7)
    np.testing.assert_allclose([float(sequential(s)) for s in steps], [0, 0.5, 0.9, 0.5, 0, 0], atol=1e-7)
    no_warmup = WarmupLinearDecay(2.0, num_train_steps=4)
    np.testing.assert_allclose([float(no_warmup(s)) for s in range(5)], [2, 1.5, 1, 0.5, 0], atol=1e-7)


def test_optimizer_and_schedule_serialise():
    optimizer = AdamWeightDecay(WarmupLinearDecay(3e-4, 1000, 100, mode="sequential"), bias_correction=True)
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert isinstance(clone, AdamWeightDecay) and clone.bias_correction and clone.epsilon == 1e-6
    assert float(clone.learning_rate) == float(optimizer.learning_rate)
    assert clone._learning_rate.get_config() == optimizer._learning_rate.get_config()


def test_factory_options_and_errors():
    assert isinstance(create_optimizer("keras_adamw", 1e-3), keras.optimizers.AdamW)
    assert isinstance(create_optimizer("lamb", 1e-3), keras.optimizers.Lamb)
    with pytest.raises(ConfigError, match="unknown optimizer"):
        create_optimizer("sgd", 1e-3)
    with pytest.raises(ConfigError, match="mode"):
        WarmupLinearDecay(1.0, 10, mode="cosine")
