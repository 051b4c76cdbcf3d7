"""The formats `electra-export` writes, and the checks that refuse a format before any work (no TensorFlow needed).

`saved_model`: TF Serving's SavedModel, token ids and raw text in. `litert` (`model.tflite`) and `onnx`
(`model.onnx`): the token-id signature alone, at a fixed sequence length (`electra_tf.id_model_export`).
"""

from electra_tf.errors import ConfigError
from electra_tf.extras import require_modules

EXPORT_FORMATS = ("saved_model", "litert", "onnx")
FILE_NAMES = {"litert": "model.tflite", "onnx": "model.onnx"}
# The converter a format needs beyond TensorFlow (whose own LiteRT converter writes .tflite files), and the extra of
# this package that installs it.
CONVERTERS = {"onnx": ("tf2onnx", "onnx")}
# int8 weights (dynamic-range: activations quantised per call) where bench/int8_serving.py measured them faster than
# float32 at batch 1: LiteRT's converter with Optimize.DEFAULT, ONNX Runtime's quantize_dynamic (which onnxruntime
# brings, with the onnx extra).
QUANTIZATIONS = ("none", "int8")
QUANTIZERS = {"litert": None, "onnx": ("onnxruntime", "onnx")}


def check_export_format(export_format, kind="discriminator", quantize=None):
    """Refuse an unknown `export_format`, a model `kind` it cannot hold, a `quantize` it does not take, or a missing
    converter."""
    if export_format not in EXPORT_FORMATS:
        raise ConfigError(
            f"export_format={export_format!r} is not one of {', '.join(EXPORT_FORMATS)}", arguments=("export_format",)
        )
    if export_format != "saved_model" and kind == "generator":
        raise ConfigError(
            f"export_format={export_format} exports the discriminator and fine-tuned models, not "
            "kind=generator, whose logits over the whole vocabulary at every position are served from a "
            "SavedModel (export_format=saved_model)",
            arguments=("export_format", "kind"),
        )
    if export_format in CONVERTERS:
        module, extra = CONVERTERS[export_format]
        require_modules([module], extra, f"export_format={export_format} needs", ("export_format",))
    if quantize in (None, "none"):
        return
    if quantize not in QUANTIZATIONS:
        raise ConfigError(f"quantize={quantize!r} is not one of {', '.join(QUANTIZATIONS)}", arguments=("quantize",))
    if export_format not in QUANTIZERS:
        raise ConfigError(
            f"quantize={quantize} is for export_format=litert or onnx: Keras' int8 backbone in a "
            "SavedModel served slower than float32 (bench/int8_serving.py)",
            arguments=("quantize", "export_format"),
        )
    if QUANTIZERS[export_format]:
        module, extra = QUANTIZERS[export_format]
        require_modules([module], extra, f"quantize={quantize} with export_format={export_format} needs", ("quantize",))
