"""LiteRT and ONNX files of the discriminator: run by their own runtimes, they give the Keras model's outputs."""

import dataclasses
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from electra_tf.errors import ConfigError
from electra_tf.export import export_discriminator
from electra_tf.export_formats import check_export_format
from electra_tf.models import backbone_inputs
from tests.conftest import REPO_ROOT
from tests.electra_tf.checkpoints.models import TINY, tiny_model
from tests.id_model_runtimes import RUNTIMES, converter_or_skip, fixed_inputs, with_trained_scale

MAX_SEQ_LENGTH = 16


# The cpu preset's attention: ALiBi's distance bias, built from the padding mask inside the graph, and no token-type
# table.
ALIBI = dataclasses.replace(TINY, alibi=True, type_vocab_size=0)


@pytest.mark.parametrize("config", [TINY, ALIBI], ids=["learned_positions", "alibi"])
@pytest.mark.parametrize("export_format", ["litert", "onnx"])
def test_discriminator_file_matches_keras(export_format, config, tmp_path):
    converter_or_skip(export_format)
    model = with_trained_scale(tiny_model("discriminator", config=config))
    path = export_discriminator(model, None, str(tmp_path / "export"), MAX_SEQ_LENGTH, export_format=export_format)
    assert os.listdir(tmp_path / "export") == [os.path.basename(path)]

    inputs = fixed_inputs(3, MAX_SEQ_LENGTH, TINY.vocab_size)
    served = RUNTIMES[export_format](path, inputs)
    logits = model(backbone_inputs(inputs), training=False).numpy()
    assert served["logits"].shape == (3, MAX_SEQ_LENGTH)
    np.testing.assert_allclose(served["logits"], logits, rtol=0, atol=1e-5)
    np.testing.assert_allclose(served["replaced_probability"], 1 / (1 + np.exp(-logits)), rtol=0, atol=1e-5)
    # Any batch size: the runtime resizes the batch dimension.
    np.testing.assert_allclose(
        RUNTIMES[export_format](path, {name: value[:1] for name, value in inputs.items()})["logits"],
        logits[:1],
        rtol=0,
        atol=1e-5,
    )


# Largest logit difference measured between the int8 and the float32 file of this tiny model (largest logit 0.84):
# LiteRT 0.0054, ONNX Runtime 0.0080. (ELECTRA-Small, bench/int8_serving.py: 0.02-0.05 for logits near 1.)
INT8_TOLERANCE = 0.05


@pytest.mark.parametrize("export_format", ["litert", "onnx"])
def test_int8_file_runs_is_smaller_and_stays_near_float(export_format, tmp_path):
    converter_or_skip(export_format)
    model = with_trained_scale(tiny_model("discriminator"))
    inputs = fixed_inputs(3, MAX_SEQ_LENGTH, TINY.vocab_size)
    paths, logits = {}, {}
    for quantize in ("none", "int8"):
        paths[quantize] = export_discriminator(
            model, None, str(tmp_path / quantize), MAX_SEQ_LENGTH, export_format=export_format, quantize=quantize
        )
        logits[quantize] = RUNTIMES[export_format](paths[quantize], inputs)["logits"]
    sizes = {quantize: os.path.getsize(path) for quantize, path in paths.items()}
    assert sizes["int8"] < sizes["none"]
    difference = np.abs(logits["int8"] - logits["none"]).max()
    assert 0 < difference < INT8_TOLERANCE


def test_int8_is_refused_where_it_does_not_apply():
    with pytest.raises(
        ConfigError,
        match="quantize=int8 is for export_format=litert or onnx: Keras' int8 backbone "
        r"in a SavedModel served slower than float32 \(bench/int8_serving.py\)",
    ) as saved_model:
        check_export_format("saved_model", quantize="int8")
    assert saved_model.value.arguments == ("quantize", "export_format")
    with pytest.raises(ConfigError, match="quantize='int4' is not one of none, int8"):
        check_export_format("onnx", quantize="int4")
    check_export_format("litert", quantize="int8")


def test_unknown_format_the_generator_and_a_missing_converter_are_refused_naming_the_argument(monkeypatch):
    with pytest.raises(ConfigError, match="not one of saved_model, litert, onnx") as unknown:
        check_export_format("tflite")
    assert unknown.value.arguments == ("export_format",)
    with pytest.raises(ConfigError, match="not kind=generator") as generator:
        check_export_format("litert", kind="generator")
    assert generator.value.arguments == ("export_format", "kind")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"needs tf2onnx, which is not installed: pip install 'electra-tf\[onnx\]'"):
        check_export_format("onnx")
    check_export_format("litert")  # TensorFlow converts LiteRT itself


def test_command_refuses_what_a_format_cannot_hold_before_loading(tmp_path):
    """One line each, before the (missing) checkpoint is even looked at."""
    for args, message in (
        [
            "--model=generator --format=onnx",
            "error: --format=onnx exports the discriminator and fine-tuned models, not --model=generator",
        ],
        [
            "--model=classifier --format=litert --text_inputs=pair",
            "error: --text_inputs configure the raw-text signature, which only --format=saved_model "
            "has: --format=litert takes token ids",
        ],
        [
            "--format=saved_model --quantize=int8",
            "error: --quantize=int8 is for --format=litert or "
            "onnx: Keras' int8 backbone in a SavedModel served slower than float32",
        ],
    ):
        result = subprocess.run(
            [
                sys.executable,
                "export_model.py",
                f"--init_checkpoint={tmp_path / 'missing'}",
                f"--output_dir={tmp_path / 'out'}",
                *args.split(),
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        lines = result.stderr.strip().splitlines()
        assert result.returncode != 0 and len(lines) == 1 and lines[0].startswith(message), result.stderr[-2000:]
