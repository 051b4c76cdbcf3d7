from electra_tf.checkpoints.huggingface_card import model_card
from electra_tf.checkpoints.naming import DISCRIMINATOR, GENERATOR
from electra_tf.config import ElectraConfig
from electra_tf.tokenizer import BERT_UNCASED


def _rows(card):
    """{name: value} of the card's two-column table."""
    cells = [
        [cell.strip() for cell in line.strip("|").split("|")] for line in card.splitlines() if line.startswith("|")
    ]
    return {name: value for name, value in cells if name and name != "---"}


def test_a_generator_card_gives_the_generator_sizes_and_the_masked_lm_pipeline():
    config = ElectraConfig.from_preset("small")
    generator = config.generator_architecture()
    card = model_card(config, GENERATOR, "ElectraForMaskedLM", "electra_tf_config", BERT_UNCASED)
    assert card.startswith("---\nlibrary_name: transformers\n") and "pipeline_tag: fill-mask\n" in card
    rows = _rows(card)
    assert rows["architecture"] == "`ElectraForMaskedLM`"
    assert int(rows["hidden size"]) == generator.hidden_size < config.hidden_size
    assert int(rows["vocabulary"]) == config.vocab_size
    assert "do_lower_case=True" in rows["tokenizer"]
    assert "AutoModelForMaskedLM.from_pretrained" in card and "under `electra_tf_config`" in card
    assert "No vocabulary was given" not in card


def test_a_discriminator_card_without_a_vocabulary_says_what_to_add():
    config = ElectraConfig.from_preset("small")
    card = model_card(config, DISCRIMINATOR, "ElectraForPreTraining", "electra_tf_config")
    rows = _rows(card)
    assert int(rows["hidden size"]) == config.hidden_size and "tokenizer" not in rows
    assert "pipeline_tag: feature-extraction\n" in card and "AutoModelForPreTraining.from_pretrained" in card
    assert "add the `vocab.txt` the model was trained with" in card
