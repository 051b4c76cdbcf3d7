"""Run an exported model.tflite or model.onnx in its own runtime (no TensorFlow in the loop), for the tests that
compare it with the Keras model. A runtime that is not installed skips the test, naming the extra that installs it."""

import numpy as np
import pytest


def run_litert(path, inputs):
    """{output name: array} of `path`'s `serving_default` on `inputs` ({name: int32 array}), by LiteRT's interpreter
    (ai-edge-litert's; TensorFlow's bundled copy when that is not installed)."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        Interpreter = pytest.importorskip("tensorflow").lite.Interpreter
    runner = Interpreter(model_path=str(path)).get_signature_runner("serving_default")
    return runner(**{name: np.asarray(value, np.int32) for name, value in inputs.items()})


def run_onnx(path, inputs):
    """{output name: array} of `path` on `inputs` ({name: int32 array}), by ONNX Runtime on the CPU."""
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX Runtime: pip install 'electra-tf[onnx]'")
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    values = session.run(names, {name: np.asarray(value, np.int32) for name, value in inputs.items()})
    return dict(zip(names, values))


RUNTIMES = {"litert": run_litert, "onnx": run_onnx}


def converter_or_skip(export_format):
    """Skip when `export_format`'s converter is not installed (TensorFlow converts LiteRT itself)."""
    if export_format == "onnx":
        pytest.importorskip("tf2onnx", reason="the ONNX converter: pip install 'electra-tf[onnx]'")


def with_trained_scale(model, seed=0):
    """`model` with every weight random at the scale of trained ones (N(0, 0.1^2); LayerNorm gains near 1): logits of
    order one, as a trained model's, where float32 rounding in another order stays far below 1e-5. (Standard normal
    weights give logits near 40, whose last bits then differ by a few 1e-5.)"""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        if "float" in str(variable.dtype):
            value = rng.normal(0, 0.1, variable.shape)
            variable.assign((value + 1 if "gamma" in variable.path else value).astype(variable.dtype))
    return model


def fixed_inputs(batch, max_seq_length, vocab_size, seed=0):
    """int32 `input_ids`, `input_mask`, `segment_ids` [batch, max_seq_length]: rows padded to different lengths, each
    with a second segment, so that every input changes the outputs."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, vocab_size, (batch, max_seq_length)).astype(np.int32)
    lengths = np.linspace(max_seq_length, max_seq_length // 2, batch).astype(int)
    positions = np.arange(max_seq_length)[None, :]
    mask = (positions < lengths[:, None]).astype(np.int32)
    segments = ((positions >= lengths[:, None] // 2) * mask).astype(np.int32)
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": segments}
