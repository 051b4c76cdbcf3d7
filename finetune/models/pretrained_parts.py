"""What a fine-tuning model takes from a pre-trained checkpoint: its backbone, vocabulary and tokenizer settings."""

from electra_tf.checkpoints import DISCRIMINATOR
from electra_tf.models import load_checkpoint
from electra_tf.models.backbone import ElectraBackbone


def load_pretrained(init_checkpoint, argument="init_checkpoint", requested_by=None, **load_arguments):
    """The `LoadedModel` of the discriminator in the checkpoint at `init_checkpoint`: any format
    `electra_tf.models.load_checkpoint` reads (`argument`, `requested_by` and `load_arguments`, e.g.
    `vocab_file`, are its)."""
    # A task model needs the encoder only: checkpoints without the replaced-token head (HF ElectraModel, keras-hub
    # backbones) are accepted.
    return load_checkpoint(
        init_checkpoint,
        DISCRIMINATOR,
        allow_missing_head=True,
        argument=argument,
        requested_by=requested_by,
        **load_arguments,
    )


def pretrained_backbone(cls, preset, load_weights=True, **load_arguments):
    """The discriminator's backbone in the checkpoint at `preset`, for `cls.from_preset` (`load_arguments` are
    `load_pretrained`'s); `load_weights=False` gives a freshly initialised backbone of the same architecture."""
    return _backbone(_for_from_preset(cls, preset, load_arguments), load_weights)


def pretrained_backbone_and_tokenizer(
    cls, preset, load_weights=True, vocab_file=None, do_lower_case=None, strip_accents=None, **load_arguments
):
    """(backbone, vocabulary file, `TokenizerSettings`) of the checkpoint at `preset`, for `cls.from_preset` of a task
    model with a preprocessor (`load_arguments` are `load_pretrained`'s). `vocab_file` replaces the checkpoint's
    vocabulary; `do_lower_case` / `strip_accents` put other values over the casing it records."""
    pretrained = _for_from_preset(cls, preset, load_arguments)
    tokenizer = pretrained.tokenizer(vocab_file, do_lower_case, strip_accents)
    return _backbone(pretrained, load_weights), tokenizer.vocab_file, tokenizer.settings


def _for_from_preset(cls, preset, load_arguments):
    # Errors speak of `preset`, and a checkpoint without a discriminator (a generator alone) is refused naming
    # `cls.from_preset`.
    return load_pretrained(preset, "preset", f"{cls.__name__}.from_preset", **load_arguments)


def _backbone(pretrained, load_weights):
    backbone = pretrained.model.backbone
    return backbone if load_weights else ElectraBackbone.from_config(backbone.get_config())
