"""Starting pre-training from released or earlier weights (continued, domain-adaptive pre-training).

`read_initial_weights` reads any checkpoint `electra-convert` reads (the reference's TF1 checkpoints, a Hugging
Face discriminator directory or discriminator/ + generator/ pair, a keras-hub preset, a pretrained directory or a run
of ours), optionally with a generator from a second checkpoint, and returns the run's configuration (the checkpoint's
architecture and generator sizes, the job's pre-training settings) with the weights to start from. Only weights are
taken: the optimizer and the step start fresh.
"""

import dataclasses

import keras_hub
import tensorflow as tf

from electra_tf.architecture import ARCHITECTURE_FIELDS
from electra_tf.checkpoints import collect_weights, require_checkpoint
from electra_tf.checkpoints.config_inference import infer_config
from electra_tf.checkpoints.matching import assign_weights, check_shared_embeddings, describe
from electra_tf.checkpoints.naming import (
    DISCRIMINATOR,
    EMBEDDINGS_SCOPE,
    GENERATOR,
    HEAD_SCOPES,
    NETWORK_SCOPES,
    PRETRAINER,
)
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError, ConfigError, DataError
from electra_tf.models import load_checkpoint
from electra_tf.tokenizer import vocab_fingerprint

_GENERATOR_PREFIXES = (NETWORK_SCOPES[GENERATOR] + "/", HEAD_SCOPES[GENERATOR] + "/")
_WORD_EMBEDDINGS = f"{EMBEDDINGS_SCOPE}/word_embeddings"


@dataclasses.dataclass
class InitialWeights:
    """What a run starts from: its `config`, the `weights` (reference names -> arrays) read from `path`, whether they
    hold a generator, the checkpoint's vocabulary file and `TokenizerSettings` (None when it records none), and a line
    for the log."""

    path: str
    config: ElectraConfig
    weights: dict
    has_generator: bool
    vocab_file: str
    tokenizer_settings: object
    description: str

    def assign_to(self, model):
        """Write the weights into a new `ElectraPretrainer` built from `config`: both networks and the shared
        embeddings, or the discriminator and the embeddings (the generator keeps its initialisation)."""
        if self.has_generator:
            assign_weights(model, PRETRAINER, self.weights, self.path)
        else:
            assign_weights(model.discriminator, DISCRIMINATOR, self.weights, self.path)


def _is_generator_name(name):
    return name.startswith(_GENERATOR_PREFIXES)


def _with_generator(loaded, weights, generator_path, allow_embedding_mismatch=False):
    """(config, weights) of `loaded`'s discriminator and embeddings with the generator encoder and head of the
    checkpoint at `generator_path`, whose copy of the shared embeddings must equal `loaded`'s (unless
    `allow_embedding_mismatch`)."""
    generator = load_checkpoint(
        generator_path, argument="init_generator_checkpoint", allow_embedding_mismatch=allow_embedding_mismatch
    )
    if generator.kind == DISCRIMINATOR:
        raise CheckpointError(
            f"init_generator_checkpoint={generator_path} holds a discriminator, not a generator with its MLM head",
            arguments=("init_generator_checkpoint",),
        )
    generator_weights = collect_weights(generator.model, generator.kind)
    table, generator_table = weights.get(_WORD_EMBEDDINGS), generator_weights.get(_WORD_EMBEDDINGS)
    if table.shape != generator_table.shape:
        raise CheckpointError(
            f"init_generator_checkpoint={generator_path} has word embeddings of shape {generator_table.shape} "
            f"but init_checkpoint={loaded.path} has {table.shape}: ELECTRA's generator shares the discriminator's "
            "embeddings, so it must come from the same pre-training run (or leave init_generator_checkpoint unset "
            "for a new generator)",
            arguments=("init_generator_checkpoint", "init_checkpoint"),
        )
    check_shared_embeddings(
        weights,
        generator_weights,
        f"init_generator_checkpoint={generator_path}",
        f"init_checkpoint={loaded.path} and it",
        allow_embedding_mismatch,
        arguments=("init_generator_checkpoint", "init_checkpoint"),
    )
    weights = {name: value for name, value in weights.items() if not _is_generator_name(name)}
    weights.update({name: value for name, value in generator_weights.items() if _is_generator_name(name)})
    config = infer_config(
        weights,
        PRETRAINER,
        loaded.path,
        num_heads=loaded.model.electra_config.num_heads,
        generator_num_heads=generator.model.electra_config.generator_architecture().num_heads,
        base=loaded.model.electra_config,
    )
    return config, weights


def _run_config(checkpoint_config, job_config, has_generator, architecture_overrides):
    """The checkpoint's architecture (with the job's dropout overrides) and the job's pre-training settings, with the
    checkpoint's special-token ids and, when it holds a generator, its generator sizes."""
    architecture = dataclasses.replace(checkpoint_config.architecture_config(), **architecture_overrides)
    settings = job_config.pretraining_settings()
    kept = ("pad_id", "unk_id", "cls_id", "sep_id", "mask_id")
    if has_generator:
        kept += ("generator_hidden_fraction", "generator_layers_fraction")
    settings = dataclasses.replace(settings, **{name: getattr(checkpoint_config, name) for name in kept})
    return ElectraConfig.from_parts(architecture, settings)


def check_data_vocabulary(manifest, data_patterns, config, vocab_file, init_checkpoint):
    """The data (`data_patterns`, whose builder wrote `manifest`) must be tokenised with the checkpoint's vocabulary:
    same size, same file contents."""
    rebuild = f"rebuild the data with electra-build-data --vocab_file={vocab_file or '<the checkpoint vocab.txt>'}"
    built_size = manifest.get("vocab_size")
    if built_size is not None and built_size != config.vocab_size:
        raise DataError(
            f"the data {data_patterns} was built with a vocabulary of {built_size} tokens (see its "
            f"manifest.json) but init_checkpoint={init_checkpoint} has {config.vocab_size}: {rebuild}",
            arguments=("init_checkpoint",),
        )
    built_fingerprint = manifest.get("vocab_fingerprint")
    if vocab_file and built_fingerprint and vocab_fingerprint(vocab_file) != built_fingerprint:
        raise DataError(
            f"the data {data_patterns} was built with {manifest.get('vocab_file')} (see its "
            f"manifest.json), not with {vocab_file}, the vocabulary of init_checkpoint={init_checkpoint}: "
            f"{rebuild}",
            arguments=("init_checkpoint",),
        )


def read_initial_weights(
    init_checkpoint,
    job_config,
    *,
    init_generator_checkpoint=None,
    checkpoint_format="auto",
    vocab_file=None,
    num_heads=None,
    architecture_overrides=None,
    allow_embedding_mismatch=False,
):
    """The `InitialWeights` of a run starting from `init_checkpoint`.

    Args:
        init_checkpoint: a checkpoint holding a discriminator (and possibly its generator), in any format
            `electra-convert` reads; of a run of ours whose networks have no reference layout (a masked-LM run, e.g.
            its `kept-N`), the discriminator-sized network.
        job_config: the `ElectraConfig` the job asks for; its pre-training settings are kept, its sizes are replaced
            by the checkpoint's.
        init_generator_checkpoint: a generator (e.g. a Hugging Face generator directory) to pair with a checkpoint
            holding only a discriminator; its copy of the shared embeddings must equal the discriminator's.
        checkpoint_format: auto, ours, tf1, hf or keras_hub.
        vocab_file: the vocabulary to use instead of the one found with the checkpoint.
        num_heads: the discriminator's attention heads, for formats that do not record them (default hidden // 64).
        architecture_overrides: ElectraArchitecture fields the job sets explicitly (e.g. dropout).
        allow_embedding_mismatch: for a discriminator and generator whose copies of the shared embeddings differ (an
            HF discriminator/ + generator/ pair, or `init_generator_checkpoint` beside `init_checkpoint`), keep the
            discriminator's instead of refusing them.
    """
    require_checkpoint(init_checkpoint, "init_checkpoint")
    if init_generator_checkpoint:
        require_checkpoint(init_generator_checkpoint, "init_generator_checkpoint")
    loaded = load_checkpoint(
        init_checkpoint,
        format=checkpoint_format,
        num_heads=num_heads,
        vocab_file=vocab_file,
        allow_embedding_mismatch=allow_embedding_mismatch,
        argument="init_checkpoint",
    )
    if loaded.kind == PRETRAINER and not loaded.model.electra_config.reference_layout:
        # A run whose networks have no reference layout (e.g. objective=mlm): its discriminator-sized network starts
        # the discriminator, beside a fresh generator.
        loaded = dataclasses.replace(loaded, model=loaded.model.pretrained_discriminator(), kind=DISCRIMINATOR)
    if loaded.kind == GENERATOR:
        raise CheckpointError(
            f"init_checkpoint={init_checkpoint} holds a generator, not a discriminator: continued "
            "pre-training starts from a discriminator (and its generator)",
            arguments=("init_checkpoint",),
        )
    weights = collect_weights(loaded.model, loaded.kind)
    checkpoint_config = loaded.model.electra_config
    if init_generator_checkpoint:
        checkpoint_config, weights = _with_generator(
            loaded, weights, init_generator_checkpoint, allow_embedding_mismatch
        )
    has_generator = loaded.kind == PRETRAINER or bool(init_generator_checkpoint)
    overrides = {name: value for name, value in (architecture_overrides or {}).items() if name in ARCHITECTURE_FIELDS}
    config = _run_config(checkpoint_config, job_config, has_generator, overrides)
    if not config.reference_layout:
        choices = config.non_reference_choices()
        raise ConfigError(
            "init_checkpoint starts the reference's generator and discriminator; it does not combine "
            f"with {' or '.join(choices)}",
            arguments=("init_checkpoint", *(label.split("=")[0] for label in choices)),
        )
    return InitialWeights(
        path=init_checkpoint,
        config=config,
        weights=weights,
        has_generator=has_generator,
        vocab_file=loaded.vocab_file,
        tokenizer_settings=loaded.tokenizer_settings if loaded.settings_recorded else None,
        description=f"{init_checkpoint} ({loaded.source_format}: {describe(weights)})",
    )


def initialize_positions_sinusoidally(embeddings, stddev):
    """Overwrite the position table of `embeddings` (an `ElectraEmbeddings`) with Vaswani et al.'s sine/cosine waves,
    scaled to standard deviation `stddev`. The vector of position p + k is then a fixed rotation of that of p for
    every p, so attention can learn "look k tokens back" once instead of once per position."""
    table = embeddings.position_embeddings.position_embeddings
    waves = keras_hub.layers.SinePositionEncoding()(tf.zeros([1, *table.shape], tf.float32))[0]
    table.assign(tf.cast(waves * (stddev / tf.math.reduce_std(waves)), table.dtype))
