"""Hugging Face transformers ELECTRA weights (`model.safetensors` + `config.json`), read and written with NumPy only.

HF names are the reference's with `.` separators, `layer.{i}`, `weight`/`bias` (Linear weights [out, in], the
transpose of the reference's kernels), `discriminator_predictions.dense_prediction` for the reference's `dense_1`
and `generator_lm_head.bias` for `output_bias`. Both `ElectraForPreTraining` (discriminator) and
`ElectraForMaskedLM` (generator) keep their encoder under `electra.`; which one a file holds is told by its head.
`ElectraModel` (no head, no `electra.` prefix) and `ElectraForSequenceClassification` load as a discriminator
encoder (with `allow_missing_head`). HF's classification head (`classifier.dense` -> gelu -> `classifier.out_proj`)
has one more dense layer than the reference's, so it does not map onto an ELECTRA model; its arrays are returned
separately by `read_classifier_head`.

A pre-training model (generator + discriminator) is a directory with `discriminator/` and `generator/` HF model
directories, as the released `google/electra-*-discriminator` / `-generator` pairs.
"""

import json
import os
import shutil

import numpy as np
from safetensors.numpy import load_file, save_file

from electra_tf.checkpoints import tokenizer_files
from electra_tf.checkpoints.huggingface_card import MODEL_CARD_NAME, model_card
from electra_tf.checkpoints.matching import check_shared_embeddings
from electra_tf.checkpoints.naming import (
    DISCRIMINATOR,
    EMBEDDINGS_SCOPE,
    GENERATOR,
    HEAD_SCOPES,
    NETWORK_SCOPES,
    PRETRAINER,
    collect_weights,
    stored_type_vocab_size,
)
from electra_tf.checkpoints.source import HF, CheckpointFormat, Source
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError, ElectraError
from electra_tf.io_utils import atomic_write_json, atomic_write_text, staged_directory
from electra_tf.tokenizer import BERT_UNCASED

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
SHARDED_INDEX_NAME = "model.safetensors.index.json"
ARCHITECTURES = {DISCRIMINATOR: "ElectraForPreTraining", GENERATOR: "ElectraForMaskedLM"}
# Our full ElectraConfig rides along in config.json (transformers keeps unknown keys as attributes).
ELECTRA_TF_KEY = "electra_tf_config"
_HEAD_PREFIXES = ("discriminator_predictions.", "generator_predictions.", "generator_lm_head.", "classifier.")
_IGNORED_SUFFIXES = ("position_ids",)  # a buffer, not a weight, in older transformers files


# ---------------------------------------------------------------------------------------------- names
# Hugging Face's `hidden_act` -> our `hidden_activation` (HF's "gelu" is the exact erf form).
HIDDEN_ACTS = {"gelu": "gelu", "gelu_new": "gelu_approximate"}


def to_hf_name(name):
    """(HF name, transpose?) of a reference name."""
    if name == "generator_predictions/output_bias":
        return "generator_lm_head.bias", False
    parts = name.split("/")
    if parts[0] in NETWORK_SCOPES.values():
        parts[0] = "electra"
    parts = [p.replace("layer_", "layer.") if p.startswith("layer_") else p for p in parts]
    parts = ["dense_prediction" if p == "dense_1" else p for p in parts]
    leaf = parts[-1]
    if leaf.endswith("_embeddings"):
        return ".".join(parts + ["weight"]), False
    if leaf == "kernel":
        return ".".join(parts[:-1] + ["weight"]), True
    if leaf == "gamma":
        return ".".join(parts[:-1] + ["weight"]), False
    if leaf == "beta":
        return ".".join(parts[:-1] + ["bias"]), False
    return ".".join(parts), False


def from_hf_name(key, network):
    """(reference name, transpose?) of an HF key, the encoder going to `network`'s scope; None for non-weights."""
    if key.endswith(_IGNORED_SUFFIXES) or key == "generator_lm_head.weight" or key.startswith("classifier."):
        return None
    if key == "generator_lm_head.bias":
        return "generator_predictions/output_bias", False
    if key.startswith("electra."):
        key = key[len("electra.") :]
    parts = key.split(".")
    module, leaf = parts[:-1], parts[-1]
    merged = []
    for part in module:
        if merged and merged[-1] == "layer" and part.isdigit():
            merged[-1] = f"layer_{part}"
        else:
            merged.append("dense_1" if part == "dense_prediction" else part)
    transpose = False
    if merged[-1] == "LayerNorm":
        merged.append("gamma" if leaf == "weight" else "beta")
    elif merged[-1].endswith("_embeddings"):
        pass
    else:
        transpose = leaf == "weight"
        merged.append("kernel" if transpose else "bias")
    if merged[0] == "embeddings":
        return "/".join(["electra"] + merged), False
    if merged[0] in ("discriminator_predictions", "generator_predictions"):
        return "/".join(merged), transpose
    return "/".join([NETWORK_SCOPES[network]] + merged), transpose


# ---------------------------------------------------------------------------------------------- reading
def is_hf_directory(path):
    config = os.path.join(path, CONFIG_NAME)
    if not os.path.isfile(config) or not (
        os.path.isfile(os.path.join(path, WEIGHTS_NAME)) or os.path.isfile(os.path.join(path, SHARDED_INDEX_NAME))
    ):
        return False
    try:
        with open(config, encoding="utf-8") as handle:
            return json.load(handle).get("model_type") == "electra"
    except (OSError, ValueError):
        return False


def is_hf_pretraining_directory(path):
    return all(is_hf_directory(os.path.join(path, network)) for network in (DISCRIMINATOR, GENERATOR))


def read_config(directory):
    path = os.path.join(directory, CONFIG_NAME)
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as error:
        raise CheckpointError(f"cannot read {path}: {error}") from error
    if config.get("model_type") != "electra":
        raise CheckpointError(f"{path} has model_type={config.get('model_type')!r}, not 'electra'")
    if config.get("hidden_act", "gelu") not in HIDDEN_ACTS:
        raise CheckpointError(
            f"{path} has hidden_act={config['hidden_act']!r}; the encoder supports "
            f"{sorted(HIDDEN_ACTS)} (the reference's exact GELU is 'gelu')"
        )
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise CheckpointError(
            f"{path} has position_embedding_type={config['position_embedding_type']!r}; "
            "only 'absolute' (the reference's) is supported"
        )
    return config


def read_tensors(directory):
    """{HF key: array} from model.safetensors (or its shards)."""
    index_path = os.path.join(directory, SHARDED_INDEX_NAME)
    files = [os.path.join(directory, WEIGHTS_NAME)]
    if not os.path.isfile(files[0]) and os.path.isfile(index_path):
        with open(index_path, encoding="utf-8") as handle:
            files = sorted({os.path.join(directory, shard) for shard in json.load(handle)["weight_map"].values()})
    tensors = {}
    for path in files:
        try:
            tensors.update(load_file(path))
        except Exception as error:  # safetensors raises its own error types
            raise CheckpointError(f"cannot read {path}: {error}") from error
    return tensors


def network_of(tensors):
    """Which network the encoder of an HF file belongs to: told by its head (no head: the discriminator)."""
    has_generator_head = any(key.startswith("generator_predictions.") for key in tensors)
    has_discriminator_head = any(key.startswith("discriminator_predictions.") for key in tensors)
    return GENERATOR if has_generator_head and not has_discriminator_head else DISCRIMINATOR


def canonical_weights(tensors, source):
    """{reference name: array} of an HF state dict."""
    network = network_of(tensors)
    weights = {}
    for key, value in tensors.items():
        mapped = from_hf_name(key, network)
        if mapped is None:
            continue
        name, transpose = mapped
        weights[name] = np.ascontiguousarray(value.T) if transpose else value
    tied = tensors.get("generator_lm_head.weight")
    word = weights.get(f"{EMBEDDINGS_SCOPE}/word_embeddings")
    if tied is not None and word is not None and not np.array_equal(tied, word):
        raise CheckpointError(
            f"{source}: generator_lm_head.weight differs from electra.embeddings.word_embeddings"
            ".weight; ELECTRA ties the generator's output layer to the word table"
        )
    return weights


def read_hf_directory(directory):
    """(weights, HF config dict) of one HF model directory."""
    config = read_config(directory)
    return canonical_weights(read_tensors(directory), directory), config


def read_hf_pretraining_directory(directory, allow_embedding_mismatch=False):
    """(weights, discriminator HF config, generator HF config) of a discriminator/ + generator/ pair.

    HF's generator holds its own copy of the embeddings; ELECTRA shares one block, so the copies must be equal.
    With `allow_embedding_mismatch` the discriminator's copy wins.
    """
    discriminator, discriminator_config = read_hf_directory(os.path.join(directory, DISCRIMINATOR))
    generator, generator_config = read_hf_directory(os.path.join(directory, GENERATOR))
    if network_of_weights(generator) != GENERATOR:
        raise CheckpointError(f"{directory}/generator does not hold an ElectraForMaskedLM (no generator_predictions)")
    check_shared_embeddings(
        discriminator,
        generator,
        directory,
        "discriminator/ and generator/",
        allow_embedding_mismatch,
        without_flag={
            "allow_embedding_mismatch": "write the pair with the discriminator's "
            f"embeddings once, electra-convert --from={directory} --to=<new directory> "
            "--allow_embedding_mismatch, and use that directory"
        },
    )
    merged = dict(generator)
    merged.update(discriminator)
    return merged, discriminator_config, generator_config


def network_of_weights(weights):
    return GENERATOR if any(name.startswith("generator/") for name in weights) else DISCRIMINATOR


def read_classifier_head(directory):
    """HF ElectraForSequenceClassification's head as {dense/kernel, dense/bias, out_proj/kernel, out_proj/bias}
    ([in, out] kernels), or {} when the file has none. It is dense(H) -> gelu -> out_proj(num_labels): one layer more
    than the reference's classifier, so no ELECTRA model variable receives it."""
    tensors = read_tensors(directory)
    head = {}
    for key, value in tensors.items():
        if key.startswith("classifier."):
            module, leaf = key[len("classifier.") :].rsplit(".", 1)
            head[f"{module}/{'kernel' if leaf == 'weight' else 'bias'}"] = value.T if leaf == "weight" else value
    return head


# ---------------------------------------------------------------------------------------------- writing
def hf_config(config, network):
    """The HF config.json of one network of our `ElectraConfig`."""
    sizes = config.generator_architecture() if network == GENERATOR else config
    return {
        "architectures": [ARCHITECTURES[network]],
        "model_type": "electra",
        "vocab_size": config.vocab_size,
        "embedding_size": config.embedding_size,
        "hidden_size": sizes.hidden_size,
        "num_hidden_layers": sizes.num_layers,
        "num_attention_heads": sizes.num_heads,
        "intermediate_size": sizes.intermediate_size,
        "hidden_act": {value: key for key, value in HIDDEN_ACTS.items()}[config.hidden_activation],
        "hidden_dropout_prob": config.hidden_dropout,
        "attention_probs_dropout_prob": config.attention_dropout,
        "max_position_embeddings": config.max_position_embeddings,
        "type_vocab_size": stored_type_vocab_size(config.type_vocab_size),
        "initializer_range": config.initializer_range,
        "layer_norm_eps": config.layer_norm_epsilon,
        "pad_token_id": config.pad_id,
        "position_embedding_type": "absolute",
        "summary_type": "first",
        "summary_use_proj": True,
        "summary_activation": "gelu",
        "summary_last_dropout": 0.1,
        "torch_dtype": "float32",
        ELECTRA_TF_KEY: config.to_dict(),
    }


def hf_tensors(weights, network):
    """{HF key: array} of the weights belonging to one network (embeddings, its encoder and its head)."""
    scopes = (EMBEDDINGS_SCOPE + "/", NETWORK_SCOPES[network] + "/", HEAD_SCOPES[network] + "/")
    tensors = {}
    for name, value in weights.items():
        if name.startswith(scopes):
            key, transpose = to_hf_name(name)
            tensors[key] = np.ascontiguousarray(value.T if transpose else value)
    return tensors


def write_hf_directory(weights, config, network, directory, vocab_file=None, tokenizer_settings=None):
    """Write one network as an HF model directory, atomically (staged in a sibling directory, then renamed); with
    `vocab_file`, the tokenizer's files transformers reads (vocab.txt, tokenizer_config.json with
    `tokenizer_settings`, default BERT uncased, and special_tokens_map.json)."""
    with staged_directory(directory) as staging:
        save_file(hf_tensors(weights, network), os.path.join(staging, WEIGHTS_NAME), metadata={"format": "pt"})
        atomic_write_json(os.path.join(staging, CONFIG_NAME), hf_config(config, network))
        if vocab_file:
            shutil.copyfile(vocab_file, os.path.join(staging, "vocab.txt"))
            tokenizer_files.write_hf_tokenizer(
                staging, tokenizer_settings or BERT_UNCASED, model_max_length=config.max_position_embeddings
            )
        atomic_write_text(
            os.path.join(staging, MODEL_CARD_NAME),
            model_card(
                config,
                network,
                ARCHITECTURES[network],
                ELECTRA_TF_KEY,
                (tokenizer_settings or BERT_UNCASED) if vocab_file else None,
            ),
        )
    return directory


# ---------------------------------------------------------------------------------------------- the format
def _detects(path):
    return is_hf_directory(path) or is_hf_pretraining_directory(path)


def _base_fields(config):
    """The non-size `ElectraConfig` fields an HF config.json records."""
    base = dict(config.get(ELECTRA_TF_KEY) or {})
    renames = {
        "layer_norm_eps": "layer_norm_epsilon",
        "hidden_dropout_prob": "hidden_dropout",
        "attention_probs_dropout_prob": "attention_dropout",
        "initializer_range": "initializer_range",
    }
    for hf_key, field in renames.items():
        if hf_key in config:
            base[field] = config[hf_key]
    base["hidden_activation"] = HIDDEN_ACTS[config.get("hidden_act", "gelu")]
    return base


def _stored_config(config):
    values = config.get(ELECTRA_TF_KEY)
    if not values:
        return None
    try:
        return ElectraConfig.from_dict(values)
    except ElectraError:
        return None


def _read_source(path, allow_embedding_mismatch=False):
    if is_hf_pretraining_directory(path) and not is_hf_directory(path):
        weights, discriminator_config, generator_config = read_hf_pretraining_directory(path, allow_embedding_mismatch)
        discriminator_dir = os.path.join(path, DISCRIMINATOR)
        return Source(
            path,
            HF,
            weights,
            base=_base_fields(discriminator_config),
            stored_config=_stored_config(discriminator_config),
            num_heads=discriminator_config.get("num_attention_heads"),
            generator_num_heads=generator_config.get("num_attention_heads"),
            vocab_file=tokenizer_files.vocab_file_of(path, discriminator_dir),
            tokenizer_settings=(
                tokenizer_files.read_hf_tokenizer(path) or tokenizer_files.read_hf_tokenizer(discriminator_dir)
            ),
        )
    weights, config = read_hf_directory(path)
    heads = config.get("num_attention_heads")
    is_generator = network_of_weights(weights) == GENERATOR
    return Source(
        path,
        HF,
        weights,
        base=_base_fields(config),
        stored_config=_stored_config(config),
        num_heads=None if is_generator else heads,
        generator_num_heads=heads if is_generator else None,
        vocab_file=tokenizer_files.vocab_file_of(path),
        tokenizer_settings=tokenizer_files.read_hf_tokenizer(path),
    )


def _write_model(model, kind, path, vocab_file=None, tokenizer_settings=None):
    weights, config = collect_weights(model, kind), model.electra_config
    if kind != PRETRAINER:
        return write_hf_directory(weights, config, kind, path, vocab_file, tokenizer_settings)
    if model.objective.cloze_generator:
        raise CheckpointError(
            "Hugging Face has no model for Electric's two-tower cloze generator: write the "
            "pre-training model as tf1 or ours, or its discriminator as hf",
            arguments=("format",),
        )
    with staged_directory(path) as staging:
        for network in (DISCRIMINATOR, GENERATOR):
            write_hf_directory(weights, config, network, os.path.join(staging, network), vocab_file, tokenizer_settings)
    return path


FORMAT = CheckpointFormat(
    HF,
    "a Hugging Face ELECTRA directory (config.json + model.safetensors) or a discriminator/ + generator/ pair of them",
    _detects,
    _read_source,
    _write_model,
)
