"""What a fine-tuning model takes from a pre-trained checkpoint: its backbone, vocabulary and tokenizer settings."""

def pretrained_backbone_and_tokenizer(preset, load_weights=True, vocab_file=None, do_lower_case=None,
                                      strip_accents=None):
    """(backbone, vocabulary file, `TokenizerSettings`) of the checkpoint at `preset` (any format
    `electra_tf.checkpoints.load_checkpoint` reads). `vocab_file` replaces the checkpoint's vocabulary;
    `do_lower_case` / `strip_accents` put other values over the casing it records; `load_weights=False` gives a
    freshly initialised backbone of the same architecture."""
    from electra_tf.checkpoints import DISCRIMINATOR, load_checkpoint
    from electra_tf.models.backbone import ElectraBackbone

    # A task model needs the encoder only: checkpoints without the replaced-token head (HF ElectraModel, keras-hub
    # backbones) are accepted.
    pretrained = load_checkpoint(preset, DISCRIMINATOR, allow_missing_head=True, argument="preset")
    tokenizer = pretrained.tokenizer(vocab_file, do_lower_case, strip_accents)
    backbone = pretrained.model.backbone
    if not load_weights:
        backbone = ElectraBackbone.from_config(backbone.get_config())
    return backbone, tokenizer.vocab_file, tokenizer.settings
