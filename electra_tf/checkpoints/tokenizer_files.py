"""The tokenizer's files beside a model: its vocabulary and its `TokenizerSettings` (casing, accents).

Two layouts:

* keras-hub presets (ours and keras-hub `ElectraBackbone` presets): `tokenizer.json` holds a keras-hub
  `ElectraTokenizer` config (`lowercase`, `strip_accents`) and `assets/tokenizer/vocabulary.txt` its vocabulary, as
  `keras_hub.models.ElectraTokenizer.save_to_preset` writes them. Our presets keep `vocab.txt` beside them as well.
* Hugging Face directories: `tokenizer_config.json` (`do_lower_case`, `strip_accents`, `tokenizer_class`),
  `special_tokens_map.json` and `vocab.txt`, as transformers' `ElectraTokenizer.save_pretrained` writes them;
  `ElectraTokenizerFast` adds a `tokenizer.json` of its own: the Hugging Face tokenizers library's format
  (`{"version", "normalizer": {"type": "BertNormalizer", "lowercase", "strip_accents"}, "model": {"type":
  "WordPiece", "vocab": {token: id}, ...}, "added_tokens"}`), which shares the keras-hub file's name and is told
  apart by its content. Transformers 5 writes only `tokenizer.json` and `tokenizer_config.json`: the vocabulary is
  then the one inside `tokenizer.json` (`vocab_file_of` writes it out as a vocab.txt). Where both files record the
  casing they must agree (`read_hf_tokenizer`).

A reader returns None when the directory records no settings (a directory written before they were saved, a
reference TF1 checkpoint): the caller decides the default, `electra_tf.tokenizer.BERT_UNCASED`.
"""

import hashlib
import json
import os
import shutil
import tempfile

import keras_hub

from electra_tf.errors import CheckpointError
from electra_tf.io_utils import atomic_write_json, atomic_write_text
from electra_tf.tokenizer import (
    BERT_UNCASED,
    CLS_TOKEN,
    MASK_TOKEN,
    PAD_TOKEN,
    SEP_TOKEN,
    SPECIAL_TOKENS,
    SUFFIX_INDICATOR,
    UNK_TOKEN,
    TokenizerSettings,
)

VOCAB_NAME = "vocab.txt"
TOKENIZER_JSON_NAME = "tokenizer.json"
KERAS_HUB_VOCABULARY = os.path.join("assets", "tokenizer", "vocabulary.txt")
HF_TOKENIZER_CONFIG_NAME = "tokenizer_config.json"
HF_SPECIAL_TOKENS_NAME = "special_tokens_map.json"
# Where `vocab_file_of` looks for a vocabulary beside a checkpoint, for messages.
NO_VOCABULARY = f"no {VOCAB_NAME}, nor a {TOKENIZER_JSON_NAME} holding one"


def write_tokenizer_files(directory, vocab_file, settings=None):
    """`vocab.txt` and keras-hub's `tokenizer.json` + `assets/tokenizer/vocabulary.txt` (`settings`, default BERT
    uncased) in `directory`: the tokenizer beside one of our models."""
    shutil.copyfile(vocab_file, os.path.join(directory, VOCAB_NAME))
    write_keras_hub_tokenizer(directory, vocab_file, settings or BERT_UNCASED)


def write_keras_hub_tokenizer(directory, vocab_file, settings):
    """`tokenizer.json` + `assets/tokenizer/vocabulary.txt` of a keras-hub `ElectraTokenizer` in `directory`."""
    tokenizer = keras_hub.models.ElectraTokenizer(
        vocabulary=vocab_file, lowercase=settings.do_lower_case, strip_accents=settings.strip_accents
    )
    tokenizer.save_to_preset(directory)


def vocab_file_of(*directories):
    """The vocabulary of the first of `directories` that has one, as a vocab.txt path: its vocab.txt, its keras-hub
    `assets/tokenizer/vocabulary.txt`, or the WordPiece vocabulary inside a Hugging Face tokenizers `tokenizer.json`
    (written out once per content, see `tokenizers_vocab_file`); None when none has one."""
    for directory in directories:
        if not directory:
            continue
        for name in (VOCAB_NAME, KERAS_HUB_VOCABULARY):
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                return path
        path = os.path.join(directory, TOKENIZER_JSON_NAME)
        if os.path.isfile(path):
            config = _read_json(path, "tokenizer file")
            if _is_tokenizers_file(config):
                return tokenizers_vocab_file(config, path)
    return None


def _refused_vocabulary(path, reason):
    """The error for a tokenizers `tokenizer.json` at `path` whose vocabulary is not one electra_tf's tokenizer can
    use. The fix is a vocab.txt beside it: `vocab_file_of` reads that first (a `vocab_file` argument does not help
    here, since the directory's files are read before it is used)."""
    return CheckpointError(
        f"{path} {reason}: copy the vocab.txt the model was trained with into "
        f"{os.path.dirname(path)}, where it is read instead"
    )


def tokenizers_vocab(config, path):
    """The tokens of a Hugging Face tokenizers `tokenizer.json` (parsed: `config`), in id order: its WordPiece
    `model.vocab` with its `added_tokens`, whose unknown token, word-piece prefix and special tokens must be BERT's
    (electra_tf's tokenizer uses those)."""
    model = config["model"]
    if model.get("type") != "WordPiece" or not isinstance(model.get("vocab"), dict):
        raise _refused_vocabulary(path, f"holds a {model.get('type')} tokenizer, not ELECTRA's WordPiece one")
    for key, expected in (("unk_token", UNK_TOKEN), ("continuing_subword_prefix", SUFFIX_INDICATOR)):
        if model.get(key, expected) != expected:
            raise _refused_vocabulary(path, f"has model.{key}={model[key]!r}, not BERT's {expected!r}")
    by_id = {}
    added = [
        (token.get("content"), token.get("id")) for token in config.get("added_tokens") or () if isinstance(token, dict)
    ]
    for token, index in [*model["vocab"].items(), *added]:
        if not isinstance(token, str) or not isinstance(index, int) or by_id.setdefault(index, token) != token:
            raise _refused_vocabulary(
                path, f"gives the token {token!r} the id {index!r}, which is not an integer or is another token's"
            )
    if sorted(by_id) != list(range(len(by_id))):
        missing = sorted(set(range(max(by_id, default=-1) + 1)) - set(by_id))
        raise _refused_vocabulary(
            path, f"has vocabulary ids that are not 0..{len(by_id) - 1} (no token has id {missing[0]})"
        )
    tokens = [by_id[index] for index in range(len(by_id))]
    absent = [token for token in SPECIAL_TOKENS if token not in set(tokens)]
    if absent:
        raise _refused_vocabulary(path, f"lacks BERT's special tokens {' '.join(absent)}")
    foreign = [token for token in _post_processor_tokens(config) if token not in (CLS_TOKEN, SEP_TOKEN)]
    if foreign:
        raise _refused_vocabulary(
            path, f"puts {foreign[0]!r} around sequences, where BERT puts {CLS_TOKEN} and {SEP_TOKEN}"
        )
    # One token a line, stripped when read back: a token with surrounding or line-breaking white space cannot be
    # written as a vocab.txt line.
    unwritable = [token for token in tokens if not token or token != token.strip() or len(token.splitlines()) != 1]
    if unwritable:
        raise _refused_vocabulary(path, f"holds the token {unwritable[0]!r}, which cannot be a vocab.txt line")
    return tokens


def _post_processor_tokens(config):
    """The special tokens a tokenizers `tokenizer.json` puts around each sequence ([CLS] and [SEP] for BERT's)."""
    processor = config.get("post_processor") or {}
    if not isinstance(processor, dict):
        return []
    if processor.get("type") == "BertProcessing":
        return [pair[0] for pair in (processor.get("cls"), processor.get("sep")) if isinstance(pair, list) and pair]
    return list(processor.get("special_tokens") or ()) if processor.get("type") == "TemplateProcessing" else []


def tokenizers_vocab_file(config, path):
    """A vocab.txt holding the vocabulary of the tokenizers `tokenizer.json` at `path` (parsed: `config`).

    The rest of the library reads vocabularies from vocab.txt files; the model's directory may be read-only (a
    download cache), so the file goes to the temporary directory, named by the vocabulary's digest: every load of
    the same vocabulary gets the same file (written again if what is there differs), and it outlives any one model
    built on it.
    """
    text = "".join(token + "\n" for token in tokenizers_vocab(config, path))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    directory = os.path.join(tempfile.gettempdir(), f"electra_tf-vocab-{digest[:32]}")
    vocab_file = os.path.join(directory, VOCAB_NAME)
    if _read_text(vocab_file) != text:
        os.makedirs(directory, exist_ok=True)
        atomic_write_text(vocab_file, text)
    return vocab_file


def _read_text(path):
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, ValueError):
        return None


def _read_json(path, what):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        raise CheckpointError(
            f"{path} is not a readable {what} ({error}); write the model directory again "
            "(electra-convert) or delete the file"
        ) from None


def _tokenizers_normalizer(config):
    """{"do_lower_case", "strip_accents"} as the BertNormalizer of a Hugging Face tokenizers `tokenizer.json`
    (parsed: `config`) records them (strip_accents None: following lowercase), else None."""
    normalizer = config.get("normalizer") or {}
    if not isinstance(normalizer, dict) or normalizer.get("type") != "BertNormalizer":
        return None
    return {"do_lower_case": normalizer.get("lowercase", True), "strip_accents": normalizer.get("strip_accents")}


def _is_tokenizers_file(config):
    """Whether a parsed tokenizer.json is the Hugging Face tokenizers library's (keras-hub's has no "model")."""
    return isinstance(config, dict) and isinstance(config.get("model"), dict) and "version" in config


def read_tokenizer_json(directory):
    """The `TokenizerSettings` of `directory`'s `tokenizer.json` (keras-hub's or the Hugging Face tokenizers
    library's, told apart by content), or None when there is none or it records none."""
    path = os.path.join(directory, TOKENIZER_JSON_NAME)
    if not os.path.isfile(path):
        return None
    config = _read_json(path, "tokenizer file")
    if _is_tokenizers_file(config):
        normalizer = _tokenizers_normalizer(config)
        return None if normalizer is None else TokenizerSettings(**normalizer)
    try:
        keras_hub_config = config["config"]
        # keras-hub's WordPieceTokenizer does not strip accents unless told to.
        return TokenizerSettings(keras_hub_config["lowercase"], keras_hub_config.get("strip_accents", False))
    except (KeyError, TypeError) as error:
        raise CheckpointError(
            f"{path} is neither a keras-hub tokenizer config nor a Hugging Face tokenizers file "
            f"(no {error}); write the model directory again (electra-convert) or delete the "
            "file to use BERT's uncased settings"
        ) from None


def write_hf_tokenizer(directory, settings, model_max_length=None):
    """`tokenizer_config.json` and `special_tokens_map.json` for transformers' `ElectraTokenizer(Fast)`."""
    special_tokens = {
        "unk_token": UNK_TOKEN,
        "sep_token": SEP_TOKEN,
        "pad_token": PAD_TOKEN,
        "cls_token": CLS_TOKEN,
        "mask_token": MASK_TOKEN,
    }
    config = {
        "tokenizer_class": "ElectraTokenizer",
        "do_lower_case": settings.do_lower_case,
        "strip_accents": settings.strip_accents,
        "tokenize_chinese_chars": True,
        **special_tokens,
    }
    if model_max_length:
        config["model_max_length"] = int(model_max_length)
    atomic_write_json(os.path.join(directory, HF_TOKENIZER_CONFIG_NAME), config)
    atomic_write_json(os.path.join(directory, HF_SPECIAL_TOKENS_NAME), special_tokens)


def read_hf_tokenizer(directory):
    """The `TokenizerSettings` of a Hugging Face directory: its `tokenizer_config.json` (`do_lower_case`,
    `strip_accents`) and the normalizer of its tokenizers-library `tokenizer.json`; None when it has neither.

    Transformers 4 and 5 write both files with the same casing; a directory where they disagree is refused, naming
    both. A value neither records takes transformers' default: `do_lower_case` True, `strip_accents` following it.
    """
    path = os.path.join(directory, HF_TOKENIZER_CONFIG_NAME)
    if not os.path.isfile(path):
        return read_tokenizer_json(directory)
    config = _read_json(path, "Hugging Face tokenizer config")
    if not isinstance(config, dict):
        raise CheckpointError(f"{path} is not a Hugging Face tokenizer config (not a JSON object); fix or delete it")
    recorded = {key: config[key] for key in ("do_lower_case", "strip_accents") if config.get(key) is not None}
    normalizer_path = os.path.join(directory, TOKENIZER_JSON_NAME)
    normalizer = None
    if os.path.isfile(normalizer_path):
        tokenizer_json = _read_json(normalizer_path, "tokenizer file")
        normalizer = _tokenizers_normalizer(tokenizer_json) if _is_tokenizers_file(tokenizer_json) else None
    if normalizer is None:
        return TokenizerSettings(recorded.get("do_lower_case", True), recorded.get("strip_accents"))
    settings, normalized = TokenizerSettings(**{**normalizer, **recorded}), TokenizerSettings(**normalizer)
    if settings != normalized:
        raise CheckpointError(
            f"{path} (do_lower_case={config.get('do_lower_case')}, strip_accents={config.get('strip_accents')}) and "
            f"the normalizer of {normalizer_path} (lowercase={normalizer['do_lower_case']}, strip_accents="
            f"{normalizer['strip_accents']}) disagree on the tokenizer's casing; save the tokenizer again with the "
            "casing the model was trained with (transformers' save_pretrained), or correct the file that is wrong"
        )
    return settings
