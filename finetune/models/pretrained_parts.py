"""What a fine-tuning model takes from a pre-trained checkpoint: its backbone, vocabulary and tokenizer settings."""


def pretrained_discriminator(cls, preset, format="auto", num_heads=None, allow_embedding_mismatch=False):
    """The `LoadedModel` of the discriminator in the checkpoint at `preset` (any format
    `electra_tf.checkpoints.load_checkpoint` reads; `format`, `num_heads` and `allow_embedding_mismatch` are its), for
    the task model `cls.from_preset`: a checkpoint without a discriminator (a generator alone) is refused naming
    `cls.from_preset`."""
    from electra_tf.checkpoints import DISCRIMINATOR
    from electra_tf.models.presets import loaded_checkpoint

    # A task model needs the encoder only: checkpoints without the replaced-token head (HF ElectraModel, keras-hub
    # backbones) are accepted.
    return loaded_checkpoint(cls, preset, DISCRIMINATOR, allow_missing_head=True, format=format, num_heads=num_heads,
                             allow_embedding_mismatch=allow_embedding_mismatch)


def pretrained_backbone(cls, preset, load_weights=True, **load_arguments):
    """The discriminator's backbone of `pretrained_discriminator(cls, preset, **load_arguments)`; `load_weights=False`
    gives a freshly initialised backbone of the same architecture."""
    return _backbone(pretrained_discriminator(cls, preset, **load_arguments), load_weights)


def pretrained_backbone_and_tokenizer(cls, preset, load_weights=True, vocab_file=None, do_lower_case=None,
                                      strip_accents=None, **load_arguments):
    """(backbone, vocabulary file, `TokenizerSettings`) of `pretrained_discriminator(cls, preset, **load_arguments)`
    for a task model with a preprocessor. `vocab_file` replaces the checkpoint's vocabulary; `do_lower_case` /
    `strip_accents` put other values over the casing it records."""
    pretrained = pretrained_discriminator(cls, preset, **load_arguments)
    tokenizer = pretrained.tokenizer(vocab_file, do_lower_case, strip_accents)
    return _backbone(pretrained, load_weights), tokenizer.vocab_file, tokenizer.settings


def _backbone(pretrained, load_weights):
    from electra_tf.models.backbone import ElectraBackbone

    backbone = pretrained.model.backbone
    return backbone if load_weights else ElectraBackbone.from_config(backbone.get_config())
