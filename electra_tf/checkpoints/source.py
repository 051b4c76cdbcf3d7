"""What every checkpoint format shares: its name, its `CheckpointFormat` (one detector, one reader, one writer) and
the `Source` its reader returns.

A `Source` holds the weights under the reference's variable names (`naming`) plus the hints the format carries, so
every pair of formats converts without a format-to-format special case. This module imports no format, so each format
module (`ours`, `huggingface`, `keras_hub`, `reference_tf1`) can build its `FORMAT` from it.
"""

import dataclasses
from typing import Callable

from electra_tf.checkpoint_formats import CHECKPOINT_FORMATS

OURS, TF1, HF, KERAS_HUB = CHECKPOINT_FORMATS


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
    kind: str = None  # the stored model kind, when the format says (ours)
    model: object = None  # the stored model itself, when the format holds one of ours (ours)
    stored_config: object = None  # an ElectraConfig carried along by a format that does not need it (HF)
    tokenizer_settings: object = None  # the TokenizerSettings the format records, if it does


@dataclasses.dataclass(frozen=True)
class CheckpointFormat:
    name: str
    description: str  # what a user finds at such a path; shown when no format matches
    detects: Callable  # path -> bool
    read: Callable  # (path, allow_embedding_mismatch) -> Source
    write: Callable  # (model, kind, path, vocab_file, tokenizer_settings) -> path
