"""The ElectraConfig a checkpoint was trained with, read off its variable shapes.

Shapes give the vocabulary, embedding size, hidden size, depth and FFN size of each network. The number of attention
heads is not stored in a reference checkpoint (the projections are [H, H]); it defaults to the reference's H // 64
and can be overridden. Our `ElectraGenerator` derives its sizes from the discriminator's config (hidden = round(H x
f), FFN = 4 x hidden, heads = max(1, hidden // 64)), so a generator that breaks that rule cannot be represented and
is refused here rather than loaded wrongly.
"""

import numpy as np

from electra_tf.architecture import SIZES
from electra_tf.checkpoints.matching import cloze_generator_sizes, counterpart_name, describe, network_sizes
from electra_tf.checkpoints.naming import DISCRIMINATOR, EMBEDDINGS_SCOPE, GENERATOR, NETWORK_SCOPES, PRETRAINER
from electra_tf.checkpoints.tokenizer_files import NO_VOCABULARY
from electra_tf.config import ElectraConfig
from electra_tf.errors import CheckpointError, ConfigError, DataError
from electra_tf.tokenizer import load_vocab

SPECIAL_TOKENS = {"pad_id": "[PAD]", "unk_id": "[UNK]", "cls_id": "[CLS]", "sep_id": "[SEP]", "mask_id": "[MASK]"}
# Sizes come from the checkpoint; everything else (dropout, masking, special ids) may come from a stored config.
SIZE_FIELDS = SIZES + ("generator_hidden_fraction", "generator_layers_fraction")


def default_num_heads(hidden_size):
    """The reference's rule (64-wide heads), as used for every released model."""
    return max(1, hidden_size // 64)


def special_token_ids(vocab_file, vocab_size, source):
    """{pad_id, ...} from `vocab_file`; BERT's ids when there is none and the vocabulary is BERT-sized."""
    if vocab_file:
        try:
            vocab = load_vocab(vocab_file)
        except DataError as error:
            raise CheckpointError(str(error)) from error
        if len(vocab) != vocab_size:
            raise CheckpointError(
                f"{vocab_file} has {len(vocab)} tokens but {source} has a vocabulary of "
                f"{vocab_size}: pass the vocab.txt the checkpoint was trained with"
            )
        index = {token: i for i, token in enumerate(vocab)}
        missing = [token for token in SPECIAL_TOKENS.values() if token not in index]
        if missing:
            raise CheckpointError(f"{vocab_file} lacks the special tokens {' '.join(missing)}")
        return {field: index[token] for field, token in SPECIAL_TOKENS.items()}
    defaults = ElectraConfig()
    ids = {field: getattr(defaults, field) for field in SPECIAL_TOKENS}
    if max(ids.values()) >= vocab_size:
        raise CheckpointError(
            f"{source} has an embedding table of {vocab_size} tokens, too few for BERT's special "
            f"token ids, and no tokenizer to give them ({NO_VOCABULARY}): pass "
            "vocab_file=<the vocab.txt it was trained with>",
            arguments=("vocab_file",),
            without_flag={
                "vocab_file": "write a copy that holds it once, electra-convert "
                f"--from={source} --to=<new directory> --vocab_file=<vocab.txt>, and "
                "use that directory"
            },
        )
    return ids


def _embedding_sizes(weights, source):
    word = weights.get(f"{EMBEDDINGS_SCOPE}/word_embeddings")
    if word is None:
        raise CheckpointError(
            f"{source}: variable {EMBEDDINGS_SCOPE}/word_embeddings is missing: the checkpoint "
            f"holds {describe(weights)}; is it an ELECTRA checkpoint?"
        )
    position = weights.get(f"{EMBEDDINGS_SCOPE}/position_embeddings")
    token_type = weights.get(f"{EMBEDDINGS_SCOPE}/token_type_embeddings")
    return {
        "vocab_size": int(word.shape[0]),
        "embedding_size": int(word.shape[1]),
        "max_position_embeddings": int(position.shape[0]) if position is not None else 512,
        "type_vocab_size": _type_vocab_size(token_type),
    }


def _type_vocab_size(token_type):
    """The table's rows; a table of zeros adds nothing and is what a block without one is stored as."""
    if token_type is None:
        return ElectraConfig.type_vocab_size
    return int(token_type.shape[0]) if np.any(token_type) else 0


def _require(sizes, network, kind, weights, source):
    if sizes is None:
        name = f"{NETWORK_SCOPES[network]}/encoder/layer_0/attention/output/dense/kernel"
        other = GENERATOR if network == DISCRIMINATOR else DISCRIMINATOR
        counterpart = counterpart_name(name, other)
        seen = f"; its {counterpart} has shape {tuple(weights[counterpart].shape)}" if counterpart in weights else ""
        hint = f" (use kind={other})" if seen and kind != PRETRAINER else ""
        raise CheckpointError(
            f"{source}: variable {name} is missing: this checkpoint holds {describe(weights)}{seen}, "
            f"but a {kind} was requested{hint}",
            arguments=("kind",),
        )
    return sizes


def _check_generator_rule(config, generator, generator_heads, source):
    derived = config.generator_architecture()
    wanted = {
        "hidden_size": generator["hidden"],
        "num_layers": generator["layers"],
        "intermediate_size": generator["intermediate"],
        "num_heads": generator_heads,
    }
    for field, value in wanted.items():
        if getattr(derived, field) != value:
            raise CheckpointError(
                f"{source}: the generator has {field}={value} but our generator sizing rule gives "
                f"{getattr(derived, field)} (FFN = 4 x hidden, heads = max(1, hidden // 64)); "
                "ElectraGenerator cannot represent this generator"
            )


def infer_config(weights, kind, source, num_heads=None, generator_num_heads=None, vocab_file=None, base=None):
    """The ElectraConfig for loading `weights` as a `kind` model.

    `num_heads`: the discriminator's heads (default H // 64); `generator_num_heads` is only checked against the
    sizing rule. `base`: an ElectraConfig or dict whose non-size fields (dropout, epsilon, masking) are kept.
    """
    values = dict(base.to_dict() if isinstance(base, ElectraConfig) else (base or {}))
    for field in SIZE_FIELDS:
        values.pop(field, None)
    values.update(_embedding_sizes(weights, source))
    if vocab_file or not all(field in values for field in SPECIAL_TOKENS):
        values.update(special_token_ids(vocab_file, values["vocab_size"], source))
    discriminator = network_sizes(weights, DISCRIMINATOR)
    generator = network_sizes(weights, GENERATOR)
    towers = cloze_generator_sizes(weights)
    if towers is not None and generator is None:
        # An Electric checkpoint: its discriminator's head gives energies, its generator is the two-tower cloze model.
        values["objective"] = "electric"
        generator = towers
    if kind == GENERATOR:
        generator = _require(generator, GENERATOR, kind, weights, source)
        heads = generator_num_heads or default_num_heads(generator["hidden"])
        values.update(
            hidden_size=generator["hidden"],
            num_layers=generator["layers"],
            num_heads=heads,
            intermediate_size=generator["intermediate"],
            generator_hidden_fraction=1.0,
            generator_layers_fraction=1.0,
        )
    else:
        discriminator = _require(discriminator, DISCRIMINATOR, kind, weights, source)
        values.update(
            hidden_size=discriminator["hidden"],
            num_layers=discriminator["layers"],
            num_heads=num_heads or default_num_heads(discriminator["hidden"]),
            intermediate_size=discriminator["intermediate"],
        )
        if kind == PRETRAINER:
            generator = _require(generator, GENERATOR, kind, weights, source)
            values.update(
                generator_hidden_fraction=generator["hidden"] / discriminator["hidden"],
                generator_layers_fraction=generator["layers"] / discriminator["layers"],
            )
    try:
        config = ElectraConfig.from_dict(values)
    except ConfigError as error:
        raise CheckpointError(f"{source}: the sizes read from the checkpoint make no valid config: {error}") from error
    if kind == GENERATOR:
        _check_generator_rule(config, generator, values["num_heads"], source)
    if kind == PRETRAINER:
        _check_generator_rule(config, generator, generator_num_heads or default_num_heads(generator["hidden"]), source)
    return config
