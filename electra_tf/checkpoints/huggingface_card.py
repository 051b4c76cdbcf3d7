"""The model card (README.md) written beside a network exported in Hugging Face transformers' format."""

from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR

MODEL_CARD_NAME = "README.md"


def model_card(config, network, architecture, config_key, tokenizer_settings=None):
    """The Hugging Face model card (README.md) of one network: what it is, its transformers `architecture`, the
    pre-training settings its config records (kept whole in config.json under `config_key`), how to load it, and the
    tokenizer's casing (None: no tokenizer files written)."""
    sizes = config.generator_architecture() if network == GENERATOR else config
    rows = [
        ("architecture", f"`{architecture}`"),
        ("layers", sizes.num_layers),
        ("hidden size", sizes.hidden_size),
        ("attention heads", sizes.num_heads),
        ("intermediate size", sizes.intermediate_size),
        ("embedding size", config.embedding_size),
        ("vocabulary", config.vocab_size),
        ("max positions", config.max_position_embeddings),
        ("activation", config.hidden_activation),
        ("objective", config.objective),
        ("mask rate", config.mask_prob),
        ("discriminator loss weight", config.disc_weight),
        ("generator training", config.generator_training),
    ]
    if tokenizer_settings is not None:
        rows.append(
            (
                "tokenizer",
                f"WordPiece, do_lower_case={tokenizer_settings.do_lower_case}, "
                f"strip_accents={tokenizer_settings.strip_accents}",
            )
        )
    role = (
        "the discriminator (replaced-token detection; fine-tune this one)"
        if network == DISCRIMINATOR
        else "the generator (a small masked language model)"
    )
    auto_class = "AutoModelForPreTraining" if network == DISCRIMINATOR else "AutoModelForMaskedLM"
    lines = [
        "---",
        "library_name: transformers",
        "tags:",
        "- electra",
        "- electra-tf",
        f"pipeline_tag: {'fill-mask' if network == GENERATOR else 'feature-extraction'}",
        "---",
        "",
        f"# ELECTRA {network}",
        "",
        f"An ELECTRA {role}, pre-trained and exported by electra-tf (TensorFlow 2 / Keras 3). The weights follow "
        "the reference implementation's variable layout, converted to transformers' names.",
        "",
        "| | |",
        "| --- | --- |",
        *[f"| {name} | {value} |" for name, value in rows],
        "",
        "```python",
        f"from transformers import {auto_class}, AutoTokenizer",
        "",
        'tokenizer = AutoTokenizer.from_pretrained("<this directory>")',
        f'model = {auto_class}.from_pretrained("<this directory>")',
        "```",
        "",
        "The full electra-tf configuration is kept in config.json under `" + config_key + "`; "
        "`electra-convert` reads the directory back.",
        "",
    ]
    if tokenizer_settings is None:
        lines += [
            "No vocabulary was given when this directory was written: add the `vocab.txt` the model was trained "
            "with before loading a tokenizer.",
            "",
        ]
    return "\n".join(lines)
