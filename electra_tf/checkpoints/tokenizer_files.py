"""The tokenizer's files beside a model: its vocabulary and its `TokenizerSettings` (casing, accents).

Two layouts:

* keras-hub presets (ours and keras-hub `ElectraBackbone` presets): `tokenizer.json` holds a keras-hub
  `ElectraTokenizer` config (`lowercase`, `strip_accents`) and `assets/tokenizer/vocabulary.txt` its vocabulary, as
  `keras_hub.models.ElectraTokenizer.save_to_preset` writes them. Our presets keep `vocab.txt` beside them as well.
* Hugging Face directories: `tokenizer_config.json` (`do_lower_case`, `strip_accents`, `tokenizer_class`),
  `special_tokens_map.json` and `vocab.txt`, as transformers' `ElectraTokenizer.save_pretrained` writes them.

A reader returns None when the directory records no settings (a directory written before they were saved, a
reference TF1 checkpoint): the caller decides the default, `electra_tf.tokenizer.BERT_UNCASED`.
"""

import json
import os

from electra_tf.errors import CheckpointError
from electra_tf.io_utils import atomic_write_json
from electra_tf.tokenizer import CLS_TOKEN, MASK_TOKEN, PAD_TOKEN, SEP_TOKEN, UNK_TOKEN, TokenizerSettings

KERAS_HUB_TOKENIZER_NAME = "tokenizer.json"
KERAS_HUB_VOCABULARY = os.path.join("assets", "tokenizer", "vocabulary.txt")
HF_TOKENIZER_CONFIG_NAME = "tokenizer_config.json"
HF_SPECIAL_TOKENS_NAME = "special_tokens_map.json"


def write_keras_hub_tokenizer(directory, vocab_file, settings):
    """`tokenizer.json` + `assets/tokenizer/vocabulary.txt` of a keras-hub `ElectraTokenizer` in `directory`."""
    import keras_hub

    tokenizer = keras_hub.models.ElectraTokenizer(vocabulary=vocab_file, lowercase=settings.do_lower_case,
                                                  strip_accents=settings.strip_accents)
    tokenizer.save_to_preset(directory)


def read_keras_hub_tokenizer(directory):
    """The `TokenizerSettings` in `directory`'s `tokenizer.json`, or None when it has none."""
    path = os.path.join(directory, KERAS_HUB_TOKENIZER_NAME)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)["config"]
        # keras-hub's WordPieceTokenizer does not strip accents unless told to.
        return TokenizerSettings(config["lowercase"], config.get("strip_accents", False))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{path} is not a keras-hub tokenizer config ({error}); write the model directory "
                              "again (convert_checkpoint.py) or delete the file to use BERT's uncased settings") from None


def keras_hub_vocabulary(directory):
    """`directory`'s `assets/tokenizer/vocabulary.txt`, or None."""
    path = os.path.join(directory, KERAS_HUB_VOCABULARY)
    return path if os.path.isfile(path) else None


def write_hf_tokenizer(directory, settings, model_max_length=None):
    """`tokenizer_config.json` and `special_tokens_map.json` for transformers' `ElectraTokenizer(Fast)`."""
    special_tokens = {"unk_token": UNK_TOKEN, "sep_token": SEP_TOKEN, "pad_token": PAD_TOKEN, "cls_token": CLS_TOKEN,
                      "mask_token": MASK_TOKEN}
    config = {"tokenizer_class": "ElectraTokenizer", "do_lower_case": settings.do_lower_case,
              "strip_accents": settings.strip_accents, "tokenize_chinese_chars": True, **special_tokens}
    if model_max_length:
        config["model_max_length"] = int(model_max_length)
    atomic_write_json(os.path.join(directory, HF_TOKENIZER_CONFIG_NAME), config)
    atomic_write_json(os.path.join(directory, HF_SPECIAL_TOKENS_NAME), special_tokens)


def read_hf_tokenizer(directory):
    """The `TokenizerSettings` in `directory`'s `tokenizer_config.json`, or None when it has none.

    transformers' defaults apply to keys the file leaves out: `do_lower_case` True, `strip_accents` following it.
    """
    path = os.path.join(directory, HF_TOKENIZER_CONFIG_NAME)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
        return TokenizerSettings(config.get("do_lower_case", True), config.get("strip_accents"))
    except (OSError, ValueError, AttributeError) as error:
        raise CheckpointError(f"{path} is not a Hugging Face tokenizer config ({error}); fix or delete it") from None
