"""The networks of pre-training: which ones a configuration has, built by one factory, checked when given."""

import dataclasses
from operator import attrgetter

import keras

from electra_tf.config import as_config
from electra_tf.errors import ConfigError
from electra_tf.layers import ElectraEmbeddings, ElectraMaskedLMHead
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.cloze_generator import TwoTowerClozeGenerator
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.generator import ElectraGenerator
from electra_tf.pretraining import objectives

FIX = "pass networks=build_pretraining_networks(config), or networks=None for the model to build its own"


@dataclasses.dataclass(frozen=True, kw_only=True)
class PretrainingNetworks:
    """What `ElectraPretrainingModel` trains, as `build_pretraining_networks` makes it for a config: the generator and
    the discriminator (the networks Model Garden's ELECTRA pre-trainer is given), with the embedding blocks and heads
    the variants add. A field is None for the variants that have no such network.

    Attributes:
        embeddings: the discriminator's `ElectraEmbeddings` ("embeddings"), shared with the generator unless it has its
            own (two-stage training copies the generator's into it when the second stage starts). Every variant.
        generator_embeddings: the generator's own `ElectraEmbeddings` ("generator_embeddings"): untied embeddings and
            two-stage training.
        discriminator: the `ElectraDiscriminator` on the `ElectraBackbone` "electra" over `embeddings`, with the
            config's architecture: the discriminator-sized network of every objective (the masked-LM objectives read
            its backbone's states).
        generator: an `ElectraGenerator` on its own `ElectraBackbone` "generator_backbone" over `generator_embeddings`
            (else `embeddings`), with `config.generator_architecture()`; under tie_all_weights an `ElectraGenerator`
            on the discriminator's backbone; for Electric a `TwoTowerClozeGenerator` over `embeddings`. None for
            objective=mlm and a uniform generator.
        word_embedding_delta: the [vocab_size, embedding_size] `keras.layers.Embedding` "word_embeddings_delta",
            zeros at first, which gradient-disentangled sharing adds to the generator's word table to give the
            discriminator's: embedding_sharing=gdes only.
        model_mlm_head: the `ElectraMaskedLMHead` "model_mlm_predictions" on the discriminator's states, over
            `embeddings`' word table: objectives with a masked-LM head (mlm, replace_mlm, all_tokens_mlm).
        copy_head: the 1-unit `keras.layers.Dense` "copy_prediction" on the discriminator's states: objectives with a
            copy head (all_tokens_mlm).
    """

    embeddings: ElectraEmbeddings
    generator_embeddings: ElectraEmbeddings | None = None
    discriminator: ElectraDiscriminator
    generator: ElectraGenerator | TwoTowerClozeGenerator | None = None
    word_embedding_delta: keras.layers.Embedding | None = None
    model_mlm_head: ElectraMaskedLMHead | None = None
    copy_head: keras.layers.Dense | None = None


def network_classes(config):
    """{field of `PretrainingNetworks`: the class of the network `config` (an `ElectraConfig`) has there, or None}:
    the one place that decides which networks a configuration has."""
    objective = objectives.get_objective(config.objective)
    generator = None
    if config.tie_all_weights:
        generator = ElectraGenerator
    elif objective.cloze_generator:
        generator = TwoTowerClozeGenerator
    elif config.has_generator_network:
        generator = ElectraGenerator
    return {
        "embeddings": ElectraEmbeddings,
        "generator_embeddings": ElectraEmbeddings if config.generator_has_own_embeddings else None,
        "discriminator": ElectraDiscriminator,
        "generator": generator,
        "word_embedding_delta": keras.layers.Embedding if config.embedding_sharing == "gdes" else None,
        "model_mlm_head": ElectraMaskedLMHead if objectives.MASKED_LM_HEAD in objective.heads else None,
        "copy_head": keras.layers.Dense if objectives.COPY_HEAD in objective.heads else None,
    }


def build_pretraining_networks(config, dtype=None):
    """New `PretrainingNetworks` for `config` (an `ElectraConfig` or its dict), every layer with the dtype policy
    `dtype` (None: Keras' global policy), built in the order the pre-training model tracks them."""
    config = as_config(config)
    classes = network_classes(config)
    embeddings = ElectraEmbeddings.for_architecture(config, dtype=dtype)
    generator_embeddings = None
    if classes["generator_embeddings"]:
        generator_embeddings = ElectraEmbeddings.for_architecture(config, dtype=dtype, name="generator_embeddings")
    discriminator = ElectraDiscriminator(
        ElectraBackbone(**config.architecture(), embeddings=embeddings, dtype=dtype, name="electra"),
        electra_config=config,
    )
    generator = None
    if classes["generator"] is TwoTowerClozeGenerator:
        generator = TwoTowerClozeGenerator(
            config.generator_architecture().architecture(), embeddings=embeddings, dtype=dtype
        )
    elif classes["generator"] is ElectraGenerator:
        if config.tie_all_weights:
            # The generator is the discriminator's backbone with its own MLM head.
            backbone = discriminator.backbone
        else:
            backbone = ElectraBackbone(
                **config.generator_architecture().architecture(),
                embeddings=generator_embeddings or embeddings,
                dtype=dtype,
                name="generator_backbone",
            )
        generator = ElectraGenerator(backbone, electra_config=config)
    word_embedding_delta = None
    if classes["word_embedding_delta"]:
        # E_delta starts at zero, so the discriminator starts from the generator's table.
        word_embedding_delta = keras.layers.Embedding(
            config.vocab_size,
            config.embedding_size,
            embeddings_initializer="zeros",
            dtype=dtype,
            name="word_embeddings_delta",
        )
        word_embedding_delta.build()
    model_mlm_head = None
    if classes["model_mlm_head"]:
        model_mlm_head = ElectraMaskedLMHead(
            embeddings.word_embeddings,
            config.layer_norm_epsilon,
            config.initializer_range,
            config.hidden_activation,
            dtype=dtype,
            name="model_mlm_predictions",
        )
        model_mlm_head.build((None, None, config.hidden_size))
    copy_head = None
    if classes["copy_head"]:
        # Glorot-uniform 1-unit layer, as the reference's heads.
        copy_head = keras.layers.Dense(1, dtype=dtype, name="copy_prediction")
        copy_head.build((None, None, config.hidden_size))
    return PretrainingNetworks(
        embeddings=embeddings,
        generator_embeddings=generator_embeddings,
        discriminator=discriminator,
        generator=generator,
        word_embedding_delta=word_embedding_delta,
        model_mlm_head=model_mlm_head,
        copy_head=copy_head,
    )


def check_pretraining_networks(networks, config, dtype_policy):
    """ConfigError naming the argument `networks` when they are not what `build_pretraining_networks(config,
    dtype_policy)` builds: a network missing or one too many, another class, other sizes, blocks not shared as the
    config shares them, another dtype policy."""
    if not isinstance(networks, PretrainingNetworks):
        _refuse(f"networks must be PretrainingNetworks, got {type(networks).__name__}")
    for field, expected in network_classes(config).items():
        network = getattr(networks, field)
        if not (isinstance(network, expected) if expected else network is None):
            found = "None" if network is None else type(network).__name__
            _refuse(f"networks.{field} must be {expected.__name__ if expected else None} for this config, got {found}")
    for path, expected in _architectures(networks, config):
        found = attrgetter(path)(networks).architecture()
        differing = [name for name in expected if found[name] != expected[name]]
        if differing:
            _refuse(
                f"networks.{path} has {', '.join(f'{name}={found[name]}' for name in differing)} but the config "
                f"needs {', '.join(f'{name}={expected[name]}' for name in differing)}"
            )
    for path, shared_path in _shared_blocks(networks, config):
        if attrgetter(path)(networks) is not attrgetter(shared_path)(networks):
            _refuse(f"networks.{path} must be networks.{shared_path}, one block under this config, not another")
    for path, expected in _variable_shapes(networks, config):
        try:
            found = list(attrgetter(path)(networks).shape)
        except AttributeError:
            found = "no variable (the layer is not built)"
        if found != list(expected):
            _refuse(f"networks.{path} must have the shape {list(expected)} for this config, got {found}")
    for field in dataclasses.fields(networks):
        network = getattr(networks, field.name)
        if network is not None and network.dtype_policy.name != dtype_policy.name:
            raise ConfigError(
                f"networks.{field.name} has the dtype policy {network.dtype_policy.name} but the model's is "
                f"{dtype_policy.name}; pass the model dtype={network.dtype_policy.name} (or none) or build the "
                f"networks with build_pretraining_networks(config, dtype={dtype_policy.name!r})",
                arguments=("networks", "dtype"),
            )


def _refuse(problem):
    raise ConfigError(f"{problem}; {FIX}", arguments=("networks",))


def _architectures(networks, config):
    """(path in `networks` of a backbone of their own, the architecture the config gives it)."""
    backbones = [("discriminator.backbone", config.architecture())]
    generator_architecture = config.generator_architecture().architecture()
    if isinstance(networks.generator, TwoTowerClozeGenerator):
        backbones += [
            ("generator.ltr_backbone", generator_architecture),
            ("generator.rtl_backbone", generator_architecture),
        ]
    elif networks.generator is not None and not config.tie_all_weights:
        backbones.append(("generator.backbone", generator_architecture))
    return backbones


def _shared_blocks(networks, config):
    """(path in `networks`, path of the layer the config has it be)."""
    shared = [("discriminator.backbone.embeddings", "embeddings")]
    if config.tie_all_weights:
        shared.append(("generator.backbone", "discriminator.backbone"))
    elif isinstance(networks.generator, TwoTowerClozeGenerator):
        shared.append(("generator.embeddings", "embeddings"))
    elif networks.generator is not None:
        own = config.generator_has_own_embeddings
        shared.append(("generator.backbone.embeddings", "generator_embeddings" if own else "embeddings"))
    if networks.model_mlm_head is not None:
        shared.append(("model_mlm_head.word_embeddings", "embeddings.word_embeddings"))
    return shared


def _variable_shapes(networks, config):
    """(path in `networks` of a variable the config sizes outside the backbones, its shape)."""
    shapes = {
        "word_embedding_delta.embeddings": (config.vocab_size, config.embedding_size),
        "model_mlm_head.dense.kernel": (config.hidden_size, config.embedding_size),
        "copy_head.kernel": (config.hidden_size, 1),
    }
    return [(path, shape) for path, shape in shapes.items() if getattr(networks, path.split(".")[0]) is not None]
