"""Load any supported checkpoint into one of our models, and save our models in any supported format.

Formats: `ours` (a pretrained directory or a pre-training run), `tf1` (the reference's TF1 checkpoints), `hf`
(Hugging Face transformers' safetensors + config.json; a discriminator/ + generator/ pair for the pre-training
model) and `keras_hub` (an `ElectraBackbone` preset). Everything passes through the reference's variable names
(`naming`), so every pair of formats converts without a format-to-format special case.
"""

import dataclasses
import os
import shutil

from electra_tf.checkpoints import config_inference, huggingface, keras_hub, ours, reference_tf1, tokenizer_files
from electra_tf.checkpoints.matching import assign_weights, has_head, network_sizes
from electra_tf.checkpoints.naming import (DISCRIMINATOR, GENERATOR, MODEL_KINDS, PRETRAINER, collect_weights,
                                           model_kind_of)
from electra_tf.io_utils import staged_directory
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError, ElectraError

OURS, TF1, HF, KERAS_HUB = "ours", "tf1", "hf", "keras_hub"
FORMATS = (OURS, TF1, HF, KERAS_HUB)


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
    kind: str = None       # the stored model kind, when the format says (ours)
    stored_config: object = None  # an ElectraConfig carried along by a format that does not need it (HF)
    tokenizer_settings: object = None  # the TokenizerSettings the format records, if it does


@dataclasses.dataclass
class LoadedModel:
    model: object
    kind: str
    vocab_file: str
    source_format: str
    tokenizer_settings: object = None  # TokenizerSettings, or None when the checkpoint does not record them


def detect_format(path):
    """`ours`, `tf1`, `hf` or `keras_hub` from what is at `path`."""
    if os.path.isdir(path):
        if ours.is_pretrained_directory(path) or ours.is_run_directory(path):
            return OURS
        if huggingface.is_hf_directory(path) or huggingface.is_hf_pretraining_directory(path):
            return HF
        if keras_hub.is_keras_hub_preset(path):
            return KERAS_HUB
        import tensorflow as tf

        prefix = tf.train.latest_checkpoint(path)
        if prefix is not None:
            return OURS if reference_tf1.is_object_based(prefix) else TF1
        raise CheckpointError(f"cannot tell the checkpoint format of the directory {path}: it is not a pretrained "
                              "directory (config.json + <model>.weights.h5), a Hugging Face model (config.json + "
                              "model.safetensors), a keras-hub preset or a TF checkpoint directory")
    if os.path.exists(path + ".index"):
        return OURS if reference_tf1.is_object_based(path) else TF1
    raise CheckpointError(f"{path} does not exist (expected a directory or a TF checkpoint prefix with {path}.index)")


def read_source(path, format="auto", allow_embedding_mismatch=False):
    """The `Source` at `path`."""
    format = detect_format(path) if format in (None, "auto") else format
    if format not in FORMATS:
        raise CheckpointError(f"unknown checkpoint format {format!r}; choose auto or one of {FORMATS}")
    if not os.path.exists(path) and not os.path.exists(path + ".index"):
        raise CheckpointError(f"{path} does not exist")
    if format == OURS:
        kind, model, vocab, settings = ours.load_ours(path)
        return Source(path, format, collect_weights(model, kind), vocab_file=vocab, config=model.electra_config,
                      kind=kind, tokenizer_settings=settings)
    if format == TF1:
        prefix = reference_tf1.resolve_prefix(path)
        return Source(path, format, reference_tf1.read_tf1_checkpoint(prefix),
                      vocab_file=config_inference.find_vocab(os.path.dirname(prefix)))
    if format == KERAS_HUB:
        weights, backbone = keras_hub.read_keras_hub_preset(path)
        return Source(path, format, weights, num_heads=backbone["num_heads"],
                      base={"hidden_dropout": backbone["dropout"], "attention_dropout": backbone["dropout"],
                            # keras-hub's ELECTRA computes the tanh GELU: so does the imported model, to give its outputs.
                            "hidden_activation": "gelu_approximate"},
                      # keras-hub keeps the vocabulary as assets/tokenizer/vocabulary.txt.
                      vocab_file=config_inference.find_vocab(path) or tokenizer_files.keras_hub_vocabulary(path),
                      tokenizer_settings=tokenizer_files.read_keras_hub_tokenizer(path))
    if huggingface.is_hf_pretraining_directory(path) and not huggingface.is_hf_directory(path):
        weights, discriminator_config, generator_config = huggingface.read_hf_pretraining_directory(
            path, allow_embedding_mismatch)
        return Source(path, format, weights, base=_hf_base(discriminator_config),
                      stored_config=_stored_hf_config(discriminator_config),
                      num_heads=discriminator_config.get("num_attention_heads"),
                      generator_num_heads=generator_config.get("num_attention_heads"),
                      vocab_file=config_inference.find_vocab(path, os.path.join(path, DISCRIMINATOR)),
                      tokenizer_settings=(tokenizer_files.read_hf_tokenizer(path)
                                          or tokenizer_files.read_hf_tokenizer(os.path.join(path, DISCRIMINATOR))))
    weights, config = huggingface.read_hf_directory(path)
    heads = config.get("num_attention_heads")
    is_generator = huggingface.network_of_weights(weights) == GENERATOR
    return Source(path, format, weights, base=_hf_base(config), stored_config=_stored_hf_config(config),
                  num_heads=None if is_generator else heads,
                  generator_num_heads=heads if is_generator else None, vocab_file=config_inference.find_vocab(path),
                  tokenizer_settings=tokenizer_files.read_hf_tokenizer(path))


def _hf_base(config):
    base = dict(config.get(huggingface.ELECTRA_TF_KEY) or {})
    renames = {"layer_norm_eps": "layer_norm_epsilon", "hidden_dropout_prob": "hidden_dropout",
               "attention_probs_dropout_prob": "attention_dropout", "initializer_range": "initializer_range"}
    for hf_key, field in renames.items():
        if hf_key in config:
            base[field] = config[hf_key]
    base["hidden_activation"] = huggingface.HIDDEN_ACTS[config.get("hidden_act", "gelu")]
    return base


def _network_shapes(config, network):
    sizes = config.generator_architecture() if network == GENERATOR else config
    return (config.vocab_size, config.embedding_size, config.max_position_embeddings, config.type_vocab_size,
            sizes.hidden_size, sizes.num_layers, sizes.num_heads, sizes.intermediate_size)


def _prefer_stored_config(stored, inferred, kind):
    """The config a file carried (our full config in an HF config.json) when it gives the same network sizes as the
    shapes: it also keeps what shapes cannot tell (a lone generator's discriminator, masking settings)."""
    if stored is None:
        return inferred
    networks = (DISCRIMINATOR, GENERATOR) if kind == PRETRAINER else (kind,)
    if all(_network_shapes(stored, network) == _network_shapes(inferred, network) for network in networks):
        return stored
    return inferred


def _stored_hf_config(config):
    values = config.get(huggingface.ELECTRA_TF_KEY)
    if not values:
        return None
    try:
        return ElectraConfig.from_dict(values)
    except ElectraError:
        return None


def default_kind(source):
    """The model a checkpoint holds when none is asked for: both networks -> pretrainer, else the one it has."""
    if source.kind:
        return source.kind
    weights = source.weights
    has_discriminator = network_sizes(weights, DISCRIMINATOR) is not None
    has_generator = network_sizes(weights, GENERATOR) is not None and has_head(weights, GENERATOR)
    if has_discriminator and has_generator:
        return PRETRAINER
    return GENERATOR if has_generator else DISCRIMINATOR


def source_config(source, kind, num_heads=None, vocab_file=None):
    """The `ElectraConfig` of a `kind` model holding `source`'s weights: the one our formats store, else the sizes read
    from the weights (`num_heads`: the discriminator's, for formats that do not record it)."""
    if source.config is not None:
        # Our formats store the exact config; ElectraGenerator derives its sizes from the discriminator's config, so
        # the same config serves every kind.
        return source.config
    # `num_heads` is the discriminator's; a generator's heads always follow the sizing rule.
    config = config_inference.infer_config(
        source.weights, kind, source.path, num_heads=num_heads or source.num_heads,
        generator_num_heads=source.generator_num_heads, vocab_file=vocab_file or source.vocab_file, base=source.base)
    return _prefer_stored_config(source.stored_config, config, kind)


def model_from_source(source, kind=None, num_heads=None, vocab_file=None, allow_missing_head=False):
    """A `LoadedModel` of `kind` (default: what the source holds) with the source's weights."""
    kind = kind or default_kind(source)
    if kind not in MODEL_KINDS:
        raise CheckpointError(f"unknown model {kind!r}; choose one of {MODEL_KINDS}")
    vocab_file = vocab_file or source.vocab_file
    config = source_config(source, kind, num_heads, vocab_file)
    model = ours.build_model(kind, config)
    assign_weights(model, kind, source.weights, source.path, allow_missing_head=allow_missing_head)
    return LoadedModel(model, kind, vocab_file, source.format, source.tokenizer_settings)


def load_model(path, kind=None, format="auto", num_heads=None, vocab_file=None, allow_missing_head=False,
               allow_embedding_mismatch=False):
    """Read the checkpoint at `path` (any format) into a new model of `kind`; returns a `LoadedModel`."""
    source = read_source(path, format, allow_embedding_mismatch)
    return model_from_source(source, kind, num_heads, vocab_file, allow_missing_head)


def load_weights_into(model, path, format="auto", allow_missing_head=False, allow_embedding_mismatch=False):
    """Assign the checkpoint at `path` to an existing `model` (its config must match the checkpoint's shapes)."""
    source = read_source(path, format, allow_embedding_mismatch)
    kind = model_kind_of(model)
    assign_weights(model, kind, source.weights, source.path, allow_missing_head=allow_missing_head)
    return model


def save_model(model, path, format=OURS, vocab_file=None, tokenizer_settings=None):
    """Write `model` (discriminator, generator or pre-training model) to `path` in `format`, atomically.

    With `vocab_file`, the tokenizer goes with the model: its vocabulary and `tokenizer_settings` (a
    `TokenizerSettings`, default BERT uncased) in the format's own files (`tokenizer.json` for ours and keras-hub,
    `tokenizer_config.json` for Hugging Face). The reference's TF1 format has no place for the settings: only
    vocab.txt is written beside the checkpoint.
    """
    kind = model_kind_of(model)
    config = model.electra_config
    if format == OURS:
        return ours.save_ours(model, kind, path, vocab_file, tokenizer_settings)
    weights = collect_weights(model, kind)
    if format == TF1:
        reference_tf1.write_tf1_checkpoint(weights, path)
        target_vocab = os.path.join(os.path.dirname(os.path.abspath(path)), config_inference.VOCAB_NAME)
        if vocab_file and not os.path.exists(target_vocab):
            shutil.copyfile(vocab_file, target_vocab)
        return path
    if format == HF:
        if kind != PRETRAINER:
            return huggingface.write_hf_directory(weights, config, kind, path, vocab_file, tokenizer_settings)
        with staged_directory(path) as staging:
            for network in (DISCRIMINATOR, GENERATOR):
                huggingface.write_hf_directory(weights, config, network, os.path.join(staging, network), vocab_file,
                                               tokenizer_settings)
        return path
    if format == KERAS_HUB:
        if kind == GENERATOR:
            raise CheckpointError("keras-hub has no ELECTRA generator model: only a discriminator (or the "
                                  "discriminator of a pre-training model) converts to an ElectraBackbone")
        return keras_hub.write_keras_hub_preset(weights, config, path, vocab_file, tokenizer_settings)
    raise CheckpointError(f"unknown checkpoint format {format!r}; choose one of {FORMATS}")
