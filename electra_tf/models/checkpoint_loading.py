"""The one way to load and save a model in any checkpoint format: `load_checkpoint` and `save_checkpoint`.

Every reader of the project goes through `load_checkpoint` (fine-tuning, every model's `from_preset`, the scorer,
export, conversion, continued pre-training, the analyses); the formats, each in a module of its own in
`electra_tf.checkpoints`, are registered in `models.format_registry`. Errors about the path speak of the caller's
argument (`argument="init_checkpoint"` gives "init_checkpoint=... does not exist", with
`arguments=("init_checkpoint",)` for an entry point to show as a flag).
"""

import dataclasses
import os

from electra_tf.checkpoints import config_inference
from electra_tf.checkpoints.matching import assign_weights, cloze_generator_sizes, describe, has_head, network_sizes
from electra_tf.checkpoints.naming import (
    DISCRIMINATOR,
    GENERATOR,
    MODEL_CLASS_NAMES,
    MODEL_KINDS,
    PRETRAINER,
    model_kind_of,
)
from electra_tf.checkpoints.tokenizer_files import NO_VOCABULARY
from electra_tf.errors import CheckpointError
from electra_tf.models import ours_reading
from electra_tf.models.format_registry import FORMATS, OURS, read_source, write_model
from electra_tf.models.presets import reads_checkpoints
from electra_tf.tokenizer import BERT_UNCASED, ElectraTokenizer

# Each kind of model, and the checkpoints that hold one, for the message refusing a checkpoint without it.
WANTED = {DISCRIMINATOR: "a discriminator", GENERATOR: "a generator", PRETRAINER: "a discriminator and its generator"}
HOLDERS = {
    DISCRIMINATOR: "a pre-training run's model_dir or its pretrained/, a Hugging Face ElectraForPreTraining "
    "directory, a keras-hub backbone, or the reference's TF1 checkpoint",
    GENERATOR: "a pre-training run's model_dir, a generator's preset of ours, a Hugging Face ElectraForMaskedLM "
    "directory or discriminator/ + generator/ pair, or the reference's TF1 pre-training checkpoint",
    PRETRAINER: "a pre-training run's model_dir, a Hugging Face discriminator/ + generator/ pair, or the reference's "
    "TF1 pre-training checkpoint",
}


@dataclasses.dataclass
class LoadedModel:
    """A loaded model, its kind, the vocabulary it was trained with (None when the checkpoint has none), the format
    it was read from, and its `TokenizerSettings` (BERT uncased where the checkpoint records none: `settings_recorded`
    False).
    """

    model: object
    kind: str
    vocab_file: str
    source_format: str
    tokenizer_settings: object = BERT_UNCASED
    settings_recorded: bool = False
    path: str = None
    argument: str = "path"

    def tokenizer(self, vocab_file=None, do_lower_case=None, strip_accents=None):
        """The `ElectraTokenizer` the model was trained with: `vocab_file` (default the checkpoint's) with the
        checkpoint's settings, `do_lower_case` / `strip_accents` put over them; checked against the model."""
        vocab_file = vocab_file or self.vocab_file
        if not vocab_file:
            raise CheckpointError(
                f"{self.argument}={self.path} holds no vocabulary ({NO_VOCABULARY}): pass "
                "vocab_file=<the vocab.txt it was trained with>",
                arguments=(self.argument, "vocab_file"),
                without_flag={
                    "vocab_file": "write a copy that holds it once, electra-convert "
                    f"--from={self.path} --to=<new directory> --vocab_file=<vocab.txt>, "
                    "and use that directory"
                },
            )
        tokenizer = ElectraTokenizer.from_settings(
            vocab_file, self.tokenizer_settings.overridden(do_lower_case, strip_accents)
        )
        self.model.electra_config.check_vocabulary(tokenizer.vocab_size, vocab_file)
        return tokenizer


def default_kind(source):
    """The model a checkpoint holds when none is asked for: both networks -> pretrainer, else the one it has."""
    if source.kind:
        return source.kind
    weights = source.weights
    has_discriminator = network_sizes(weights, DISCRIMINATOR) is not None
    has_generator = network_sizes(weights, GENERATOR) is not None and has_head(weights, GENERATOR)
    if has_discriminator and (has_generator or cloze_generator_sizes(weights) is not None):
        return PRETRAINER
    return GENERATOR if has_generator else DISCRIMINATOR


def held_kinds(source):
    """The kinds of model whose networks `source` holds (a pre-training pair: all three)."""
    if source.kind == PRETRAINER:
        return MODEL_KINDS
    if source.kind:
        return (source.kind,)
    weights = source.weights
    kinds = [network for network in (DISCRIMINATOR, GENERATOR) if network_sizes(weights, network) is not None]
    if DISCRIMINATOR in kinds and (GENERATOR in kinds or cloze_generator_sizes(weights) is not None):
        kinds.append(PRETRAINER)
    return tuple(kinds)


def requested_kind(source, kind, requested_by, path, argument):
    """The kind of model to load from `source`: `kind`, the first kind of a tuple that `source` holds, or (None)
    `default_kind`. For a model class's `from_preset` (`requested_by`), a checkpoint that holds none of them is refused
    here, with where to find one; otherwise the model's missing weights tell (`config_inference`, `matching`)."""
    if kind is None:
        return default_kind(source)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    held = held_kinds(source)
    for candidate in kinds:
        if candidate in held:
            return candidate
    if requested_by is None or not held:
        return kinds[0]
    raise CheckpointError(
        f"{argument}={path} holds {describe(source.weights)}, not {WANTED[kinds[0]]}, which "
        f"{requested_by} loads: pass {argument}=<{HOLDERS[kinds[0]]}>, or load its {held[0]} with "
        f"{MODEL_CLASS_NAMES[held[0]]}.from_preset",
        arguments=(argument,),
    )


def _network_shapes(config, network):
    sizes = config.generator_architecture() if network == GENERATOR else config
    return (
        config.vocab_size,
        config.embedding_size,
        config.max_position_embeddings,
        config.type_vocab_size,
        sizes.hidden_size,
        sizes.num_layers,
        sizes.num_heads,
        sizes.intermediate_size,
    )


def _prefer_stored_config(stored, inferred, kind):
    """The config a file carried (our full config in an HF config.json) when it gives the same network sizes as the
    shapes: it also keeps what shapes cannot tell (a lone generator's discriminator, masking settings)."""
    if stored is None:
        return inferred
    networks = (DISCRIMINATOR, GENERATOR) if kind == PRETRAINER else (kind,)
    if all(_network_shapes(stored, network) == _network_shapes(inferred, network) for network in networks):
        return stored
    return inferred


def source_config(source, kind, num_heads=None, vocab_file=None):
    """The `ElectraConfig` of a `kind` model holding `source`'s weights: the one our format stores, else the sizes
    read from the weights (`num_heads`: the discriminator's, for formats that do not record it)."""
    if source.config is not None:
        # Our format stores the exact config; ElectraGenerator derives its sizes from the discriminator's config, so
        # the same config serves every kind.
        return source.config
    # `num_heads` is the discriminator's; a generator's heads always follow the sizing rule.
    config = config_inference.infer_config(
        source.weights,
        kind,
        source.path,
        num_heads=num_heads or source.num_heads,
        generator_num_heads=source.generator_num_heads,
        vocab_file=vocab_file or source.vocab_file,
        base=source.base,
    )
    return _prefer_stored_config(source.stored_config, config, kind)


@reads_checkpoints
def load_checkpoint(
    path,
    kind=None,
    format="auto",
    *,
    num_heads=None,
    vocab_file=None,
    allow_missing_head=False,
    allow_embedding_mismatch=False,
    argument="path",
    requested_by=None,
):
    """Read the checkpoint at `path` (any format) into a new model of `kind`; returns a `LoadedModel`.

    Args:
        path: a directory or a TF1 checkpoint prefix (a str or an `os.PathLike`).
        kind: discriminator, generator or pretrainer, or a tuple of them: the first the checkpoint holds
            (`ElectraBackbone.from_preset` asks for (discriminator, generator)); default what the checkpoint holds
            (both networks: pretrainer).
        format: auto (detected) or one of `FORMATS`.
        num_heads: the discriminator's attention heads, for formats that do not record them (TF1; default H // 64).
        vocab_file: the vocabulary to use instead of the one found with the checkpoint.
        allow_missing_head: accept a checkpoint without the model's head (HF ElectraModel, a keras-hub backbone); the
            head keeps its random initialisation.
        allow_embedding_mismatch: for an HF discriminator/ + generator/ pair whose embedding copies differ, keep the
            discriminator's.
        argument: the caller's name for `path`, used in error messages.
        requested_by: the model class's method that loads, whose class sets `kind` (e.g.
            "ElectraGenerator.from_preset"): a checkpoint without such a model is refused naming `argument` and the
            classes that load what it holds, not `kind`.
    """
    path = os.fspath(path) if isinstance(path, os.PathLike) else path
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if kind is not None and not (kinds and set(kinds) <= set(MODEL_KINDS)):
        raise CheckpointError(
            f"kind={kind!r} is not a model; choose one of {', '.join(MODEL_KINDS)}", arguments=("kind",)
        )
    source = read_source(path, format, allow_embedding_mismatch, argument)
    kind = requested_kind(source, kind, requested_by, path, argument)
    if source.kind == PRETRAINER and not source.config.reference_layout:
        return LoadedModel(
            ours_reading.model_part(source.model, kind, path),
            kind,
            vocab_file or source.vocab_file,
            source.format,
            source.tokenizer_settings or BERT_UNCASED,
            source.tokenizer_settings is not None,
            path,
            argument,
        )
    if kind == GENERATOR and cloze_generator_sizes(source.weights) is not None:
        raise CheckpointError(
            f"{argument}={path} holds Electric's two-tower cloze generator, which is no stand-alone "
            "generator model: load kind=pretrainer (or kind=discriminator)",
            arguments=("kind",),
        )
    vocab_file = vocab_file or source.vocab_file
    settings = source.tokenizer_settings
    if source.model is not None and source.kind == kind:
        model = source.model
    else:
        model = ours_reading.build_model(kind, source_config(source, kind, num_heads, vocab_file))
        assign_weights(model, kind, source.weights, source.path, allow_missing_head=allow_missing_head)
    return LoadedModel(
        model, kind, vocab_file, source.format, settings or BERT_UNCASED, settings is not None, path, argument
    )


def save_checkpoint(model, path, format=OURS, vocab_file=None, tokenizer_settings=None):
    """Write `model` (discriminator, generator or pre-training model) to `path` in `format`, atomically.

    With `vocab_file`, the tokenizer goes with the model: its vocabulary and `tokenizer_settings` (a
    `TokenizerSettings`, default BERT uncased) in the format's own files (keras-hub's `tokenizer.json` for ours and
    keras-hub, `tokenizer_config.json` for Hugging Face; the reference's TF1 format keeps vocab.txt only). `ours`
    writes a preset for a discriminator or generator and a run directory for a pre-training model
    (`checkpoints.ours`).
    """
    if format not in FORMATS:
        raise CheckpointError(
            f"format={format!r} is not a checkpoint format to write; choose one of {', '.join(FORMATS)}",
            arguments=("format",),
        )
    return write_model(model, model_kind_of(model), path, format, vocab_file, tokenizer_settings)
