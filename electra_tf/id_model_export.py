"""LiteRT and ONNX files of a serving module's token-id signature, for runtimes without TensorFlow.

`litert` writes `model.tflite` with TensorFlow's own LiteRT converter, builtin ops only, so that any LiteRT runtime
runs it without the TensorFlow-ops delegate; `onnx` writes `model.onnx` with tf2onnx, the converter Keras'
`export(format="onnx")` calls on the TensorFlow backend (called here on the serving module's function, so the inputs
and outputs are the SavedModel's). Both take the int32 inputs of the SavedModel's `serving_default` at a fixed
`max_seq_length` ([batch, max_seq_length], any batch) and return its outputs under the same names. Raw text stays a
SavedModel's: the in-graph tokeniser's tensorflow-text ops (`FastBertNormalize`, `FastWordpieceTokenizeWithOffsets`)
are no LiteRT builtins (at best custom ops that only an interpreter given tensorflow-text's registrar runs) and have no
ONNX equivalent.
"""

import inspect
import os
import tempfile

import numpy as np
import tensorflow as tf

from electra_tf.errors import ConfigError
from electra_tf.export_formats import FILE_NAMES, check_export_format
from electra_tf.io_utils import staged_directory
from electra_tf.saved_model_writer import write_serving_model

# tf2onnx and onnxruntime (the optional `onnx` extra) are imported by the functions that convert to ONNX.

# Opset 17: within what tf2onnx 1.17 writes and what every current ONNX Runtime runs; ELECTRA needs no newer op.
ONNX_OPSET = 17


def fixed_length_function(serve_ids, max_seq_length):
    """`serve_ids` (a tf.function on int32 [batch, seq] inputs) traced for [batch, max_seq_length]: LiteRT and ONNX
    runtimes plan their buffers from static shapes."""
    names = list(inspect.signature(serve_ids.python_function).parameters)
    specs = [tf.TensorSpec([None, max_seq_length], tf.int32, name=name) for name in names]
    return tf.function(serve_ids.python_function, input_signature=specs)


def litert_model(module, function, quantize=None):
    """The .tflite bytes of `function` (a method of `module`), under the signature `serving_default`; `quantize="int8"`:
    dynamic-range int8 (int8 weights, activations quantised per call; `tf.lite.Optimize.DEFAULT` without a
    representative dataset).

    Converted from a SavedModel of that one signature, as Keras' `export(format="litert")` does: the converter keeps
    the signature's input and output names from there.
    """
    # A module of its own: saving `module` would trace its raw-text function too, which needs the tokenizer. The
    # variables `function` captures are tracked by `write_serving_model`.
    holder = tf.Module(name=module.name)
    with tempfile.TemporaryDirectory() as directory:
        saved_model = write_serving_model(holder, os.path.join(directory, "saved_model"), {"serving_default": function})
        converter = tf.lite.TFLiteConverter.from_saved_model(saved_model)
        if quantize == "int8":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        return converter.convert()


def _erfc_as_one_minus_erf(graph, node, name, args):
    """ONNX has Erf but no Erfc, which the exact GELU uses: erfc(x) = 1 - erf(x)."""
    from tf2onnx import utils

    node.type = "Erf"
    dtype = utils.map_onnx_to_numpy_type(graph.get_dtype(node.output[0]))
    one = graph.make_const(utils.make_name(f"{name}_one"), np.array(1, dtype))
    graph.insert_new_node_on_output("Sub", node.output[0], inputs=[one.output[0], node.output[0]])


def onnx_model(function, quantize=None):
    """The ONNX bytes of `function`; `quantize="int8"`: ONNX Runtime's dynamic quantisation (`quantize_dynamic`, int8
    weights, activations quantised per call)."""
    import tf2onnx

    model, _ = tf2onnx.convert.from_function(
        function,
        input_signature=function.input_signature,
        opset=ONNX_OPSET,
        custom_op_handlers={"Erfc": (_erfc_as_one_minus_erf, [])},
    )
    if quantize in (None, "none"):
        return model.SerializeToString()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as directory:  # quantize_dynamic reads and writes files
        float_path, int8_path = os.path.join(directory, "float.onnx"), os.path.join(directory, "int8.onnx")
        with open(float_path, "wb") as file:
            file.write(model.SerializeToString())
        quantize_dynamic(float_path, int8_path, weight_type=QuantType.QInt8)
        with open(int8_path, "rb") as file:
            return file.read()


def write_id_model(module, serve_ids, output_dir, export_format, max_seq_length, quantize=None):
    """Write `serve_ids` of `module` (the SavedModel's `serving_default`) at [batch, max_seq_length] as
    `output_dir`/model.tflite or model.onnx, atomically (staged, then renamed), `quantize="int8"`: with int8 weights
    (dynamic-range); returns the file's path."""
    check_export_format(export_format, quantize=quantize)
    if export_format not in FILE_NAMES:
        raise ConfigError(
            f"export_format={export_format} is not a single-file format: "
            "use electra_tf.serving_module.ServingModule.write",
            arguments=("export_format",),
        )
    function = fixed_length_function(serve_ids, max_seq_length)
    content = litert_model(module, function, quantize) if export_format == "litert" else onnx_model(function, quantize)
    with staged_directory(output_dir) as staging:
        with open(os.path.join(staging, FILE_NAMES[export_format]), "wb") as file:
            file.write(content)
    return os.path.join(output_dir, FILE_NAMES[export_format])
