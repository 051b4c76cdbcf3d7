"""Tiny checkpoints built without electra_tf: HF safetensors directories (NumPy) and reference TF1 checkpoints
(tf.compat.v1 variables + Saver), with random weights large enough for the outputs to be far from trivial."""

import json
import os

import numpy as np

VOCAB_SIZE = 50
EMBEDDING_SIZE = 16
MAX_POSITIONS = 16
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Discriminator 32 wide (2 heads); generator 8 wide (1 head, FFN 4 x 8: our sizing rule at fraction 1/4).
DISCRIMINATOR_SIZES = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
GENERATOR_SIZES = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 1, "intermediate_size": 32}


def write_vocab(path):
    words = SPECIAL_TOKENS + [f"w{i}" for i in range(VOCAB_SIZE - len(SPECIAL_TOKENS))]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(words) + "\n")
    return str(path)


_SPECIAL = {
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}
_ADDED = [
    {
        "id": index,
        "content": token,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }
    for index, token in enumerate(SPECIAL_TOKENS)
]
# The files transformers 5.24 writes for `ElectraTokenizerFast(vocab=<vocab.txt of the tokens below>,
# do_lower_case=True, model_max_length=512).save_pretrained(directory)`, as they are; no vocab.txt, no
# special_tokens_map.json.
TRANSFORMERS_5_SAMPLE = {
    "tokenizer.json": {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _ADDED,
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
            ],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]},
            },
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "the": 5, "##s": 6},
        },
    },
    "tokenizer_config.json": {
        "backend": "tokenizers",
        "cls_token": "[CLS]",
        "do_lower_case": True,
        "mask_token": "[MASK]",
        "model_max_length": 512,
        "pad_token": "[PAD]",
        "sep_token": "[SEP]",
        "strip_accents": None,
        "tokenize_chinese_chars": True,
        "tokenizer_class": "BertTokenizer",
        "unk_token": "[UNK]",
    },
}


def write_transformers_tokenizer(directory, vocab_file, settings, transformers_major=4):
    """The tokenizer files transformers' `ElectraTokenizerFast.save_pretrained` writes for `vocab_file` (BERT's
    special tokens first, in `SPECIAL_TOKENS` order) and `settings.do_lower_case`. Transformers 5:
    `TRANSFORMERS_5_SAMPLE` with that vocabulary and casing. Transformers 4: vocab.txt, special_tokens_map.json, a
    tokenizer_config.json of its own and the same tokenizer.json."""
    with open(vocab_file, encoding="utf-8") as handle:
        vocab = [line.rstrip("\n") for line in handle]
    assert vocab[: len(SPECIAL_TOKENS)] == SPECIAL_TOKENS
    files = json.loads(json.dumps(TRANSFORMERS_5_SAMPLE))
    files["tokenizer.json"]["model"]["vocab"] = {token: i for i, token in enumerate(vocab)}
    files["tokenizer.json"]["normalizer"]["lowercase"] = settings.do_lower_case
    files["tokenizer_config.json"]["do_lower_case"] = settings.do_lower_case
    if transformers_major < 5:
        with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(vocab) + "\n")
        files["special_tokens_map.json"] = _SPECIAL
        files["tokenizer_config.json"] = {
            "added_tokens_decoder": {
                str(token["id"]): {k: v for k, v in token.items() if k != "id"} for token in _ADDED
            },
            "clean_up_tokenization_spaces": True,
            "do_basic_tokenize": True,
            "do_lower_case": settings.do_lower_case,
            "model_max_length": 512,
            "never_split": None,
            "strip_accents": None,
            "tokenize_chinese_chars": True,
            "tokenizer_class": "ElectraTokenizer",
            **_SPECIAL,
        }
    for name, content in files.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as handle:
            json.dump(content, handle, indent=2)


def assert_identical(before, after):
    """Two {name: array} dicts hold the same names with bit-identical values of the same dtype."""
    assert sorted(before) == sorted(after)
    for name, value in before.items():
        assert after[name].dtype == value.dtype and np.array_equal(after[name], value), name


def hf_config(sizes, architecture):
    return {
        "architectures": [architecture],
        "model_type": "electra",
        "vocab_size": VOCAB_SIZE,
        "embedding_size": EMBEDDING_SIZE,
        "max_position_embeddings": MAX_POSITIONS,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        **sizes,
    }


def _normal(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _linear(rng, tensors, name, n_in, n_out):
    tensors[f"{name}.weight"] = _normal(rng, (n_out, n_in), 1.0 / np.sqrt(n_in))
    tensors[f"{name}.bias"] = _normal(rng, (n_out,), 0.1)


def _layer_norm(rng, tensors, name, width):
    tensors[f"{name}.weight"] = 1.0 + _normal(rng, (width,), 0.2)
    tensors[f"{name}.bias"] = _normal(rng, (width,), 0.1)


def hf_embeddings(rng):
    tensors = {
        "electra.embeddings.word_embeddings.weight": _normal(rng, (VOCAB_SIZE, EMBEDDING_SIZE), 0.5),
        "electra.embeddings.position_embeddings.weight": _normal(rng, (MAX_POSITIONS, EMBEDDING_SIZE), 0.5),
        "electra.embeddings.token_type_embeddings.weight": _normal(rng, (2, EMBEDDING_SIZE), 0.5),
    }
    _layer_norm(rng, tensors, "electra.embeddings.LayerNorm", EMBEDDING_SIZE)
    return tensors


def hf_encoder(rng, sizes, embeddings):
    tensors = dict(embeddings)
    hidden, ffn = sizes["hidden_size"], sizes["intermediate_size"]
    if hidden != EMBEDDING_SIZE:
        _linear(rng, tensors, "electra.embeddings_project", EMBEDDING_SIZE, hidden)
    for i in range(sizes["num_hidden_layers"]):
        layer = f"electra.encoder.layer.{i}"
        for part in ("query", "key", "value"):
            _linear(rng, tensors, f"{layer}.attention.self.{part}", hidden, hidden)
        _linear(rng, tensors, f"{layer}.attention.output.dense", hidden, hidden)
        _layer_norm(rng, tensors, f"{layer}.attention.output.LayerNorm", hidden)
        _linear(rng, tensors, f"{layer}.intermediate.dense", hidden, ffn)
        _linear(rng, tensors, f"{layer}.output.dense", ffn, hidden)
        _layer_norm(rng, tensors, f"{layer}.output.LayerNorm", hidden)
    return tensors


def hf_discriminator_tensors(rng, embeddings):
    """ElectraForPreTraining's state dict."""
    tensors = hf_encoder(rng, DISCRIMINATOR_SIZES, embeddings)
    hidden = DISCRIMINATOR_SIZES["hidden_size"]
    _linear(rng, tensors, "discriminator_predictions.dense", hidden, hidden)
    _linear(rng, tensors, "discriminator_predictions.dense_prediction", hidden, 1)
    return tensors


def hf_generator_tensors(rng, embeddings):
    """ElectraForMaskedLM's state dict (generator_lm_head.weight is tied, so left out as transformers saves it)."""
    tensors = hf_encoder(rng, GENERATOR_SIZES, embeddings)
    _linear(rng, tensors, "generator_predictions.dense", GENERATOR_SIZES["hidden_size"], EMBEDDING_SIZE)
    _layer_norm(rng, tensors, "generator_predictions.LayerNorm", EMBEDDING_SIZE)
    tensors["generator_lm_head.bias"] = _normal(rng, (VOCAB_SIZE,), 0.5)
    return tensors


def write_hf_directory(directory, tensors, config, with_vocab=True):
    from safetensors.numpy import save_file

    os.makedirs(directory, exist_ok=True)
    save_file(tensors, os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    if with_vocab:
        write_vocab(os.path.join(directory, "vocab.txt"))
    return str(directory)


def tf1_name(hf_key, generator=False):
    """The reference's TF1 name of an HF key (written out by hand, independently of electra_tf's mapping)."""
    name = hf_key
    if name == "generator_lm_head.bias":
        return "generator_predictions/output_bias"
    name = name.replace("encoder.layer.", "encoder.layer_").replace("dense_prediction", "dense_1")
    if generator and name.startswith("electra.") and not name.startswith("electra.embeddings."):
        name = "generator." + name[len("electra.") :]
    parts = name.split(".")
    if parts[-2] == "LayerNorm":
        parts[-1] = {"weight": "gamma", "bias": "beta"}[parts[-1]]
    elif parts[-2].endswith("_embeddings"):
        parts = parts[:-1]
    elif parts[-1] == "weight":
        parts[-1] = "kernel"
    return "/".join(parts)


def tf1_arrays(tensors, generator=False):
    """{TF1 name: array} of an HF state dict (Linear weights transposed to [in, out] kernels)."""
    arrays = {}
    for key, value in tensors.items():
        name = tf1_name(key, generator)
        arrays[name] = value.T.copy() if name.endswith("/kernel") else value
    return arrays


def write_tf1_checkpoint(prefix, arrays, global_step=1000):
    """A TF1 checkpoint as the reference wrote it: one tf.compat.v1 variable per name, Adam slots and global_step."""
    import tensorflow as tf

    with tf.Graph().as_default():
        for name, value in arrays.items():
            tf.compat.v1.get_variable(name, initializer=tf.constant(value))
            for slot in ("adam_m", "adam_v"):
                tf.compat.v1.get_variable(f"{name}/{slot}", initializer=tf.zeros(value.shape, value.dtype))
        step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(step.assign(global_step))
            tf.compat.v1.train.Saver().save(session, prefix)
    return prefix


def build_hf_pair(root, seed=1234):
    """An HF ElectraForPreTraining and ElectraForMaskedLM from one run (same embeddings) under root/discriminator and
    root/generator, with their state dicts and configs."""
    rng = np.random.default_rng(seed)
    embeddings = hf_embeddings(rng)
    discriminator = hf_discriminator_tensors(rng, embeddings)
    generator = hf_generator_tensors(rng, embeddings)
    discriminator_config = hf_config(DISCRIMINATOR_SIZES, "ElectraForPreTraining")
    generator_config = hf_config(GENERATOR_SIZES, "ElectraForMaskedLM")
    write_hf_directory(os.path.join(root, "discriminator"), discriminator, discriminator_config)
    write_hf_directory(os.path.join(root, "generator"), generator, generator_config)
    return {
        "root": str(root),
        "discriminator": discriminator,
        "generator": generator,
        "discriminator_config": discriminator_config,
        "generator_config": generator_config,
    }


def differ_generator_embeddings(pair_root):
    """Makes the generator/ copy of the shared embeddings of the HF pair at `pair_root` (`build_hf_pair`) differ from
    the discriminator/'s (its word table + 1): a discriminator and a generator not from one pre-training run."""
    from safetensors.numpy import load_file, save_file

    path = os.path.join(pair_root, "generator", "model.safetensors")
    tensors = load_file(path)
    tensors["electra.embeddings.word_embeddings.weight"] = tensors["electra.embeddings.word_embeddings.weight"] + 1
    save_file(tensors, path, metadata={"format": "pt"})
    return str(pair_root)


def batch(seed=0):
    """Two sequences with padding on the second, both segments used."""
    rng = np.random.default_rng(seed)
    input_ids = rng.integers(5, VOCAB_SIZE, size=(2, 10)).astype(np.int32)
    input_ids[:, 0] = 2
    input_mask = np.ones((2, 10), np.int32)
    input_mask[1, 6:] = 0
    input_ids[1, 6:] = 0
    segment_ids = np.zeros((2, 10), np.int32)
    segment_ids[:, 5:] = 1
    segment_ids[1, 6:] = 0
    return {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
