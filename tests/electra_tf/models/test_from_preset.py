"""Every model class's `from_preset` reads every checkpoint format, through `load_checkpoint`.

The matrix is class x checkpoint: one tiny pre-training model written in every format (`every_format`), plus its
generator alone (a Hugging Face ElectraForMaskedLM directory and a preset of ours) and its discriminator's backbone as
keras-hub saves it (`ElectraBackbone.save_to_preset`). The classes are the backbone, the discriminator, the generator,
the pre-training model and the task models (the text classifier, the tagger, the SQuAD model: the discriminator's
backbone under a new head). What a class loads must hold the source's weights bit for bit and compute the source's
outputs on a small batch; what a checkpoint does not hold is refused naming the path and the class that loads what it
holds, and a path that is no checkpoint is refused naming the formats. A keras-hub handle goes to keras-hub's own
`from_preset`.
"""

import functools
import pathlib

import keras_hub
import numpy as np
import pytest

from electra_tf.checkpoints.naming import collect_weights
from electra_tf.errors import CheckpointError, ConfigError
from electra_tf.models import (
    ElectraBackbone,
    ElectraDiscriminator,
    ElectraGenerator,
    ElectraPretrainingModel,
    save_checkpoint,
)
from electra_tf.models.backbone import backbone_inputs
from electra_tf.training.pretrainer import ElectraPretrainer
from finetune.models import ElectraSquadModel, ElectraTextClassifier, ElectraTokenClassifier
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.every_format import FORMATS, HEADLESS, PAIRS, encoder_weights, write_every_format
from tests.electra_tf.checkpoints.models import NUM_HEADS, TINY

GENERATOR_ONLY = ("hf_generator", "ours_generator")
CHECKPOINTS = [*FORMATS, *GENERATOR_ONLY, "ours_backbone"]
ENCODER_ONLY = (*HEADLESS, "ours_backbone")  # an encoder without the discriminator's head
# Each task model's own arguments: a new head on the pre-trained backbone.
TASK_ARGUMENTS = {
    ElectraTextClassifier: {"num_classes": 2, "max_seq_length": 16},
    ElectraTokenClassifier: {"tags": ["O", "X"], "max_seq_length": 16},
    ElectraSquadModel: {"head": "simple"},
}
CLASSES = [ElectraBackbone, ElectraDiscriminator, ElectraGenerator, ElectraPretrainingModel, *TASK_ARGUMENTS]
FEATURES = fixtures.batch()
INPUTS = backbone_inputs(FEATURES)
MASK_POSITIONS = np.array([[1, 3, 5], [2, 4, 0]], np.int32)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """({name: path} of every checkpoint of the matrix, the `ElectraPretrainer` they were written from)."""
    root = tmp_path_factory.mktemp("from_preset")
    paths, pretrainer = write_every_format(root)
    vocab = fixtures.write_vocab(root / "vocab.txt")
    paths.update(
        hf_generator=str(root / "hf_generator"),
        ours_generator=str(root / "ours_generator"),
        ours_backbone=str(root / "ours_backbone"),
    )
    for name, checkpoint_format in (("hf_generator", "hf"), ("ours_generator", "ours")):
        save_checkpoint(pretrainer.generator, paths[name], checkpoint_format, vocab_file=vocab)
    pretrainer.pretrained_discriminator().backbone.save_to_preset(paths["ours_backbone"])
    # The vocabulary gives the special tokens' ids (50 tokens are too few for BERT's).
    fixtures.write_vocab(root / "ours_backbone" / "vocab.txt")
    return paths, pretrainer


def held_network(name):
    """The network a checkpoint holds alone, or "pair"."""
    return "pair" if name in PAIRS else "generator" if name in GENERATOR_ONLY else "discriminator"


def expected_outcome(model_class, name):
    """What `model_class.from_preset` gives for checkpoint `name`: the network whose weights it holds, "headless"
    (refused without allow_missing_head), "task" (the discriminator's backbone under a new head) or "refused"."""
    network = held_network(name)
    if model_class in TASK_ARGUMENTS:
        return "refused" if network == "generator" else "task"
    if model_class is ElectraBackbone:
        return "generator" if network == "generator" else "discriminator"
    if model_class is ElectraPretrainingModel:
        return "pretrainer" if network == "pair" else "refused"
    wanted = "discriminator" if model_class is ElectraDiscriminator else "generator"
    if network not in ("pair", wanted):
        return "refused"
    return "headless" if name in ENCODER_ONLY else wanted


def assert_close(actual, expected, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=0, atol=atol)


@functools.cache
def keras_hub_outputs(path):
    """keras-hub's own `ElectraBackbone` of the preset at `path` on `INPUTS`."""
    return keras_hub.models.ElectraBackbone.from_preset(path)(INPUTS)["sequence_output"]


def check_backbone(backbone, pretrainer, network, name, path):
    source = pretrainer.generator.backbone if network == "generator" else pretrainer.pretrained_discriminator().backbone
    fixtures.assert_identical(encoder_weights(source, network), encoder_weights(backbone, network))
    if name in HEADLESS:
        # keras-hub's backbone computes the tanh GELU; so does the backbone read from it.
        assert_close(backbone(INPUTS), keras_hub_outputs(path), atol=1e-5)
    else:
        assert_close(backbone(INPUTS), source(INPUTS))


def check_discriminator(discriminator, pretrainer):
    source = pretrainer.pretrained_discriminator()
    fixtures.assert_identical(collect_weights(source, "discriminator"), collect_weights(discriminator, "discriminator"))
    assert_close(discriminator(INPUTS), source(INPUTS))


def check_generator(generator, pretrainer):
    fixtures.assert_identical(
        collect_weights(pretrainer.generator, "generator"), collect_weights(generator, "generator")
    )
    inputs = {**INPUTS, "mask_positions": MASK_POSITIONS}
    assert_close(generator(inputs), pretrainer.generator(inputs))


def check_pretrainer(model, pretrainer):
    fixtures.assert_identical(collect_weights(pretrainer, "pretrainer"), collect_weights(model, "pretrainer"))
    expected, actual = pretrainer.pretraining_outputs(FEATURES, 0), model.pretraining_outputs(FEATURES, 0)
    np.testing.assert_array_equal(actual["sampled_ids"], expected["sampled_ids"])
    for output in ("mlm_logits", "disc_logits"):
        assert_close(actual[output], expected[output])


@pytest.mark.parametrize("name", CHECKPOINTS)
@pytest.mark.parametrize("model_class", CLASSES, ids=lambda model_class: model_class.__name__)
def test_from_preset_reads_every_format(checkpoints, model_class, name):
    paths, pretrainer = checkpoints
    path = paths[name]
    # The reference's TF1 checkpoints do not record the number of attention heads.
    arguments = {**TASK_ARGUMENTS.get(model_class, {}), **({"num_heads": NUM_HEADS} if name == "tf1" else {})}
    outcome = expected_outcome(model_class, name)
    if outcome == "refused":
        with pytest.raises(CheckpointError) as raised:
            model_class.from_preset(path, **arguments)
        held = "generator" if held_network(name) == "generator" else "discriminator"
        message = str(raised.value)
        assert message.startswith(f"preset={path} holds a {held}")
        assert f"which {model_class.__name__}.from_preset loads: pass preset=<" in message
        assert message.endswith(f"or load its {held} with Electra{held.capitalize()}.from_preset")
        assert raised.value.arguments == ("preset",)
        return
    if outcome == "headless":
        with pytest.raises(CheckpointError, match="the discriminator head is missing .* pass allow_missing_head=True"):
            model_class.from_preset(path)
        check_backbone(
            model_class.from_preset(path, allow_missing_head=True).backbone, pretrainer, "discriminator", name, path
        )
        return
    model = model_class.from_preset(path, **arguments)
    assert type(model) is model_class
    if outcome == "task":
        check_backbone(model.backbone, pretrainer, "discriminator", name, path)
        if model_class is not ElectraSquadModel:  # the SQuAD model takes token ids: it has no preprocessor
            # The checkpoint's casing: `every_format` writes it cased where the format records it.
            recorded = name in FORMATS and name != "tf1"
            assert model.preprocessor.do_lower_case is not recorded
    elif model_class is ElectraBackbone:
        check_backbone(model, pretrainer, outcome, name, path)
    elif outcome == "discriminator":
        check_discriminator(model, pretrainer)
    elif outcome == "generator":
        check_generator(model, pretrainer)
    else:
        check_pretrainer(model, pretrainer)


# One class of each way into the loader: keras-hub's Backbone, keras-hub's Task, the Keras model, a task model.
@pytest.mark.parametrize(
    "model_class",
    [ElectraBackbone, ElectraGenerator, ElectraPretrainingModel, ElectraSquadModel],
    ids=lambda model_class: model_class.__name__,
)
def test_from_preset_takes_a_path_object(checkpoints, model_class):
    paths, pretrainer = checkpoints
    prefix = pathlib.Path(paths["tf1"])
    model = model_class.from_preset(prefix, num_heads=NUM_HEADS, **TASK_ARGUMENTS.get(model_class, {}))
    backbone = (
        model
        if model_class is ElectraBackbone
        else (model.discriminator if model_class is ElectraPretrainingModel else model).backbone
    )
    network = "generator" if model_class is ElectraGenerator else "discriminator"
    check_backbone(backbone, pretrainer, network, "tf1", str(prefix))


@pytest.mark.parametrize("model_class", CLASSES, ids=lambda model_class: model_class.__name__)
def test_from_preset_refuses_a_path_that_is_no_checkpoint_naming_the_formats(model_class, tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(CheckpointError) as raised:
        model_class.from_preset(str(tmp_path), **TASK_ARGUMENTS.get(model_class, {}))
    message = str(raised.value)
    assert message.startswith(
        f"preset={tmp_path} is not a checkpoint in a known format (ours: a model directory of ours"
    )
    for description in (
        "; hf: a Hugging Face ELECTRA directory",
        "; keras_hub: a keras-hub ElectraBackbone preset",
        "; tf1: a reference TF1 checkpoint (a prefix",
    ):
        assert description in message
    assert raised.value.arguments == ("preset",)


def test_from_preset_takes_keras_hubs_load_weights_and_constructor_arguments(checkpoints):
    paths, pretrainer = checkpoints
    preset = paths["ours_preset"]
    expected = collect_weights(pretrainer.pretrained_discriminator(), "discriminator")

    backbone = ElectraBackbone.from_preset(preset, dtype="mixed_bfloat16")
    assert backbone.dtype_policy.name == "mixed_bfloat16"
    assert_identical_subset(encoder_weights(backbone), expected)
    discriminator = ElectraDiscriminator.from_preset(preset, dtype="mixed_bfloat16", name="bf16_discriminator")
    assert discriminator.name == "bf16_discriminator"
    assert {layer.dtype_policy.name for layer in (discriminator.backbone, discriminator.replaced_token_head)} == {
        "mixed_bfloat16"
    }
    fixtures.assert_identical(expected, collect_weights(discriminator, "discriminator"))

    fresh = ElectraDiscriminator.from_preset(preset, load_weights=False)
    assert fresh.backbone.architecture() == backbone.architecture()
    assert not np.array_equal(
        collect_weights(fresh, "discriminator")["electra/embeddings/word_embeddings"],
        expected["electra/embeddings/word_embeddings"],
    )
    squad = ElectraSquadModel.from_preset(preset, head="simple", load_weights=False, name="fresh_squad")
    assert squad.name == "fresh_squad" and squad.backbone.architecture() == backbone.architecture()
    assert not np.array_equal(
        encoder_weights(squad.backbone)["electra/embeddings/word_embeddings"],
        expected["electra/embeddings/word_embeddings"],
    )

    # A subclass gets its own class, with the constructor's arguments and the networks' weights.
    trainer = ElectraPretrainer.from_preset(paths["ours_run"], max_seq_length=12, clip_norm=0.5)
    assert type(trainer) is ElectraPretrainer and trainer.clip_norm == 0.5
    assert trainer.max_predictions == TINY.max_predictions_per_seq(12)
    fixtures.assert_identical(collect_weights(pretrainer, "pretrainer"), collect_weights(trainer, "pretrainer"))


def assert_identical_subset(actual, expected):
    fixtures.assert_identical(actual, {name: expected[name] for name in actual})


# ElectraPretrainingModel is a keras.Model: keras-hub has no from_preset of its own for it.
KERAS_HUB_CLASSES = [ElectraBackbone, ElectraDiscriminator, ElectraGenerator]
KERAS_HUB_HANDLES = [
    "kaggle://keras/electra/keras/electra_small_discriminator_uncased_en",
    "hf://someone/electra",
    "electra_small_discriminator_uncased_en",
]


def keras_hub_parent(model_class):
    return keras_hub.models.Backbone if model_class is ElectraBackbone else keras_hub.models.Task


@pytest.mark.parametrize("handle", KERAS_HUB_HANDLES)
@pytest.mark.parametrize("model_class", KERAS_HUB_CLASSES, ids=lambda model_class: model_class.__name__)
def test_a_keras_hub_handle_goes_to_keras_hubs_own_from_preset(monkeypatch, model_class, handle):
    calls = []

    def from_preset(cls, preset, load_weights=True, **kwargs):
        calls.append((cls, preset, load_weights, kwargs))
        return "keras-hub's model"

    monkeypatch.setattr(keras_hub_parent(model_class), "from_preset", classmethod(from_preset))
    assert model_class.from_preset(handle, load_weights=False, dtype="float32") == "keras-hub's model"
    assert calls == [(model_class, handle, False, {"dtype": "float32"})]
    # The project's loader's arguments are not keras-hub's.
    with pytest.raises(
        ConfigError,
        match=f"^preset={handle} is a keras-hub handle, which {model_class.__name__}"
        r"\.from_preset leaves to keras-hub's own from_preset: it takes no "
        "format, num_heads",
    ) as raised:
        model_class.from_preset(handle, format="hf", num_heads=4)
    assert raised.value.arguments == ("preset", "format", "num_heads")
    assert len(calls) == 1


@pytest.mark.parametrize("model_class", KERAS_HUB_CLASSES, ids=lambda model_class: model_class.__name__)
def test_keras_hubs_loader_answers_for_its_handles_and_ours_for_missing_paths(model_class, tmp_path):
    # Both are refused by keras-hub before any download.
    with pytest.raises(ValueError, match="^Unexpected Kaggle preset"):
        model_class.from_preset("kaggle://not/a_handle")
    with pytest.raises(ValueError, match="^Unknown preset identifier"):
        model_class.from_preset("no_such_keras_hub_preset")
    missing = str(tmp_path / "no_such_preset")
    with pytest.raises(CheckpointError, match=f"^preset={missing} does not exist"):
        model_class.from_preset(missing)
