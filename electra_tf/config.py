"""ELECTRA model configuration: a dataclass, the paper's presets and the generator sizing rule."""

import dataclasses
import json

from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_text

BERT_UNCASED_VOCAB_SIZE = 30522

OBJECTIVES = ("electra", "mlm", "electra_15", "replace_mlm", "all_tokens_mlm", "electric")
# Objectives with a replaced-token-detection discriminator: the generator variants of section 3.2 apply to them.
DISCRIMINATIVE_OBJECTIVES = ("electra", "electra_15")
GENERATOR_TRAINING = ("mle", "adversarial", "annealed")
EMBEDDING_SHARING = ("shared", "gdes")
# The reference's exact (erf) GELU, or the tanh approximation (keras-hub's ELECTRA, Hugging Face's "gelu_new").
HIDDEN_ACTIVATIONS = ("gelu", "gelu_approximate")

# What each choice of objective and generator variant makes of the generator/discriminator pair, aspect by aspect:
# two choices that need one aspect to be different things cannot be combined. The defaults (generator_training=mle,
# embedding_sharing=shared, no variant) fix nothing, and every objective but `mlm` leaves the generator open.
_NETWORK = "the generator is a network"
_DETECTION = "the discriminator detects replaced tokens"
_ADVERSARIAL = {
    "generator": _NETWORK,
    "generator loss": "the generator maximises the discriminator's loss",
    "discriminator": _DETECTION,
}
CHOICE_EFFECTS = {
    "objective=electra": {"discriminator": _DETECTION},
    "objective=electra_15": {"discriminator": _DETECTION},
    "objective=mlm": {
        "generator": "there is no generator",
        "discriminator": "the discriminator-sized network predicts the [MASK]ed tokens",
    },
    "objective=replace_mlm": {"discriminator": "the discriminator-sized network predicts the replaced tokens"},
    "objective=all_tokens_mlm": {"discriminator": "the discriminator-sized network predicts every token"},
    "objective=electric": {
        "generator": "the generator is a two-tower cloze model",
        "embeddings": "the generator's towers share the discriminator's embedding block",
        "generator loss": "the generator is trained by maximum likelihood on every token",
        "discriminator": "the discriminator gives energies trained by noise-contrastive estimation",
    },
    "uniform_generator": {"generator": "uniform samples replace the generator network"},
    "tie_all_weights": {
        "generator": _NETWORK,
        "embeddings": "the generator is the discriminator's encoder",
        "discriminator": _DETECTION,
    },
    "untied_embeddings": {"generator": _NETWORK, "embeddings": "the generator has its own embedding block"},
    "two_stage_steps": {
        "generator": _NETWORK,
        "embeddings": "the generator has its own embedding block",
        "generator loss": "the generator is trained alone first, by maximum likelihood",
        "discriminator": _DETECTION,
    },
    "generator_training=adversarial": _ADVERSARIAL,
    "generator_training=annealed": _ADVERSARIAL,
    "embedding_sharing=gdes": {
        "generator": _NETWORK,
        "discriminator": _DETECTION,
        "embeddings": "the discriminator's word table is the generator's plus its own delta",
    },
}
CHOICE_ARGUMENTS = (
    "objective",
    "uniform_generator",
    "tie_all_weights",
    "untied_embeddings",
    "two_stage_steps",
    "generator_training",
    "embedding_sharing",
)
# Choices that are on or off (two_stage_steps: on when positive).
BOOLEAN_CHOICES = ("uniform_generator", "tie_all_weights", "untied_embeddings", "two_stage_steps")


def _conflict(first, second):
    """(what `first` makes of the pair, what `second` makes of it) on the first aspect they disagree on, or None."""
    for aspect, effect in CHOICE_EFFECTS[first].items():
        other = CHOICE_EFFECTS[second].get(aspect, effect)
        if other != effect:
            return effect, other
    return None


def _combination_fix(first_argument, second_argument, second):
    """How to resolve a conflict: reset one argument to its default, or (against the objective) pick an objective that
    fits the variant `second`."""
    defaults = {field.name: field.default for field in dataclasses.fields(PretrainingSettings)}
    reset = f"set {second_argument}={defaults[second_argument]}"
    if first_argument != "objective":
        return f"{reset} or {first_argument}={defaults[first_argument]}"
    fitting = [f"objective={objective}" for objective in OBJECTIVES if not _conflict(f"objective={objective}", second)]
    return f"{reset} or use {' or '.join(fitting)}"


def _check_integers(config, names, minimum=1, meaning=""):
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}{meaning}"
            raise ConfigError(f"{type(config).__name__}.{name} must be {kind}, got {value!r}", arguments=(name,))


@dataclasses.dataclass
class ElectraArchitecture:
    """What an `ElectraBackbone` needs, nothing else: its fields are the backbone's keyword arguments, and every saved
    model (a `pretrained/` preset's `config.json`) carries them. Defaults: ELECTRA-Small's discriminator with BERT's
    uncased vocabulary.

    `hidden_activation`: "gelu" is the reference's exact (erf) GELU, "gelu_approximate" the tanh form of keras-hub's
    and some Hugging Face ELECTRAs.

    `type_vocab_size`: 0 builds the embedding block without a token-type table, as DistilBERT's (segment ids ignored;
    docs/cpu_budget.md says why); formats that always hold the table receive one of zeros.

    `alibi`: every attention adds ALiBi's bias -slope(head) * |query position - key position| to its scores, as the
    bidirectional MosaicBERT does, on top of the learned position table (`electra_tf.layers.alibi_attention_bias`);
    not in the paper (docs/cpu_budget.md says why). Only this project's own format holds such a model (Hugging Face,
    keras-hub and the reference's TF1 checkpoints have no place for the setting).
    """

    vocab_size: int = BERT_UNCASED_VOCAB_SIZE
    embedding_size: int = 128
    hidden_size: int = 256
    num_layers: int = 12
    num_heads: int = 4
    intermediate_size: int = 1024
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    hidden_dropout: float = 0.1
    attention_dropout: float = 0.1
    layer_norm_epsilon: float = 1e-12
    initializer_range: float = 0.02
    hidden_activation: str = "gelu"
    alibi: bool = False

    def __post_init__(self):
        self.validate()

    def validate(self):
        _check_integers(
            self,
            (
                "vocab_size",
                "embedding_size",
                "hidden_size",
                "num_layers",
                "num_heads",
                "intermediate_size",
                "max_position_embeddings",
            ),
        )
        _check_integers(self, ("type_vocab_size",), minimum=0, meaning=" (0: no token-type table)")
        if self.hidden_size % self.num_heads:
            raise ConfigError(
                f"{type(self).__name__}.hidden_size={self.hidden_size} is not divisible by num_heads={self.num_heads}; "
                f"choose num_heads among the divisors of hidden_size (e.g. {self.hidden_size // 64 or 1})",
                arguments=("num_heads", "hidden_size"),
            )
        for name in ("hidden_dropout", "attention_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(
                    f"{type(self).__name__}.{name} must be in [0, 1), got {getattr(self, name)!r}", arguments=(name,)
                )
        if not isinstance(self.alibi, bool):
            raise ConfigError(
                f"{type(self).__name__}.alibi must be True or False, got {self.alibi!r}", arguments=("alibi",)
            )
        if self.hidden_activation not in HIDDEN_ACTIVATIONS:
            raise ConfigError(
                f"unknown hidden_activation {self.hidden_activation!r}; choose one of {list(HIDDEN_ACTIVATIONS)}",
                arguments=("hidden_activation",),
            )

    def architecture(self):
        """The architecture as a dict: the keyword arguments of `ElectraBackbone`."""
        return {name: getattr(self, name) for name in ARCHITECTURE_FIELDS}

    def check_sequence_length(self, max_seq_length):
        """ConfigError when sequences of `max_seq_length` do not fit the position-embedding table."""
        if max_seq_length > self.max_position_embeddings:
            raise ConfigError(
                f"max_seq_length={max_seq_length} exceeds the model's max_position_embeddings="
                f"{self.max_position_embeddings}; use max_seq_length<={self.max_position_embeddings}",
                arguments=("max_seq_length",),
            )

    def check_vocabulary(self, vocab_size, vocab_file):
        """ConfigError when the vocabulary in `vocab_file` (of `vocab_size` tokens) is not the model's."""
        if vocab_size != self.vocab_size:
            raise ConfigError(
                f"{vocab_file} has {vocab_size} tokens but the model's vocabulary has {self.vocab_size}: "
                "pass the vocab.txt the model was trained with (vocab_file)",
                arguments=("vocab_file",),
            )


ARCHITECTURE_FIELDS = tuple(field.name for field in dataclasses.fields(ElectraArchitecture))


@dataclasses.dataclass
class PretrainingSettings:
    """How a generator/discriminator pair is pre-trained: the generator's size relative to the discriminator, the
    masking, the loss weights, the objective and the generator variants of the paper's analysis (Table 5, section
    3.2), and the special token ids of the data's vocabulary. A run's `<model_dir>/config.json` records them with the
    architecture (`ElectraConfig`); saved models do not carry them.

    `objective` (see `pretraining.objectives`), `untied_embeddings` (the generator gets its own embedding block),
    `tie_all_weights` (the generator *is* the discriminator's encoder, with its own MLM head), `uniform_generator` (no
    generator network: uniform samples), `two_stage_steps` (train the generator alone for that many steps, then the
    discriminator initialised from it), `generator_training` ("mle"; "adversarial": the generator maximises the
    discriminator loss through a Gumbel-softmax relaxation annealed from `adversarial_temperature_start` to `_end`;
    "annealed": the generator's loss moves linearly from maximum likelihood at step 0 to the adversarial objective at
    `generator_annealing_steps`, default the whole run), `sampling_warmup_steps` (the replacements move from uniform
    samples at step 0 to the generator's own distribution at that step: its logits are scaled by step / steps; 0: the
    generator's distribution from the start, as the paper), `sinusoidal_position_init` (the learned position table
    starts from sine/cosine waves scaled to the initializer's standard deviation instead of random values, so that
    the offset between two positions is a linear function of their vectors from step 0)
    and `embedding_sharing` ("shared", or "gdes": DeBERTaV3's gradient-disentangled sharing of the word table).
    Which of them combine follows from `CHOICE_EFFECTS`: what each makes of the generator/discriminator pair.
    """

    generator_hidden_fraction: float = 0.25
    generator_layers_fraction: float = 1.0

    mask_prob: float = 0.15
    mask_token_fraction: float = 0.85  # of the chosen positions, share replaced by [MASK]; the rest keep their token
    disc_weight: float = 50.0
    gen_weight: float = 1.0
    temperature: float = 1.0

    objective: str = "electra"
    untied_embeddings: bool = False
    tie_all_weights: bool = False
    uniform_generator: bool = False
    two_stage_steps: int = 0
    generator_training: str = "mle"
    adversarial_temperature_start: float = 1.0
    adversarial_temperature_end: float = 0.1
    generator_annealing_steps: int = 0  # generator_training="annealed": steps until the adversarial loss; 0 = the run
    sampling_warmup_steps: int = 0
    sinusoidal_position_init: bool = False
    embedding_sharing: str = "shared"

    pad_id: int = 0
    unk_id: int = 100
    cls_id: int = 101
    sep_id: int = 102
    mask_id: int = 103

    def __post_init__(self):
        self.validate()

    def validate(self):
        name = type(self).__name__
        if not 0.0 < self.mask_prob < 1.0:
            raise ConfigError(f"{name}.mask_prob must be in (0, 1), got {self.mask_prob!r}", arguments=("mask_prob",))
        if not 0.0 <= self.mask_token_fraction <= 1.0:
            raise ConfigError(
                f"{name}.mask_token_fraction must be in [0, 1], got {self.mask_token_fraction!r}",
                arguments=("mask_token_fraction",),
            )
        for fraction in ("generator_hidden_fraction", "generator_layers_fraction"):
            if not 0.0 < getattr(self, fraction) <= 1.0:
                raise ConfigError(
                    f"{name}.{fraction} must be in (0, 1], got {getattr(self, fraction)!r}", arguments=(fraction,)
                )
        if self.temperature <= 0:
            raise ConfigError(
                f"{name}.temperature must be positive, got {self.temperature!r}", arguments=("temperature",)
            )
        self._validate_objective()

    def _validate_objective(self):
        choices = {
            "objective": OBJECTIVES,
            "generator_training": GENERATOR_TRAINING,
            "embedding_sharing": EMBEDDING_SHARING,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"unknown {name} {getattr(self, name)!r}; choose one of {list(allowed)}", arguments=(name,)
                )
        if not isinstance(self.two_stage_steps, int) or self.two_stage_steps < 0:
            raise ConfigError(
                f"{type(self).__name__}.two_stage_steps must be a non-negative integer, got {self.two_stage_steps!r}",
                arguments=("two_stage_steps",),
            )
        if not 0 < self.adversarial_temperature_end <= self.adversarial_temperature_start:
            raise ConfigError(
                "the adversarial Gumbel-softmax temperature must satisfy 0 < end <= start, got "
                f"adversarial_temperature_start={self.adversarial_temperature_start!r}, "
                f"adversarial_temperature_end={self.adversarial_temperature_end!r}",
                arguments=("adversarial_temperature_start", "adversarial_temperature_end"),
            )
        if not isinstance(self.sampling_warmup_steps, int) or self.sampling_warmup_steps < 0:
            raise ConfigError(
                f"{name}.sampling_warmup_steps must be a non-negative integer, got {self.sampling_warmup_steps!r}",
                arguments=("sampling_warmup_steps",),
            )
        if not isinstance(self.generator_annealing_steps, int) or self.generator_annealing_steps < 0:
            raise ConfigError(
                f"{type(self).__name__}.generator_annealing_steps must be a non-negative integer, got "
                f"{self.generator_annealing_steps!r}",
                arguments=("generator_annealing_steps",),
            )
        self._check_combinations()

    def _check_combinations(self):
        """ConfigError naming the first two chosen objective/variants that `CHOICE_EFFECTS` says disagree."""
        chosen = []  # (argument, label) in CHOICE_ARGUMENTS' order; the defaults have no label in the table
        for argument in CHOICE_ARGUMENTS:
            value = getattr(self, argument)
            label = (argument if value else None) if argument in BOOLEAN_CHOICES else f"{argument}={value}"
            if label in CHOICE_EFFECTS:
                chosen.append((argument, label))
        for index, (first_argument, first) in enumerate(chosen):
            for second_argument, second in chosen[index + 1 :]:
                conflict = _conflict(first, second)
                if conflict:
                    fix = _combination_fix(first_argument, second_argument, second)
                    raise ConfigError(
                        f"{first} and {second} cannot be combined: with {first} {conflict[0]}, with "
                        f"{second} {conflict[1]}; {fix}",
                        arguments=(first_argument, second_argument),
                    )

    # ----------------------------------------------------------------- what the variants build
    @property
    def has_generator_network(self):
        """Whether pre-training builds a generator network (not for `mlm` nor for a uniform generator)."""
        return self.objective != "mlm" and not self.uniform_generator

    @property
    def reference_layout(self):
        """Whether the pre-training model has the reference's variables (one shared embedding block, a generator and a
        discriminator with their heads), so that it converts to the reference's checkpoints (and, but for Electric's
        two-tower generator, to Hugging Face's)."""
        return not self.non_reference_choices()

    def non_reference_choices(self):
        """The chosen objective and variants, labelled as in `CHOICE_EFFECTS`, that give the pre-training model
        variables other than the reference's: none exactly when `reference_layout`."""
        labels = [] if self.objective in (*DISCRIMINATIVE_OBJECTIVES, "electric") else [f"objective={self.objective}"]
        # A generator without a network, or with an embedding block of its own.
        labels += [
            name for name in ("uniform_generator", "untied_embeddings", "two_stage_steps") if getattr(self, name)
        ]
        if self.embedding_sharing != "shared":
            labels.append(f"embedding_sharing={self.embedding_sharing}")
        return labels

    @property
    def generator_has_own_embeddings(self):
        """Whether the generator has an embedding block of its own: untied, or two-stage training's (copied into the
        discriminator's when the second stage starts)."""
        return self.untied_embeddings or self.two_stage_steps > 0

    @property
    def generator_learns_adversarially(self):
        """Whether the discriminator's loss reaches the generator with its sign reversed (generator_training
        adversarial, or annealed towards it)."""
        return self.generator_training in ("adversarial", "annealed")

    @property
    def generator_learns_by_likelihood(self):
        """Whether the generator's MLM loss is in the training loss (under generator_training=annealed with a weight
        that falls to 0)."""
        return self.generator_training != "adversarial"

    @property
    def generator_same_size(self):
        """The variants whose generator has the discriminator's sizes whatever the fractions say."""
        return self.tie_all_weights or self.two_stage_steps > 0

    def max_predictions_per_seq(self, max_seq_length):
        """N of the reference: int((mask_prob + 0.005) x max_seq_length), 19 at 128 / 0.15."""
        return int((self.mask_prob + 0.005) * max_seq_length)


PRETRAINING_FIELDS = tuple(field.name for field in dataclasses.fields(PretrainingSettings))


@dataclasses.dataclass
class ElectraConfig(PretrainingSettings, ElectraArchitecture):
    """A pre-training run's configuration: the discriminator's `ElectraArchitecture` and the `PretrainingSettings`,
    as one flat dataclass (fields of both, architecture first), with the paper's presets (`from_preset`).

    The generator's architecture derives from the discriminator's with the reference's rule
    (`generator_architecture()`): hidden = round(hidden_size x generator_hidden_fraction), FFN = 4 x hidden,
    heads = max(1, hidden // 64), same depth unless `generator_layers_fraction` < 1. With `alibi` the generator keeps
    the discriminator's head count (narrower heads) when its width allows: ALiBi gives each head one slope, and a single
    head gets the shallowest (2^-8, a bias of -0.5 across 128 tokens), which leaves a one-head generator blind to
    word order.

    Special token ids default to the BERT uncased vocabulary; `with_vocab()` replaces them from a vocabulary file.
    """

    def validate(self):
        ElectraArchitecture.validate(self)
        PretrainingSettings.validate(self)
        for name in ("pad_id", "unk_id", "cls_id", "sep_id", "mask_id"):
            token_id = getattr(self, name)
            if not 0 <= token_id < self.vocab_size:
                raise ConfigError(
                    f"ElectraConfig.{name}={token_id} is outside the vocabulary (vocab_size="
                    f"{self.vocab_size}); pass the vocabulary the data was built with (vocab_file)",
                    arguments=("vocab_file",),
                )

    @classmethod
    def from_parts(cls, architecture, settings=None):
        """The run configuration of an `ElectraArchitecture` (or its dict) and `PretrainingSettings` (default: the
        reference's)."""
        architecture = architecture if isinstance(architecture, dict) else dataclasses.asdict(architecture)
        settings = dataclasses.asdict(settings or PretrainingSettings())
        return cls(**architecture, **settings)

    def architecture_config(self):
        """The discriminator's `ElectraArchitecture`."""
        return ElectraArchitecture(**self.architecture())

    def pretraining_settings(self):
        """The `PretrainingSettings` half of this configuration."""
        return PretrainingSettings(**{name: getattr(self, name) for name in PRETRAINING_FIELDS})

    def generator_architecture(self):
        """The generator's `ElectraArchitecture`: the discriminator's with the sizing rule's hidden size, depth, heads
        and FFN (the discriminator's own under `generator_same_size`); embeddings, vocabulary and dropouts shared."""
        architecture = self.architecture_config()
        if self.generator_same_size:
            return architecture
        hidden = max(1, int(round(self.hidden_size * self.generator_hidden_fraction)))
        num_heads = max(1, hidden // 64)
        if self.alibi and hidden % self.num_heads == 0:
            num_heads = max(num_heads, self.num_heads)
        return dataclasses.replace(
            architecture,
            hidden_size=hidden,
            num_heads=num_heads,
            intermediate_size=4 * hidden,
            num_layers=max(1, int(round(self.num_layers * self.generator_layers_fraction))),
        )

    # ----------------------------------------------------------------- (de)serialisation
    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values):
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown ElectraConfig field(s) {unknown}; known fields: {sorted(known)}")
        return cls(**values)

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text):
        return cls.from_dict(json.loads(text))

    def save(self, path):
        """Write the config as JSON, atomically."""
        atomic_write_text(path, self.to_json() + "\n")

    @classmethod
    def load(cls, path):
        try:
            with open(path, encoding="utf-8") as handle:
                return cls.from_json(handle.read())
        except FileNotFoundError as error:
            raise ConfigError(f"model config {path} does not exist") from error
        except json.JSONDecodeError as error:
            raise ConfigError(f"model config {path} is not valid JSON: {error}") from error

    def with_vocab(self, vocab_size, **special_ids):
        """A copy with the vocabulary size and special token ids of another vocabulary."""
        return dataclasses.replace(self, vocab_size=vocab_size, **special_ids)

    @classmethod
    def from_preset(cls, name, **overrides):
        if name not in PRESETS:
            raise ConfigError(f"unknown model size {name!r}; choose one of {sorted(PRESETS)}")
        return dataclasses.replace(PRESETS[name], **overrides)


# Discriminator sizes of the paper (Table 6 / reference configure_pretraining.py); generator fractions as released.
PRESETS = {
    "tiny": ElectraConfig(
        embedding_size=64,
        hidden_size=128,
        num_layers=2,
        num_heads=2,
        intermediate_size=512,
        max_position_embeddings=512,
        generator_hidden_fraction=0.25,
    ),
    # Not the paper's: ELECTRA-Small's width at half its depth, for pre-training on a few CPU cores (configs/cpu.flags),
    # with what docs/cpu_budget.md measured to let so short a run read word order: ALiBi, embeddings as wide as the
    # hidden states (no projection), no token-type table, no dropout; the paper's quarter-width generator.
    "cpu": ElectraConfig(
        embedding_size=256,
        hidden_size=256,
        num_layers=6,
        num_heads=4,
        intermediate_size=1024,
        generator_hidden_fraction=0.25,
        type_vocab_size=0,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        alibi=True,
    ),
    "small": ElectraConfig(
        embedding_size=128,
        hidden_size=256,
        num_layers=12,
        num_heads=4,
        intermediate_size=1024,
        generator_hidden_fraction=0.25,
    ),
    "small++": ElectraConfig(
        embedding_size=128,
        hidden_size=256,
        num_layers=12,
        num_heads=4,
        intermediate_size=1024,
        generator_hidden_fraction=1.0,
    ),
    "base": ElectraConfig(
        embedding_size=768,
        hidden_size=768,
        num_layers=12,
        num_heads=12,
        intermediate_size=3072,
        generator_hidden_fraction=1.0 / 3.0,
    ),
    "large": ElectraConfig(
        embedding_size=1024,
        hidden_size=1024,
        num_layers=24,
        num_heads=16,
        intermediate_size=4096,
        generator_hidden_fraction=0.25,
        mask_prob=0.25,
    ),
}


def as_config(config):
    """An `ElectraConfig` from a config or its dict (as found in `get_config()`)."""
    return config if isinstance(config, ElectraConfig) else ElectraConfig.from_dict(dict(config))
