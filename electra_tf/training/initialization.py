"""Starting pre-training from released or earlier weights (continued, domain-adaptive pre-training).

`read_initial_weights` reads any checkpoint `convert_checkpoint.py` reads (the reference's TF1 checkpoints, a Hugging
Face discriminator directory or discriminator/ + generator/ pair, a keras-hub preset, a pretrained directory or a run
of ours), optionally with a generator from a second checkpoint, and returns the run's configuration (the checkpoint's
architecture and generator sizes, the job's pre-training settings) with the weights to start from. Only weights are
taken: the optimizer and the step start fresh.
"""

import dataclasses
import os

from electra_tf.checkpoints.conversion import read_source, source_config
from electra_tf.checkpoints.matching import assign_weights, describe, has_head, network_sizes
from electra_tf.checkpoints.naming import (DISCRIMINATOR, EMBEDDINGS_SCOPE, GENERATOR, HEAD_SCOPES, NETWORK_SCOPES,
                                           PRETRAINER)
from electra_tf.config import ElectraArchitecture, ElectraConfig
from electra_tf.errors import CheckpointError, ConfigError, DataError
from electra_tf.tokenizer import vocab_fingerprint

_ARCHITECTURE_FIELDS = tuple(field.name for field in dataclasses.fields(ElectraArchitecture))
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


def _with_generator(source, generator_source):
    """`source`'s discriminator and embeddings with `generator_source`'s generator encoder and head."""
    if network_sizes(generator_source.weights, GENERATOR) is None or not has_head(generator_source.weights, GENERATOR):
        raise CheckpointError(f"init_generator_checkpoint={generator_source.path} holds "
                              f"{describe(generator_source.weights)}, not a generator with its MLM head",
                              arguments=("init_generator_checkpoint",))
    table, generator_table = source.weights.get(_WORD_EMBEDDINGS), generator_source.weights.get(_WORD_EMBEDDINGS)
    if table is not None and generator_table is not None and table.shape != generator_table.shape:
        raise CheckpointError(
            f"init_generator_checkpoint={generator_source.path} has word embeddings of shape {generator_table.shape} "
            f"but init_checkpoint={source.path} has {table.shape}: ELECTRA's generator shares the discriminator's "
            "embeddings, so it must come from the same pre-training run (or leave init_generator_checkpoint unset "
            "for a new generator)", arguments=("init_generator_checkpoint", "init_checkpoint"))
    weights = {name: value for name, value in source.weights.items() if not _is_generator_name(name)}
    weights.update({name: value for name, value in generator_source.weights.items() if _is_generator_name(name)})
    return dataclasses.replace(source, weights=weights, config=None, kind=None, generator_num_heads=(
        generator_source.generator_num_heads or generator_source.num_heads))


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
    rebuild = ("rebuild the data with data_prep/build_pretraining_dataset.py "
               f"--vocab_file={vocab_file or '<the checkpoint vocab.txt>'}")
    built_size = manifest.get("vocab_size")
    if built_size is not None and built_size != config.vocab_size:
        raise DataError(f"the data {data_patterns} was built with a vocabulary of {built_size} tokens (see its "
                        f"manifest.json) but init_checkpoint={init_checkpoint} has {config.vocab_size}: {rebuild}",
                        arguments=("init_checkpoint",))
    built_fingerprint = manifest.get("vocab_fingerprint")
    if vocab_file and built_fingerprint and vocab_fingerprint(vocab_file) != built_fingerprint:
        raise DataError(f"the data {data_patterns} was built with {manifest.get('vocab_file')} (see its "
                        f"manifest.json), not with {vocab_file}, the vocabulary of init_checkpoint={init_checkpoint}: "
                        f"{rebuild}",
                        arguments=("init_checkpoint",))


def read_initial_weights(init_checkpoint, job_config, *, init_generator_checkpoint=None, checkpoint_format="auto",
                         vocab_file=None, num_heads=None, architecture_overrides=None):
    """The `InitialWeights` of a run starting from `init_checkpoint`.

    Args:
        init_checkpoint: a checkpoint holding a discriminator (and possibly its generator), in any format
            `convert_checkpoint.py` reads.
        job_config: the `ElectraConfig` the job asks for; its pre-training settings are kept, its sizes are replaced
            by the checkpoint's.
        init_generator_checkpoint: a generator (e.g. a Hugging Face generator directory) to pair with a checkpoint
            holding only a discriminator; it must share its embedding shapes.
        checkpoint_format: auto, ours, tf1, hf or keras_hub.
        vocab_file: the vocabulary to use instead of the one found with the checkpoint.
        num_heads: the discriminator's attention heads, for formats that do not record them (default hidden // 64).
        architecture_overrides: ElectraArchitecture fields the job sets explicitly (e.g. dropout).
    """
    given = (("init_checkpoint", init_checkpoint), ("init_generator_checkpoint", init_generator_checkpoint))
    for argument, path in given:
        if path and not (os.path.exists(path) or os.path.exists(path + ".index")):
            raise CheckpointError(f"{argument}={path} does not exist: pass a checkpoint directory (a pretrained/ "
                                  "directory, a run's model_dir, a Hugging Face or keras-hub directory) or a TF1 "
                                  "checkpoint prefix (model.ckpt for model.ckpt.index)", arguments=(argument,))
    source = read_source(init_checkpoint, checkpoint_format)
    if init_generator_checkpoint:
        source = _with_generator(source, read_source(init_generator_checkpoint))
    if network_sizes(source.weights, DISCRIMINATOR) is None:
        raise CheckpointError(f"init_checkpoint={init_checkpoint} holds {describe(source.weights)}, not a "
                              "discriminator: continued pre-training starts from a discriminator (and its generator)",
                              arguments=("init_checkpoint",))
    has_generator = network_sizes(source.weights, GENERATOR) is not None and has_head(source.weights, GENERATOR)
    vocab_file = vocab_file or source.vocab_file
    checkpoint_config = source_config(source, PRETRAINER if has_generator else DISCRIMINATOR, num_heads, vocab_file)
    overrides = {name: value for name, value in (architecture_overrides or {}).items() if name in _ARCHITECTURE_FIELDS}
    config = _run_config(checkpoint_config, job_config, has_generator, overrides)
    if not config.reference_layout:
        raise ConfigError("init_checkpoint starts the reference's generator and discriminator; it does not combine "
                          f"with objective={config.objective}, untied_embeddings, uniform_generator, two_stage_steps "
                          "or embedding_sharing=gdes", arguments=("init_checkpoint",))
    return InitialWeights(path=init_checkpoint, config=config, weights=source.weights, has_generator=has_generator,
                          vocab_file=vocab_file,
                          tokenizer_settings=source.tokenizer_settings,
                          description=f"{init_checkpoint} ({source.format}: {describe(source.weights)})")
