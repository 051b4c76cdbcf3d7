"""ELECTRA model configuration: `ElectraConfig` (the discriminator's architecture and the pre-training settings in one
dataclass), the paper's presets and the generator sizing rule."""

import dataclasses
import json

from electra_tf.architecture import ElectraArchitecture
from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_text
from electra_tf.pretraining_settings import PRETRAINING_FIELDS, PretrainingSettings


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
