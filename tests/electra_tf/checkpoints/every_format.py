"""One tiny pre-training model with random weights written in every checkpoint format: the reference's TF1
checkpoint, a Hugging Face directory with transformers' own tokenizer files (as transformers 4 and as transformers 5
write them), a Hugging Face discriminator/ + generator/ pair, a keras-hub ElectraBackbone preset, our `pretrained/`
preset and our run directory."""

from electra_tf.checkpoints.naming import encoder_slots
from electra_tf.models import save_checkpoint
from electra_tf.tokenizer import TokenizerSettings
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import tiny_model

CASED = TokenizerSettings(do_lower_case=False)
FORMATS = ["tf1", "hf", "hf5", "hf_pair", "keras_hub", "ours_preset", "ours_run"]
HEADLESS = ("keras_hub",)  # formats without the discriminator's replaced-token head
PAIRS = ("tf1", "hf_pair", "ours_run")  # formats holding the generator too


def write_every_format(root, seed=5):
    """({format: path}, the `ElectraPretrainer`) of one tiny pre-training model written under `root` (a
    pathlib.Path) in every format, the tokenizer cased where the format records it; the formats holding one network
    hold its discriminator."""
    vocab = fixtures.write_vocab(root / "vocab.txt")
    pretrainer = tiny_model("pretrainer", seed=seed)
    discriminator = pretrainer.pretrained_discriminator()
    paths = {
        "tf1": str(root / "tf1" / "model.ckpt"),
        "hf": str(root / "hf"),
        "hf5": str(root / "hf5"),
        "hf_pair": str(root / "hf_pair"),
        "keras_hub": str(root / "keras_hub"),
        "ours_preset": str(root / "run" / "pretrained"),
        "ours_run": str(root / "run"),
    }
    save_checkpoint(pretrainer, paths["tf1"], "tf1", vocab_file=vocab)
    for name, transformers_major in (("hf", 4), ("hf5", 5)):
        save_checkpoint(discriminator, paths[name], "hf")
        fixtures.write_transformers_tokenizer(paths[name], vocab, CASED, transformers_major)
    save_checkpoint(pretrainer, paths["hf_pair"], "hf", vocab_file=vocab, tokenizer_settings=CASED)
    save_checkpoint(discriminator, paths["keras_hub"], "keras_hub", vocab_file=vocab, tokenizer_settings=CASED)
    # Our run directory holds our preset as pretrained/.
    save_checkpoint(pretrainer, paths["ours_run"], "ours", vocab_file=vocab, tokenizer_settings=CASED)
    return paths, pretrainer


def encoder_weights(backbone, network="discriminator"):
    """{reference name: array} of a backbone's embeddings and encoder, as `network`'s."""
    return {slot.name: slot.read() for slot in encoder_slots(backbone, network)}
