"""The registry of checkpoint formats (`FORMATS`) and the dispatch over it: detection, reading and writing.

* `ours`: the project's keras-hub presets (`<model_dir>/pretrained`, or an `ElectraBackbone` alone) and the
  pre-training run holding one (`checkpoints.ours`; read by `models.ours_reading`).
* `tf1`: the reference's TF1 checkpoints, a prefix or its directory (`checkpoints.reference_tf1`).
* `hf`: a Hugging Face transformers directory (config.json + model.safetensors + tokenizer files), or a
  discriminator/ + generator/ pair of them for the pre-training model (`checkpoints.huggingface`).
* `keras_hub`: a keras-hub `ElectraBackbone` preset (`checkpoints.keras_hub`).

Each of those modules holds its format's detector, reader and writer as its `FORMAT` (ours: `models.ours_reading`,
as reading it builds our models); readers return a `Source` (`checkpoints.source`). This module is the only one that
tells formats apart; `models.checkpoint_loading` turns a `Source` into a model.
"""

import json
import os

from electra_tf.checkpoints import huggingface, keras_hub, reference_tf1
from electra_tf.checkpoints.source import HF, KERAS_HUB, OURS, TF1, CheckpointFormat, Source
from electra_tf.errors import CheckpointError
from electra_tf.models import ours_reading
from electra_tf.preflight import require_checkpoint

__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "HF",
    "KERAS_HUB",
    "OURS",
    "TF1",
    "CheckpointFormat",
    "Source",
    "checked_format",
    "detect_format",
    "read_source",
    "write_model",
]

# Detection tries them in this order: a directory of ours may also hold a TF checkpoint.
FORMATS = {fmt.name: fmt for fmt in (ours_reading.FORMAT, huggingface.FORMAT, keras_hub.FORMAT, reference_tf1.FORMAT)}
FORMAT_NAMES = tuple(FORMATS)


def checked_format(format, argument="format"):
    """`format` if it names a format (or auto), else a CheckpointError naming `argument`."""
    if format not in (None, "auto", *FORMATS):
        raise CheckpointError(
            f"{argument}={format!r} is not a checkpoint format; choose auto or one of {', '.join(FORMATS)}",
            arguments=(argument,),
        )
    return format


def _check_config_json(path, argument):
    """A config.json that is not JSON is why no format (ours, HF, keras-hub) recognised the directory: say so."""
    config = os.path.join(path, "config.json")
    if not os.path.isfile(config):
        return
    try:
        with open(config, encoding="utf-8") as handle:
            json.load(handle)
    except (OSError, ValueError) as error:
        raise CheckpointError(
            f"{argument}={path}: its config.json is not valid JSON ({error}); write the checkpoint again",
            arguments=(argument,),
        ) from None


def detect_format(path, argument="path"):
    """The name of the format of what is at `path`."""
    require_checkpoint(path, argument)
    for checkpoint_format in FORMATS.values():
        if checkpoint_format.detects(path):
            return checkpoint_format.name
    _check_config_json(path, argument)
    known = "; ".join(f"{name}: {fmt.description}" for name, fmt in FORMATS.items())
    raise CheckpointError(f"{argument}={path} is not a checkpoint in a known format ({known})", arguments=(argument,))


def read_source(path, format="auto", allow_embedding_mismatch=False, argument="path"):
    """The `Source` at `path` (`format`: auto or one of `FORMATS`)."""
    require_checkpoint(path, argument)
    format = checked_format(format)
    format = detect_format(path, argument) if format in (None, "auto") else format
    return FORMATS[format].read(path, allow_embedding_mismatch)


def write_model(model, kind, path, format, vocab_file=None, tokenizer_settings=None):
    """Write `model` (of `kind`) to `path` in `format` (one of `FORMATS`)."""
    if model.electra_config.alibi and format != OURS:
        # The other formats' readers (transformers, keras-hub, the reference) would compute without the bias.
        raise CheckpointError(
            f"the model uses ALiBi attention (alibi=True), which the {format} format cannot hold: write format={OURS}",
            arguments=("format",),
        )
    return FORMATS[format].write(model, kind, path, vocab_file, tokenizer_settings)
