"""What a fine-tuning model takes from a pre-trained checkpoint: its backbone, vocabulary and tokenizer settings."""

def pretrained_backbone_and_tokenizer(cls, preset, load_weights=True, vocab_file=None, do_lower_case=None,
                                      strip_accents=None):
    """(backbone, vocabulary file, `TokenizerSettings`) of the checkpoint at `preset` (any format
    `electra_tf.checkpoints.load_checkpoint` reads), for the task model `cls.from_preset`: a checkpoint without a
    discriminator (a generator alone) is refused naming `cls.from_preset`. `vocab_file` replaces the checkpoint's
    vocabulary; `do_lower_case` / `strip_accents` put other values over the casing it records; `load_weights=False`
    gives a freshly initialised backbone of the same architecture."""
    from electra_tf.checkpoints import DISCRIMINATOR
    from electra_tf.models.backbone import ElectraBackbone
    from electra_tf.models.presets import loaded_checkpoint

    # A task model needs the encoder only: checkpoints without the replaced-token head (HF ElectraModel, keras-hub
    # backbones) are accepted.
    pretrained = loaded_checkpoint(cls, preset, DISCRIMINATOR, allow_missing_head=True)
    tokenizer = pretrained.tokenizer(vocab_file, do_lower_case, strip_accents)
    backbone = pretrained.model.backbone
    if not load_weights:
        backbone = ElectraBackbone.from_config(backbone.get_config())
    return backbone, tokenizer.vocab_file, tokenizer.settings
