"""LiteRT and ONNX files of the discriminator: run by their own runtimes, they give the Keras model's outputs."""

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


@pytest.mark.parametrize("export_format", ["litert", "onnx"])
def test_discriminator_file_matches_keras(export_format, tmp_path):
    converter_or_skip(export_format)
    model = with_trained_scale(tiny_model("discriminator"))
    path = export_discriminator(model, None, str(tmp_path / "export"), MAX_SEQ_LENGTH, export_format=export_format)
    assert os.listdir(tmp_path / "export") == [os.path.basename(path)]

    inputs = fixed_inputs(3, MAX_SEQ_LENGTH, TINY.vocab_size)
    served = RUNTIMES[export_format](path, inputs)
    logits = model(backbone_inputs(inputs), training=False).numpy()
    assert served["logits"].shape == (3, MAX_SEQ_LENGTH)
    np.testing.assert_allclose(served["logits"], logits, rtol=0, atol=1e-5)
    np.testing.assert_allclose(served["replaced_probability"], 1 / (1 + np.exp(-logits)), rtol=0, atol=1e-5)
    # Any batch size: the runtime resizes the batch dimension.
    np.testing.assert_allclose(RUNTIMES[export_format](path, {name: value[:1] for name, value in inputs.items()})[
        "logits"], logits[:1], rtol=0, atol=1e-5)


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
    for args, message in (["--model=generator --format=onnx", "error: --format=onnx exports the discriminator and "
                           "fine-tuned models, not --model=generator"],
                          ["--model=classifier --format=litert --text_inputs=pair",
                           "error: --text_inputs configure the raw-text signature, which only --format=saved_model "
                           "has: --format=litert takes token ids"]):
        result = subprocess.run([sys.executable, "export_model.py", f"--init_checkpoint={tmp_path / 'missing'}",
                                 f"--output_dir={tmp_path / 'out'}", *args.split()], cwd=REPO_ROOT,
                                capture_output=True, text=True, timeout=300)
        lines = result.stderr.strip().splitlines()
        assert result.returncode != 0 and len(lines) == 1 and lines[0].startswith(message), result.stderr[-2000:]
