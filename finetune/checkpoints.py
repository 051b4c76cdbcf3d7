"""Loading the pre-trained discriminator that fine-tuning starts from, whatever format it was saved in.

`load_discriminator(path)` is the one entry point: `run_finetuning.py --init_checkpoint`, the Keras API
(`ElectraTextClassifier.from_pretrained`) and tests all go through it. Each supported format is a `CheckpointFormat`
in `CHECKPOINT_FORMATS`: a name, a test that recognises a path, and a loader. Supporting another format (for
example the reference's TF1 checkpoints or Hugging Face weights) means appending one entry; the first format whose
`matches` accepts the path loads it: our `save_pretrained` directories directly, everything `convert_checkpoint.py`
reads (reference TF1, Hugging Face, keras-hub, a pre-training run directory) through `electra_tf.checkpoints`.
"""

import dataclasses
import os
from typing import Callable, Optional

from electra_tf import pretrained
from electra_tf.checkpoints import presets
from electra_tf.errors import CheckpointError
from electra_tf.tokenizer import BERT_UNCASED, TokenizerSettings


@dataclasses.dataclass
class PretrainedDiscriminator:
    """A loaded discriminator, the vocabulary it was trained with (None if the checkpoint has none), its format and
    the tokenizer settings (casing, accents) it was trained with (BERT uncased where the checkpoint records none)."""

    model: object  # electra_tf.models.discriminator.ElectraDiscriminator
    vocab_file: Optional[str]
    format: str
    tokenizer_settings: TokenizerSettings = BERT_UNCASED


@dataclasses.dataclass(frozen=True)
class CheckpointFormat:
    name: str
    description: str  # how a user recognises or produces this format; shown when no format matches
    matches: Callable[[str], bool]
    load: Callable[[str], PretrainedDiscriminator]


def _is_save_pretrained_dir(path):
    return "discriminator" in (presets.preset_kind(path), presets.legacy_kind(path))


def _load_save_pretrained_dir(path):
    return PretrainedDiscriminator(pretrained.load_pretrained(path), presets.vocab_file_of(path), "electra_tf",
                                   pretrained.tokenizer_settings(path))


def _is_convertible(path):
    from electra_tf.checkpoints import conversion

    try:
        conversion.detect_format(path)
    except CheckpointError:
        return False
    return True


def _load_converted(path):
    from electra_tf.checkpoints import conversion

    # A classifier needs the encoder only, so checkpoints without the replaced-token head (HF ElectraModel, keras-hub
    # backbones) are accepted.
    loaded = conversion.load_model(path, kind="discriminator", allow_missing_head=True)
    return PretrainedDiscriminator(loaded.model, loaded.vocab_file, loaded.source_format,
                                   loaded.tokenizer_settings or BERT_UNCASED)


CHECKPOINT_FORMATS = [
    CheckpointFormat(
        name="electra_tf",
        description=f"a discriminator preset ({presets.CONFIG_NAME}, {presets.TASK_CONFIG_NAME}, weights and "
                    f"{presets.VOCAB_NAME}; run_pretraining.py writes one to <model_dir>/pretrained)",
        matches=_is_save_pretrained_dir,
        load=_load_save_pretrained_dir),
    CheckpointFormat(
        name="converted",
        description="a pre-training run's model_dir, a reference TF1 checkpoint prefix, a Hugging Face ELECTRA "
                    "directory (config.json + model.safetensors) or a keras-hub ElectraBackbone preset (see "
                    "convert_checkpoint.py)",
        matches=_is_convertible,
        load=_load_converted),
]


def checkpoint_exists(path):
    """Whether `path` names something to load: a file, a directory, or a TF1 checkpoint prefix (not itself a file;
    the released `electra_small/electra_small` is one)."""
    return bool(path) and (os.path.exists(path) or os.path.exists(path + ".index"))


def load_discriminator(path):
    """The pre-trained discriminator at `path` as a `PretrainedDiscriminator`; CheckpointError if none is there."""
    if not path:
        raise CheckpointError("no pre-trained checkpoint given: pass init_checkpoint=<model_dir>/pretrained "
                              "(written by run_pretraining.py)", arguments=("init_checkpoint",))
    if not checkpoint_exists(path):
        raise CheckpointError(f"pre-trained checkpoint {path} does not exist; pass init_checkpoint=<model_dir>/"
                              "pretrained (written by run_pretraining.py)", arguments=("init_checkpoint",))
    for checkpoint_format in CHECKPOINT_FORMATS:
        if checkpoint_format.matches(path):
            return checkpoint_format.load(path)
    known = "; ".join(f"{fmt.name}: {fmt.description}" for fmt in CHECKPOINT_FORMATS)
    raise CheckpointError(f"{path} is not a pre-trained checkpoint in a known format ({known})")
