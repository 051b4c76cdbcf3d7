"""`load_checkpoint` / `save_checkpoint`: errors about the path name the caller's argument."""

import os

import numpy as np
import pytest

from electra_tf.errors import CheckpointError
from electra_tf.models import load_checkpoint, save_checkpoint
from tests.electra_tf.checkpoints.models import tiny_model


def test_a_missing_path_is_named_by_the_callers_argument(tmp_path):
    with pytest.raises(
        CheckpointError, match=f"^init_checkpoint={tmp_path / 'nowhere'} does not exist: pass a model directory"
    ) as raised:
        load_checkpoint(str(tmp_path / "nowhere"), argument="init_checkpoint")
    assert raised.value.arguments == ("init_checkpoint",)
    with pytest.raises(CheckpointError, match="^path=None does not exist"):
        load_checkpoint(None)


def test_the_task_models_speak_of_preset():
    from finetune.models import ElectraTextClassifier, ElectraTokenClassifier

    with pytest.raises(CheckpointError, match="^preset=no/such/dir does not exist") as raised:
        ElectraTextClassifier.from_preset("no/such/dir")
    assert raised.value.arguments == ("preset",)
    with pytest.raises(CheckpointError, match="^preset=no/such/dir does not exist"):
        ElectraTokenClassifier.from_preset("no/such/dir", tags=["O", "X"])


@pytest.mark.parametrize("task_arguments", [{"num_classes": 2}, {"tags": ["O", "X"]}], ids=["text", "token"])
def test_the_task_models_refuse_a_generator_naming_their_class_and_what_to_pass(hf_pair, task_arguments):
    from electra_tf.models.checkpoint_loading import HOLDERS
    from finetune.models import ElectraTextClassifier, ElectraTokenClassifier

    model_class = ElectraTextClassifier if "num_classes" in task_arguments else ElectraTokenClassifier
    generator = os.path.join(hf_pair["root"], "generator")
    with pytest.raises(CheckpointError) as raised:
        model_class.from_preset(generator, **task_arguments)
    assert str(raised.value) == (
        f"preset={generator} holds a generator (hidden 8, 2 layers), not a discriminator, which "
        f"{model_class.__name__}.from_preset loads: pass preset=<{HOLDERS['discriminator']}>, or load its generator "
        "with ElectraGenerator.from_preset"
    )
    assert raised.value.arguments == ("preset",)


def test_an_unknown_directory_lists_the_formats(tmp_path):
    with pytest.raises(
        CheckpointError,
        match=f"^model_dir={tmp_path} is not a checkpoint in a known format \\(ours: "
        ".*; hf: .*; keras_hub: .*; tf1: .*\\)$",
    ) as raised:
        load_checkpoint(str(tmp_path), argument="model_dir")
    assert raised.value.arguments == ("model_dir",)


def test_unknown_formats_and_kinds_are_refused(tmp_path):
    model = tiny_model("discriminator")
    with pytest.raises(
        CheckpointError,
        match="^format='onnx' is not a checkpoint format to write; choose one of ours, hf, keras_hub, tf1$",
    ):
        save_checkpoint(model, str(tmp_path / "x"), "onnx")
    save_checkpoint(model, str(tmp_path / "ours"))
    with pytest.raises(CheckpointError, match="^format='onnx' is not a checkpoint format; choose auto or one of"):
        load_checkpoint(str(tmp_path / "ours"), format="onnx")
    with pytest.raises(
        CheckpointError, match="^kind='tagger' is not a model; choose one of discriminator, generator, pretrainer$"
    ):
        load_checkpoint(str(tmp_path / "ours"), "tagger")
    with pytest.raises(CheckpointError, match="keras-hub has no ELECTRA generator model"):
        save_checkpoint(tiny_model("generator"), str(tmp_path / "kh"), "keras_hub")


def test_a_pre_training_model_saves_as_a_run_directory_holding_its_preset(tmp_path):
    from electra_tf.checkpoints.naming import collect_weights

    pretrainer = tiny_model("pretrainer", seed=6)
    save_checkpoint(pretrainer, str(tmp_path / "run"))
    run = load_checkpoint(str(tmp_path / "run"))
    assert (run.kind, run.source_format, run.vocab_file, run.settings_recorded) == ("pretrainer", "ours", None, False)
    preset = load_checkpoint(str(tmp_path / "run" / "pretrained"))
    assert preset.kind == "discriminator"
    expected = collect_weights(pretrainer.discriminator, "discriminator")
    for loaded in (preset.model, load_checkpoint(str(tmp_path / "run" / "ckpt-1"), "discriminator").model):
        actual = collect_weights(loaded, "discriminator")
        assert sorted(actual) == sorted(expected)
        assert all(np.array_equal(actual[name], value) for name, value in expected.items())
