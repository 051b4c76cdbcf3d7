import keras
import numpy as np
import pytest
import tensorflow as tf

from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.training.optimizers import AdamWeightDecay, create_optimizer, weight_decay_applies
from electra_tf.training.pretrainer import ElectraPretrainer
from electra_tf.training.schedules import WarmupLinearDecay
from tests.electra_tf.training.reference_optimizer import decayed_by, reference_adam_weight_decay
from tests.two_logical_cpus import run_on_two_logical_cpus

VOCAB = 7


def _model():
    inputs = keras.Input((5,), dtype="int32")
    hidden = keras.layers.Embedding(VOCAB, 3, name="word_embeddings")(inputs)
    hidden = keras.layers.Dense(4, name="dense")(hidden)
    outputs = keras.layers.LayerNormalization(name="layer_norm")(hidden)
    return keras.Model(inputs, outputs)


def _decayed(variables):
    return {v.path: v.path in ("word_embeddings/embeddings", "dense/kernel") for v in variables}


def _assert_close(variables, expected):
    # float32 against the float64 transcription: updates are ~lr = 0.1 a step, so 1e-6 catches any wrong term.
    for variable in variables:
        np.testing.assert_allclose(
            variable.numpy(), expected[variable.path], rtol=1e-6, atol=1e-6, err_msg=variable.path
        )


@pytest.mark.parametrize("bias_correction", [False, True])
def test_matches_numpy_transcription_of_reference_update(bias_correction):
    model = _model()
    variables = model.trainable_variables
    schedule = WarmupLinearDecay(0.1, num_train_steps=10, num_warmup_steps=3)
    optimizer = AdamWeightDecay(schedule, weight_decay=0.01, bias_correction=bias_correction)
    rng = np.random.default_rng(0)
    initial = {v.path: v.numpy() for v in variables}
    steps = [{v.path: rng.normal(size=v.shape) for v in variables} for _ in range(5)]
    for grads in steps:
        optimizer.apply([grads[v.path].astype(np.float32) for v in variables], variables)
    lrs = [float(schedule(step)) for step in range(5)]
    _assert_close(
        variables,
        reference_adam_weight_decay(initial, steps, lrs, _decayed(variables), bias_correction=bias_correction),
    )
    assert lrs[0] == 0.0  # the reference's first update has learning rate 0 (warm-up multiplied)
    assert int(optimizer.iterations) == 5


def test_clip_norm_clips_the_global_norm_of_each_step_as_the_reference():
    """Steps whose gradients' global norm is far above `clip_norm` and far below it: the first are scaled down to it,
    the others are left alone."""
    model = _model()
    variables = model.trainable_variables
    optimizer = AdamWeightDecay(0.1, weight_decay=0.01, clip_norm=1.0)
    rng = np.random.default_rng(5)
    initial = {v.path: v.numpy() for v in variables}
    steps = [{v.path: scale * rng.normal(size=v.shape) for v in variables} for scale in (10.0, 10.0, 1e-2)]
    for grads in steps:
        optimizer.apply([grads[v.path].astype(np.float32) for v in variables], variables)
    expected = reference_adam_weight_decay(initial, steps, [0.1] * 3, _decayed(variables), clip_norm=1.0)
    _assert_close(variables, expected)
    unclipped = reference_adam_weight_decay(initial, steps, [0.1] * 3, _decayed(variables))
    assert max(np.max(np.abs(expected[path] - unclipped[path])) for path in expected) > 1e-2, "clipping acted"
    assert AdamWeightDecay.from_config(optimizer.get_config()).clip_norm == 1.0
    with pytest.raises(ConfigError, match="^clip_norm must be positive or None, got 0"):
        AdamWeightDecay(0.1, clip_norm=0)


def test_clipped_indexed_slices_in_a_function_end_where_tensorflow_clipping_of_the_dense_sum_does():
    """Clipping inside a traced step, embedding gradients given as IndexedSlices with repeated rows (what concurrent
    micro-batches hand over): the variables end bit for bit where `tf.clip_by_global_norm` of the dense gradients,
    then the update without clipping, takes them."""
    rng = np.random.default_rng(3)
    models = [_model() for _ in range(2)]
    models[1].set_weights(models[0].get_weights())
    clipping, unclipped = (
        AdamWeightDecay(0.1, weight_decay=0.01, clip_norm=1.0),
        AdamWeightDecay(0.1, weight_decay=0.01),
    )
    for scale in (10.0, 10.0, 1e-2):
        indices = tf.constant(rng.integers(0, VOCAB, size=6), tf.int32)
        rows = tf.constant(scale * rng.normal(size=(6, 3)), tf.float32)
        others = [tf.constant(scale * rng.normal(size=v.shape), tf.float32) for v in models[0].trainable_variables[1:]]
        gradients = [tf.IndexedSlices(rows, indices, tf.constant([VOCAB, 3]))] + others
        tf.function(lambda: clipping.apply(gradients, models[0].trainable_variables))()
        dense, _ = tf.clip_by_global_norm([tf.convert_to_tensor(gradient) for gradient in gradients], 1.0)
        unclipped.apply(dense, models[1].trainable_variables)
    for ours, reference in zip(models[0].trainable_variables, models[1].trainable_variables):
        np.testing.assert_array_equal(ours.numpy(), reference.numpy(), err_msg=ours.path)


def test_embedding_gradients_as_indexed_slices_update_like_their_dense_sum():
    keras.utils.set_random_seed(1)
    model = _model()
    variables = model.trainable_variables
    optimizer = AdamWeightDecay(0.1, weight_decay=0.01)
    rng = np.random.default_rng(1)
    initial = {v.path: v.numpy() for v in variables}
    steps = []
    for _ in range(3):
        ids = rng.integers(0, VOCAB - 2, size=(2, 5)).astype("int32")  # repeated ids, two rows never looked up
        target = rng.normal(size=(2, 5, 4)).astype("float32")
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(model(ids) - target))
        grads = tape.gradient(loss, variables)
        table = variables[0]
        assert isinstance(grads[0], tf.IndexedSlices)
        # Summed in float32 as the optimizer must: a float64 sum of near-cancelling repeats differs by ~1e-7
        # relatively, which Adam's normalisation can carry past the tolerance on an unlucky initialisation.
        dense = tf.math.unsorted_segment_sum(grads[0].values, grads[0].indices, VOCAB).numpy()
        steps.append({table.path: dense, **{v.path: g.numpy() for v, g in zip(variables[1:], grads[1:])}})
        optimizer.apply(grads, variables)
    _assert_close(variables, reference_adam_weight_decay(initial, steps, [0.1] * 3, _decayed(variables)))


TWO_REPLICAS = """
import numpy as np
from electra_tf.training.optimizers import AdamWeightDecay
from tests.conftest import REPO_ROOT
from tests.electra_tf.training.reference_optimizer import reference_adam_weight_decay
from tests.electra_tf.training.test_optimizers import _decayed, _model
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = _model()
    optimizer = AdamWeightDecay(0.1, weight_decay=0.01, bias_correction=True, clip_norm=1.0)
    variables = model.trainable_variables
    optimizer.build(variables)
rng = np.random.default_rng(2)
initial = {v.path: v.numpy() for v in variables}
# Global norms ~70, ~70 and ~0.07: clipping each replica's half instead of the sum would double the first two updates'
# gradients against the third's (Adam is blind to a scale shared by every step, not to one that changes).
steps = [{v.path: scale * rng.normal(size=v.shape) for v in variables} for scale in (10.0, 10.0, 1e-2)]
for grads in steps:
    halves = [tf.constant(grads[v.path] / 2, tf.float32) for v in variables]  # the optimizer sums the replicas'
    # Each replica its own tensors, as gradients are: one tensor object on both replicas would reach a cross-replica
    # sum as a single value, which it leaves unsummed.
    own_halves = lambda: optimizer.apply([tf.identity(half) for half in halves], variables)  # noqa: E731
    tf.function(lambda: strategy.run(own_halves))()
expected = reference_adam_weight_decay(
    initial, steps, [0.1] * 3, _decayed(variables), bias_correction=True, clip_norm=1.0
)
print(max(float(np.max(np.abs(copy.numpy() - expected[v.path])))
          for v in variables for copy in strategy.experimental_local_results(v.value)))
"""


def test_update_on_two_replicas_equals_the_reference():
    """Under a strategy update_step receives each replica's copy of a variable, whose slots are that replica's; the
    gradient is clipped as the sum over replicas."""
    assert float(run_on_two_logical_cpus(TWO_REPLICAS).split()[-1]) < 1e-6


@pytest.mark.parametrize("name", ["adam_weight_decay", "keras_adamw", "lamb"])
def test_every_optimizer_decays_kernels_and_embedding_tables_only(name):
    """The reference's rule (no decay for LayerNorm and bias parameters) on the generator, discriminator and shared
    embeddings of a real pre-training model: kernels and embedding tables decay, nothing else."""
    config = ElectraConfig.from_preset("tiny").with_vocab(50, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    model = ElectraPretrainer(config, max_seq_length=16)
    decayed = decayed_by(create_optimizer(name, 0.1, weight_decay=0.5), model)
    assert [flag for _, flag in decayed] == [path.endswith(("/kernel", "/embeddings")) for path, _ in decayed]
    assert [flag for _, flag in decayed] == [weight_decay_applies(path) for path, _ in decayed]
    assert {path.rsplit("/", 1)[-1] for path, flag in decayed if not flag} == {"bias", "gamma", "beta", "output_bias"}


def test_weight_decay_rule_on_paths():
    decays = [
        "transformer_layer_0/query/kernel",
        "embeddings/word_embeddings/embeddings",
        "classifier/kernel",
        "bias_head/kernel",
    ]
    exempt = [
        "transformer_layer_0/query/bias",
        "generator_predictions/output_bias",
        "squad/end_norm/gamma",
        "embeddings/layer_norm/beta",
    ]
    assert [weight_decay_applies(path) for path in decays + exempt] == [True] * 4 + [False] * 4


def test_optimizer_and_schedule_serialise():
    optimizer = AdamWeightDecay(WarmupLinearDecay(3e-4, 1000, 100, mode="sequential"), bias_correction=True)
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert isinstance(clone, AdamWeightDecay) and clone.bias_correction and clone.epsilon == 1e-6
    assert clone.decoupled_weight_decay == 0.01
    assert float(clone.learning_rate) == float(optimizer.learning_rate)
    assert clone.get_config() == optimizer.get_config()
    assert clone.get_config()["learning_rate"]["config"]["mode"] == "sequential"


def test_factory_options_and_errors():
    assert isinstance(create_optimizer("keras_adamw", 1e-3), keras.optimizers.AdamW)
    assert isinstance(create_optimizer("lamb", 1e-3), keras.optimizers.Lamb)
    with pytest.raises(ConfigError, match="unknown optimizer"):
        create_optimizer("sgd", 1e-3)
    with pytest.raises(ConfigError, match="mode"):
        WarmupLinearDecay(1.0, 10, mode="cosine")
