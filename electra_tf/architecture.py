"""The architecture of an ELECTRA network: what an `ElectraBackbone` is built from and every saved model carries."""

import dataclasses

from electra_tf.errors import ConfigError

BERT_UNCASED_VOCAB_SIZE = 30522
# The reference's exact (erf) GELU, or the tanh approximation (keras-hub's ELECTRA, Hugging Face's "gelu_new").
HIDDEN_ACTIVATIONS = ("gelu", "gelu_approximate")
# The architecture's sizes: positive integers, and the token-type table's, which may be 0 (no table).
POSITIVE_SIZES = (
    "vocab_size",
    "embedding_size",
    "hidden_size",
    "num_layers",
    "num_heads",
    "intermediate_size",
    "max_position_embeddings",
)
SIZES = POSITIVE_SIZES + ("type_vocab_size",)


def _check_integers(config, names, minimum=1, meaning=""):
    """ConfigError unless each field of `config` in `names` is an integer >= `minimum` (bools are not)."""
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
        _check_integers(self, POSITIVE_SIZES)
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
