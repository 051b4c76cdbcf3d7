"""What a fine-tuning model takes from a pre-trained checkpoint: its backbone, vocabulary and tokenizer settings."""

from electra_tf.errors import CheckpointError


def pretrained_backbone_and_tokenizer(preset, load_weights=True, vocab_file=None, do_lower_case=None,
                                      strip_accents=None):
    """(backbone, vocabulary file, `TokenizerSettings`) of the checkpoint at `preset` (any format
    `finetune.checkpoints` reads). `vocab_file` replaces the checkpoint's vocabulary; `do_lower_case` /
    `strip_accents` put other values over the casing it records; `load_weights=False` gives a freshly initialised
    backbone of the same architecture."""
    from electra_tf.models.backbone import ElectraBackbone
    from finetune.checkpoints import load_discriminator

    pretrained = load_discriminator(preset)
    backbone = pretrained.model.backbone
    if not load_weights:
        backbone = ElectraBackbone.from_config(backbone.get_config())
    vocab_file = vocab_file or pretrained.vocab_file
    if not vocab_file:
        raise CheckpointError(f"{preset} holds no vocabulary: pass vocab_file=<the vocab.txt it was trained with>",
                              arguments=("vocab_file",))
    return backbone, vocab_file, pretrained.tokenizer_settings.overridden(do_lower_case, strip_accents)
