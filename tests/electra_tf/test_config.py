import pytest

from electra_tf.architecture import ElectraArchitecture
from electra_tf.config import PRESETS, ElectraConfig
from electra_tf.errors import ConfigError
from electra_tf.pretraining_settings import PretrainingSettings


@pytest.mark.parametrize(
    "preset, hidden, heads, ffn",
    [("small", 64, 1, 256), ("small++", 256, 4, 1024), ("base", 256, 4, 1024), ("large", 256, 4, 1024)],
)
def test_generator_sizing_rule(preset, hidden, heads, ffn):
    generator = ElectraConfig.from_preset(preset).generator_architecture()
    assert type(generator) is ElectraArchitecture  # sizes only: no pre-training fields to misread
    assert (generator.hidden_size, generator.num_heads, generator.intermediate_size) == (hidden, heads, ffn)
    assert generator.num_layers == PRESETS[preset].num_layers
    assert generator.embedding_size == PRESETS[preset].embedding_size


@pytest.mark.parametrize(
    "fraction, heads_without, heads_with",
    [(0.25, 1, 4), (0.5, 2, 4), (0.3, 1, 1)],  # 0.3: 77 wide, not divisible into 4 heads
)
def test_alibi_generator_keeps_the_discriminator_head_count(fraction, heads_without, heads_with):
    for alibi, heads in ((False, heads_without), (True, heads_with)):
        generator = ElectraConfig.from_preset("small", alibi=alibi, generator_hidden_fraction=fraction)
        assert generator.generator_architecture().num_heads == heads
        assert generator.generator_architecture().hidden_size == round(256 * fraction)


def test_paper_sizes_and_mask_rates():
    small, base, large = (ElectraConfig.from_preset(name) for name in ("small", "base", "large"))
    assert (small.num_layers, small.hidden_size, small.intermediate_size, small.num_heads, small.embedding_size) == (
        12,
        256,
        1024,
        4,
        128,
    )
    assert (base.hidden_size, base.num_heads, base.embedding_size) == (768, 12, 768)
    assert (large.num_layers, large.hidden_size, large.mask_prob) == (24, 1024, 0.25)
    assert small.max_predictions_per_seq(128) == 19 and large.max_predictions_per_seq(512) == 130
    assert small.layer_norm_epsilon == 1e-12 and small.disc_weight == 50.0 and small.mask_token_fraction == 0.85


def test_json_round_trip(tmp_path):
    config = ElectraConfig.from_preset("base", vocab_size=1000, mask_id=7)
    assert ElectraConfig.from_json(config.to_json()) == config
    config.save(str(tmp_path / "c.json"))
    assert ElectraConfig.load(str(tmp_path / "c.json")) == config


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"hidden_size": 100, "num_heads": 3}, "not divisible by num_heads"),
        ({"vocab_size": 50}, "outside the vocabulary"),
        ({"mask_prob": 1.5}, "mask_prob"),
        ({"hidden_dropout": 1.0}, "hidden_dropout"),
        ({"num_layers": 0}, "num_layers must be a positive integer"),
    ],
)
def test_validation_errors(overrides, message):
    with pytest.raises(ConfigError, match=message):
        ElectraConfig.from_preset("small", **overrides)


def test_unknown_preset_and_fields():
    with pytest.raises(ConfigError, match="unknown model size 'medium'"):
        ElectraConfig.from_preset("medium")
    with pytest.raises(ConfigError, match="unknown ElectraConfig field"):
        ElectraConfig.from_dict({"hidden": 3})


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"objective": "bert"}, "unknown objective 'bert'"),
        ({"generator_training": "reinforce"}, "unknown generator_training"),
        ({"embedding_sharing": "tied"}, "unknown embedding_sharing"),
        ({"objective": "mlm", "untied_embeddings": True}, "objective=mlm and untied_embeddings cannot be combined"),
        ({"objective": "replace_mlm", "embedding_sharing": "gdes"}, "objective=replace_mlm and embedding_sharing=gdes"),
        ({"tie_all_weights": True, "embedding_sharing": "gdes"}, "tie_all_weights and embedding_sharing=gdes"),
        ({"uniform_generator": True, "generator_training": "adversarial"}, "uniform_generator and generator_training"),
        ({"two_stage_steps": -1}, "two_stage_steps must be a non-negative integer"),
        ({"adversarial_temperature_start": 0.1, "adversarial_temperature_end": 1.0}, "0 < end <= start"),
    ],
)
def test_objective_and_generator_variant_validation(overrides, message):
    with pytest.raises(ConfigError, match=message):
        ElectraConfig.from_preset("small", **overrides)


def test_same_size_generator_variants_ignore_the_fractions():
    for overrides in ({"tie_all_weights": True}, {"two_stage_steps": 10}):
        config = ElectraConfig.from_preset("small", **overrides)
        generator = config.generator_architecture()
        assert (generator.hidden_size, generator.num_layers, generator.num_heads) == (256, 12, 4)
    small = ElectraConfig.from_preset("small", generator_layers_fraction=0.5)
    assert (small.generator_architecture().hidden_size, small.generator_architecture().num_layers) == (64, 6)
    assert not PretrainingSettings(uniform_generator=True).has_generator_network
    assert not ElectraConfig.from_preset("small", objective="mlm").has_generator_network
    assert PretrainingSettings().reference_layout and not PretrainingSettings(untied_embeddings=True).reference_layout


def test_generator_variants_decide_its_embedding_block_and_its_losses():
    own_embeddings = {
        "untied": PretrainingSettings(untied_embeddings=True),
        "two-stage": PretrainingSettings(two_stage_steps=3),
        "default": PretrainingSettings(),
        "tied": PretrainingSettings(tie_all_weights=True),
        "gdes": PretrainingSettings(embedding_sharing="gdes"),
    }
    assert {name: settings.generator_has_own_embeddings for name, settings in own_embeddings.items()} == {
        "untied": True,
        "two-stage": True,
        "default": False,
        "tied": False,
        "gdes": False,
    }
    assert not PretrainingSettings(two_stage_steps=3).reference_layout

    def losses(generator_training):
        """(MLM loss, reversed discriminator loss): what the generator learns from."""
        settings = PretrainingSettings(generator_training=generator_training)
        return settings.generator_learns_by_likelihood, settings.generator_learns_adversarially

    assert [losses(name) for name in ("mle", "adversarial", "annealed")] == [(True, False), (False, True), (True, True)]


@pytest.mark.parametrize(
    "overrides, labels",
    [
        ({}, []),
        ({"objective": "electra_15", "generator_training": "adversarial"}, []),
        ({"objective": "electric"}, []),
        ({"tie_all_weights": True}, []),
        ({"objective": "replace_mlm"}, ["objective=replace_mlm"]),
        ({"uniform_generator": True}, ["uniform_generator"]),
        ({"untied_embeddings": True, "two_stage_steps": 3}, ["untied_embeddings", "two_stage_steps"]),
        ({"embedding_sharing": "gdes"}, ["embedding_sharing=gdes"]),
    ],
)
def test_the_choices_that_leave_the_reference_layout_are_named(overrides, labels):
    settings = PretrainingSettings(**overrides)
    assert settings.non_reference_choices() == labels
    assert settings.reference_layout == (not labels)


def test_architecture_and_pretraining_settings_partition_the_run_config():
    import dataclasses

    from electra_tf.architecture import ARCHITECTURE_FIELDS
    from electra_tf.pretraining_settings import PRETRAINING_FIELDS

    assert not set(ARCHITECTURE_FIELDS) & set(PRETRAINING_FIELDS)
    assert [field.name for field in dataclasses.fields(ElectraConfig)] == list(ARCHITECTURE_FIELDS + PRETRAINING_FIELDS)
    config = ElectraConfig.from_preset("base", vocab_size=1000, mask_id=7, objective="electra_15", disc_weight=20.0)
    architecture, settings = config.architecture_config(), config.pretraining_settings()
    assert isinstance(architecture, ElectraArchitecture) and not isinstance(architecture, PretrainingSettings)
    assert (architecture.hidden_size, architecture.vocab_size) == (768, 1000)
    assert (settings.objective, settings.disc_weight, settings.mask_id) == ("electra_15", 20.0, 7)
    assert not hasattr(settings, "hidden_size") and not hasattr(architecture, "disc_weight")
    assert ElectraConfig.from_parts(architecture, settings) == config
    assert ElectraConfig.from_parts(architecture.architecture()).pretraining_settings() == PretrainingSettings()


def test_each_half_validates_its_own_fields():

    with pytest.raises(ConfigError, match="ElectraArchitecture.hidden_size=100 is not divisible by num_heads=3"):
        ElectraArchitecture(hidden_size=100, num_heads=3)
    with pytest.raises(ConfigError, match="unknown hidden_activation 'relu'"):
        ElectraArchitecture(hidden_activation="relu")
    with pytest.raises(ConfigError, match="PretrainingSettings.mask_prob must be in"):
        PretrainingSettings(mask_prob=1.5)
    with pytest.raises(ConfigError, match="tie_all_weights and untied_embeddings cannot be combined") as error:
        PretrainingSettings(tie_all_weights=True, untied_embeddings=True)
    assert {"tie_all_weights", "untied_embeddings"} <= set(error.value.arguments)


# The objectives and generator variants that combine, each with why: the variants of the paper's section 3.2 act on a
# generator/discriminator pair, and those that change the discriminator's input or the generator's loss need a
# replaced-token-detection discriminator (electra and electra_15 both have one).
DETECTION_VARIANTS = {
    (): "the reference's ELECTRA",
    ("uniform_generator",): "uniform samples corrupt the input: no generator network",
    ("tie_all_weights",): "the generator is the discriminator's encoder with its own MLM head",
    ("tie_all_weights", "generator_training=adversarial"): "a tied generator still has logits to train adversarially",
    ("tie_all_weights", "generator_training=annealed"): "the same, turning adversarial over the run",
    ("untied_embeddings",): "the generator has its own embedding block",
    ("untied_embeddings", "two_stage_steps"): "two-stage training gives the generator its own block anyway",
    ("untied_embeddings", "generator_training=adversarial"): "an adversarial generator with its own embeddings",
    ("untied_embeddings", "generator_training=annealed"): "the same, turning adversarial over the run",
    ("two_stage_steps",): "the generator alone, then the discriminator initialised from it",
    ("generator_training=adversarial",): "the generator maximises the discriminator's loss",
    ("generator_training=annealed",): "maximum likelihood turning adversarial",
    ("embedding_sharing=gdes",): "DeBERTaV3's gradient-disentangled sharing of the word table",
    ("generator_training=adversarial", "embedding_sharing=gdes"): "the discriminator's delta table does not reach the "
    "generator's loss",
    ("generator_training=annealed", "embedding_sharing=gdes"): "the same, turning adversarial over the run",
}
ALLOWED_COMBINATIONS = {
    **{("electra", variants): reason for variants, reason in DETECTION_VARIANTS.items()},
    **{("electra_15", variants): reason for variants, reason in DETECTION_VARIANTS.items()},
    ("mlm", ()): "BERT: no generator, so no generator variant",
    ("replace_mlm", ()): "Replace MLM",
    ("replace_mlm", ("uniform_generator",)): "uniform samples replace the masked tokens",
    ("replace_mlm", ("untied_embeddings",)): "the generator has its own embedding block",
    ("all_tokens_mlm", ()): "All-Tokens MLM",
    ("all_tokens_mlm", ("uniform_generator",)): "uniform samples replace the masked tokens",
    ("all_tokens_mlm", ("untied_embeddings",)): "the generator has its own embedding block",
    ("electric", ()): "Electric: its two-tower cloze generator and NCE discriminator admit no generator variant",
}


def _variant_grid():
    import itertools

    from electra_tf.pretraining_settings import EMBEDDING_SHARING, GENERATOR_TRAINING, OBJECTIVES

    for objective, uniform, tied, untied, two_stage, training, sharing in itertools.product(
        OBJECTIVES, (False, True), (False, True), (False, True), (0, 100), GENERATOR_TRAINING, EMBEDDING_SHARING
    ):
        variants = tuple(
            name
            for name, on in (
                ("uniform_generator", uniform),
                ("tie_all_weights", tied),
                ("untied_embeddings", untied),
                ("two_stage_steps", two_stage),
                (f"generator_training={training}", training != "mle"),
                (f"embedding_sharing={sharing}", sharing != "shared"),
            )
            if on
        )
        yield (
            (objective, variants),
            dict(
                objective=objective,
                uniform_generator=uniform,
                tie_all_weights=tied,
                untied_embeddings=untied,
                two_stage_steps=two_stage,
                generator_training=training,
                embedding_sharing=sharing,
            ),
        )


def test_the_combination_rule_allows_exactly_the_listed_combinations():
    allowed, refused = set(), 0
    for key, values in _variant_grid():
        try:
            PretrainingSettings(**values)
            allowed.add(key)
        except ConfigError as error:
            refused += 1
            # One error naming the two arguments that clash, and how to resolve it.
            assert len(error.arguments) == 2
            assert " cannot be combined: with " in str(error) and "; set " in str(error)
    assert allowed == set(ALLOWED_COMBINATIONS)
    assert (len(allowed), refused) == (38, 538)


def test_a_clash_names_both_arguments_why_and_the_fix():
    with pytest.raises(ConfigError) as error:
        PretrainingSettings(objective="replace_mlm", two_stage_steps=100)
    assert str(error.value) == (
        "objective=replace_mlm and two_stage_steps cannot be combined: with objective=replace_mlm the "
        "discriminator-sized network predicts the replaced tokens, with two_stage_steps the discriminator detects "
        "replaced tokens; set two_stage_steps=0 or use objective=electra or objective=electra_15"
    )
    assert error.value.arguments == ("objective", "two_stage_steps")
    with pytest.raises(ConfigError) as error:
        PretrainingSettings(two_stage_steps=100, embedding_sharing="gdes")
    assert str(error.value) == (
        "two_stage_steps and embedding_sharing=gdes cannot be combined: with two_stage_steps the generator has its own "
        "embedding block, with embedding_sharing=gdes the discriminator's word table is the generator's plus its own "
        "delta; set embedding_sharing=shared or two_stage_steps=0"
    )
    assert error.value.arguments == ("two_stage_steps", "embedding_sharing")
