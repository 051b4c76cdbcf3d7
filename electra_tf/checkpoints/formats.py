"""The checkpoint formats: for each, one detector, one reader and one writer, in one registry (`FORMATS`).

* `ours`: the project's keras-hub presets (`<model_dir>/pretrained`, or an `ElectraBackbone` alone) and the
  pre-training run holding one (`checkpoints.ours`).
* `tf1`: the reference's TF1 checkpoints, a prefix or its directory (`checkpoints.reference_tf1`).
* `hf`: a Hugging Face transformers directory (config.json + model.safetensors + tokenizer files), or a
  discriminator/ + generator/ pair of them for the pre-training model (`checkpoints.huggingface`).
* `keras_hub`: a keras-hub `ElectraBackbone` preset (`checkpoints.keras_hub`).

Readers return a `Source`: the weights under the reference's variable names (`naming`) plus the hints the format
carries, so every pair of formats converts without a format-to-format special case. This module is the only one that
tells formats apart; `checkpoints.loading` turns a `Source` into a model.
"""

import dataclasses
import filecmp
import json
import os
import shutil
from typing import Callable

from absl import logging

from electra_tf.checkpoints import huggingface, keras_hub, ours, reference_tf1, tokenizer_files
from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR, PRETRAINER, collect_weights, encoder_slots
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError, ElectraError
from electra_tf.io_utils import staged_directory
from electra_tf.preflight import require_checkpoint
from electra_tf.tokenizer import BERT_UNCASED

OURS, TF1, HF, KERAS_HUB = "ours", "tf1", "hf", "keras_hub"


@dataclasses.dataclass
class Source:
    """What a checkpoint holds before it becomes a model: canonical weights plus the hints its format carries."""

    path: str
    format: str
    weights: dict
    base: dict = dataclasses.field(default_factory=dict)  # non-size ElectraConfig fields
    num_heads: int = None
    generator_num_heads: int = None
    vocab_file: str = None
    config: object = None  # the exact ElectraConfig, when the format stores it (ours)
    kind: str = None  # the stored model kind, when the format says (ours)
    model: object = None  # the stored model itself, when the format holds one of ours (ours)
    stored_config: object = None  # an ElectraConfig carried along by a format that does not need it (HF)
    tokenizer_settings: object = None  # the TokenizerSettings the format records, if it does


@dataclasses.dataclass(frozen=True)
class CheckpointFormat:
    name: str
    description: str  # what a user finds at such a path; shown when no format matches
    detects: Callable  # path -> bool
    read: Callable  # (path, allow_embedding_mismatch) -> Source
    write: Callable  # (model, kind, path, vocab_file, tokenizer_settings) -> path


# ---------------------------------------------------------------------------------------------- ours
def _read_ours(path, allow_embedding_mismatch=False):
    kind, model, vocab, settings = ours.read(path)
    if kind == ours.BACKBONE:
        # An encoder without a head, read as a discriminator's (as a keras-hub backbone): its sizes from the weights,
        # its other fields as the backbone records them.
        weights = {slot.name: slot.read() for slot in encoder_slots(model, DISCRIMINATOR)}
        return Source(
            path,
            OURS,
            weights,
            base=model.architecture(),
            num_heads=model.num_heads,
            vocab_file=vocab,
            kind=DISCRIMINATOR,
            tokenizer_settings=settings,
        )
    # A pre-training model without the reference's variables (e.g. objective=mlm) has no canonical weights: its parts
    # come from the model itself (`ours.model_part`).
    weights = collect_weights(model, kind) if kind != PRETRAINER or model.electra_config.reference_layout else {}
    return Source(
        path,
        OURS,
        weights,
        vocab_file=vocab,
        config=model.electra_config,
        kind=kind,
        model=model,
        tokenizer_settings=settings,
    )


# ---------------------------------------------------------------------------------------------- tf1
def _detects_tf1(path):
    import tensorflow as tf

    prefix = tf.train.latest_checkpoint(path) if os.path.isdir(path) else path
    return prefix is not None and os.path.exists(prefix + ".index") and not reference_tf1.is_object_based(prefix)


def _read_tf1(path, allow_embedding_mismatch=False):
    prefix = reference_tf1.resolve_prefix(path)
    return Source(
        path,
        TF1,
        reference_tf1.read_tf1_checkpoint(prefix),
        vocab_file=tokenizer_files.vocab_file_of(os.path.dirname(prefix)),
    )


def _write_tf1(model, kind, path, vocab_file=None, tokenizer_settings=None):
    """The reference's TF1 format has no place for the tokenizer settings: only vocab.txt goes beside it (a
    different vocab.txt already there would be read with the checkpoint: refused), and settings other than the ones
    a TF1 checkpoint is read with (BERT uncased) are named in a notice."""
    target_vocab = os.path.join(os.path.dirname(os.path.abspath(path)), tokenizer_files.VOCAB_NAME)
    if vocab_file and os.path.exists(target_vocab) and not filecmp.cmp(vocab_file, target_vocab, shallow=False):
        raise CheckpointError(
            f"{target_vocab} is not the vocabulary of the model being written ({vocab_file}), and "
            "a TF1 checkpoint is read with the vocab.txt beside it: write the checkpoint into "
            "another directory, or remove that vocab.txt"
        )
    reference_tf1.write_tf1_checkpoint(collect_weights(model, kind), path)
    if vocab_file and not os.path.exists(target_vocab):
        shutil.copyfile(vocab_file, target_vocab)
    if vocab_file and tokenizer_settings is not None and tokenizer_settings != BERT_UNCASED:
        logging.warning(
            "%s keeps the vocabulary but not the tokenizer's casing, which the reference's TF1 format has "
            "no place for: it reads as lower-cased unless read with do_lower_case=%s and "
            "strip_accents=%s",
            path,
            tokenizer_settings.do_lower_case,
            tokenizer_settings.strip_accents,
            extra={"arguments": ("do_lower_case", "strip_accents")},
        )
    return path


# ---------------------------------------------------------------------------------------------- hf
def _detects_hf(path):
    return huggingface.is_hf_directory(path) or huggingface.is_hf_pretraining_directory(path)


def _hf_base(config):
    base = dict(config.get(huggingface.ELECTRA_TF_KEY) or {})
    renames = {
        "layer_norm_eps": "layer_norm_epsilon",
        "hidden_dropout_prob": "hidden_dropout",
        "attention_probs_dropout_prob": "attention_dropout",
        "initializer_range": "initializer_range",
    }
    for hf_key, field in renames.items():
        if hf_key in config:
            base[field] = config[hf_key]
    base["hidden_activation"] = huggingface.HIDDEN_ACTS[config.get("hidden_act", "gelu")]
    return base


def _stored_hf_config(config):
    values = config.get(huggingface.ELECTRA_TF_KEY)
    if not values:
        return None
    try:
        return ElectraConfig.from_dict(values)
    except ElectraError:
        return None


def _read_hf(path, allow_embedding_mismatch=False):
    if huggingface.is_hf_pretraining_directory(path) and not huggingface.is_hf_directory(path):
        weights, discriminator_config, generator_config = huggingface.read_hf_pretraining_directory(
            path, allow_embedding_mismatch
        )
        discriminator_dir = os.path.join(path, DISCRIMINATOR)
        return Source(
            path,
            HF,
            weights,
            base=_hf_base(discriminator_config),
            stored_config=_stored_hf_config(discriminator_config),
            num_heads=discriminator_config.get("num_attention_heads"),
            generator_num_heads=generator_config.get("num_attention_heads"),
            vocab_file=tokenizer_files.vocab_file_of(path, discriminator_dir),
            tokenizer_settings=(
                tokenizer_files.read_hf_tokenizer(path) or tokenizer_files.read_hf_tokenizer(discriminator_dir)
            ),
        )
    weights, config = huggingface.read_hf_directory(path)
    heads = config.get("num_attention_heads")
    is_generator = huggingface.network_of_weights(weights) == GENERATOR
    return Source(
        path,
        HF,
        weights,
        base=_hf_base(config),
        stored_config=_stored_hf_config(config),
        num_heads=None if is_generator else heads,
        generator_num_heads=heads if is_generator else None,
        vocab_file=tokenizer_files.vocab_file_of(path),
        tokenizer_settings=tokenizer_files.read_hf_tokenizer(path),
    )


def _write_hf(model, kind, path, vocab_file=None, tokenizer_settings=None):
    weights, config = collect_weights(model, kind), model.electra_config
    if kind != PRETRAINER:
        return huggingface.write_hf_directory(weights, config, kind, path, vocab_file, tokenizer_settings)
    if model.objective.cloze_generator:
        raise CheckpointError(
            "Hugging Face has no model for Electric's two-tower cloze generator: write the "
            "pre-training model as tf1 or ours, or its discriminator as hf",
            arguments=("format",),
        )
    with staged_directory(path) as staging:
        for network in (DISCRIMINATOR, GENERATOR):
            huggingface.write_hf_directory(
                weights, config, network, os.path.join(staging, network), vocab_file, tokenizer_settings
            )
    return path


# ---------------------------------------------------------------------------------------------- keras_hub
def _read_keras_hub(path, allow_embedding_mismatch=False):
    weights, backbone = keras_hub.read_keras_hub_preset(path)
    return Source(
        path,
        KERAS_HUB,
        weights,
        num_heads=backbone["num_heads"],
        base={
            "hidden_dropout": backbone["dropout"],
            "attention_dropout": backbone["dropout"],
            # keras-hub's ELECTRA computes the tanh GELU: so does the imported model, to give its outputs.
            "hidden_activation": "gelu_approximate",
        },
        vocab_file=tokenizer_files.vocab_file_of(path),
        tokenizer_settings=tokenizer_files.read_tokenizer_json(path),
    )


def _write_keras_hub(model, kind, path, vocab_file=None, tokenizer_settings=None):
    if kind == GENERATOR:
        raise CheckpointError(
            "keras-hub has no ELECTRA generator model: only a discriminator (or the "
            "discriminator of a pre-training model) converts to an ElectraBackbone",
            arguments=("format",),
        )
    written = keras_hub.write_keras_hub_preset(
        collect_weights(model, kind), model.electra_config, path, vocab_file, tokenizer_settings
    )
    logging.warning(
        "%s is a keras-hub ElectraBackbone preset, which holds the encoder only: the discriminator's "
        "replaced-token head%s not in it; write another format (ours, hf or tf1) to keep it",
        path,
        " and the generator are" if kind == PRETRAINER else " is",
    )
    return written


# Detection tries them in this order: a directory of ours may also hold a TF checkpoint.
FORMATS = {
    OURS: CheckpointFormat(
        OURS,
        "a model directory of ours (<model_dir>/pretrained, or an ElectraBackbone's "
        "save_to_preset) or a pre-training run's model_dir",
        ours.detects,
        _read_ours,
        ours.write,
    ),
    HF: CheckpointFormat(
        HF,
        "a Hugging Face ELECTRA directory (config.json + model.safetensors) or a "
        "discriminator/ + generator/ pair of them",
        _detects_hf,
        _read_hf,
        _write_hf,
    ),
    KERAS_HUB: CheckpointFormat(
        KERAS_HUB,
        "a keras-hub ElectraBackbone preset",
        keras_hub.is_keras_hub_preset,
        _read_keras_hub,
        _write_keras_hub,
    ),
    TF1: CheckpointFormat(
        TF1,
        "a reference TF1 checkpoint (a prefix such as electra_small/electra_small, or its directory)",
        _detects_tf1,
        _read_tf1,
        _write_tf1,
    ),
}
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
    return FORMATS[format].write(model, kind, path, vocab_file, tokenizer_settings)
