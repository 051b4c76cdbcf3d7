"""How a generator/discriminator pair is pre-trained: the objectives, the generator variants, which of them combine
(`CHOICE_EFFECTS`), and the `PretrainingSettings` dataclass."""

import dataclasses

from electra_tf.errors import ConfigError

OBJECTIVES = ("electra", "mlm", "electra_15", "replace_mlm", "all_tokens_mlm", "electric")
# Objectives with a replaced-token-detection discriminator: the generator variants of section 3.2 apply to them.
DISCRIMINATIVE_OBJECTIVES = ("electra", "electra_15")
GENERATOR_TRAINING = ("mle", "adversarial", "annealed")
EMBEDDING_SHARING = ("shared", "gdes")

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
