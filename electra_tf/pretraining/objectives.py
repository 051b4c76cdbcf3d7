"""The pre-training objectives of the paper's Table 5, one small class each.

An objective says which networks and heads a step needs and what loss they carry; the pre-training model
(`models.pretrainer`) runs the networks and hands the objective their outputs. Every objective reduces a step to
per-replica sums and counts (`pretraining.statistics`), all-reduced once, so losses are normalised by global counts.

- `electra`: generator MLM at the masked positions + disc_weight x replaced-token detection over every real token.
- `electra_15`: the same, with the detection loss only at the masked positions (the paper's "ELECTRA 15 %").
- `mlm`: no generator; the discriminator-sized network predicts the [MASK]ed tokens (the paper's BERT baseline).
- `replace_mlm`: the discriminator-sized network predicts the masked positions' original tokens from an input in which
  they hold generator samples instead of [MASK] ("Replace MLM").
- `all_tokens_mlm`: as Replace MLM, but predicting every token, with a copy probability per token ("All-Tokens MLM").
- `electric`: Electric (Clark et al. 2020, an energy-based cloze model): a two-tower cloze generator trained on every
  candidate token of the unmasked input, and noise-contrastive estimation for the discriminator, whose output is an
  energy.
"""

import math

import tensorflow as tf

from electra_tf.pretraining import statistics
from electra_tf.pretraining.positions import positions_indicator
from electra_tf.pretraining.statistics import safe_divide

# Heads on the discriminator-sized network.
REPLACED_TOKEN_HEAD = "replaced_token"
MASKED_LM_HEAD = "masked_lm"
COPY_HEAD = "copy"

GENERATOR_METRICS = ("masked_lm_loss", "masked_lm_accuracy", "sampled_masked_lm_accuracy")
DISCRIMINATOR_METRICS = (
    "disc_loss",
    "disc_accuracy",
    "disc_precision",
    "disc_recall",
    "disc_auc",
    "disc_replaced_fraction",
)
MODEL_MLM_METRICS = ("model_mlm_loss", "model_mlm_accuracy")
CLOZE_METRICS = ("cloze_loss", "cloze_accuracy")


class Objective:
    """Base class. `uses_generator`: a generator corrupts the model's input (else the model sees the [MASK]ed input).
    `cloze_generator`: the generator is a two-tower cloze model reading the unmasked input (else an MLM reading the
    [MASK]ed one). `heads`: heads of the discriminator-sized network. `metric_names`: what the step reports besides
    `loss`."""

    name = None
    uses_generator = True
    cloze_generator = False
    heads = (REPLACED_TOKEN_HEAD,)
    metric_names = GENERATOR_METRICS + DISCRIMINATOR_METRICS

    def model_mlm_positions(self, masked, length):
        """Positions [batch, P] at which the model's MLM head predicts (only for objectives with that head)."""
        return masked.masked_lm_positions

    def detection_labels(self, labels, masked):
        """The discriminator's labels [B, L] from the replaced tokens' `labels` and the `masked` inputs."""
        return labels

    def detection_logits(self, logits, outputs, config):
        """The discriminator's logits [B, L] (float32) from its head's output `logits` and the step's `outputs`."""
        return logits

    def statistics(self, outputs):
        """Per-replica sums and counts of the step's `outputs` (see `ElectraPretrainer.pretraining_outputs`)."""
        raise NotImplementedError

    def loss_terms(self, sums, counts, config):
        """{"generator": weighted generator loss, "model": weighted loss of the discriminator-sized network}.

        Sums come from `sums`, counts from `counts` (see `total_loss`); a term is absent when the objective has no such
        network.
        """
        raise NotImplementedError

    def expected_initial_loss(self, config):
        """The loss of a freshly initialised model (a sanity check printed at step 1), or None when it depends on the
        initial weights."""
        return None

    def __repr__(self):
        return f"{type(self).__name__}()"


def _generator_statistics(outputs):
    masked = outputs["masked"]
    return statistics.masked_lm_statistics(
        outputs["mlm_logits"], masked.masked_lm_ids, masked.masked_lm_weights, outputs["sampled_ids"]
    )


def _mean(sums, counts, prefix):
    return safe_divide(sums[f"{prefix}_loss_sum"], counts[f"{prefix}_count"])


class ElectraObjective(Objective):
    """Replaced-token detection over every real token ([CLS] and [SEP] included, as the reference)."""

    name = "electra"

    def detection_weights(self, outputs):
        return outputs["input_mask"]

    def statistics(self, outputs):
        stats = _generator_statistics(outputs)
        stats.update(
            statistics.discriminator_statistics(
                outputs["disc_logits"], outputs["labels"], self.detection_weights(outputs)
            )
        )
        return stats

    def loss_terms(self, sums, counts, config):
        return {
            "generator": config.gen_weight * _mean(sums, counts, "mlm"),
            "model": config.disc_weight * _mean(sums, counts, "disc"),
        }

    def expected_initial_loss(self, config):
        return config.gen_weight * math.log(config.vocab_size) + config.disc_weight * math.log(2.0)


class Electra15Objective(ElectraObjective):
    """ELECTRA 15 %: the detection loss only at the masked positions (the generator's input slots)."""

    name = "electra_15"

    def detection_weights(self, outputs):
        masked = outputs["masked"]
        length = tf.shape(outputs["input_mask"])[1]
        indicator = positions_indicator(masked.masked_lm_positions, masked.masked_lm_weights > 0, length)
        return indicator * tf.cast(outputs["input_mask"], tf.float32)


class MaskedLMObjective(Objective):
    """BERT's masked LM with ELECTRA's dynamic masking: the discriminator-sized network alone, weight 1."""

    name = "mlm"
    uses_generator = False
    heads = (MASKED_LM_HEAD,)
    metric_names = ("masked_lm_loss", "masked_lm_accuracy")

    def statistics(self, outputs):
        masked = outputs["masked"]
        return statistics.masked_lm_statistics(
            outputs["model_mlm_logits"], masked.masked_lm_ids, masked.masked_lm_weights
        )

    def loss_terms(self, sums, counts, config):
        return {"model": _mean(sums, counts, "mlm")}

    def expected_initial_loss(self, config):
        return math.log(config.vocab_size)


class ReplaceMLMObjective(Objective):
    """Replace MLM: generator MLM + the model's MLM (weight 1) at the masked positions of the corrupted input."""

    name = "replace_mlm"
    heads = (MASKED_LM_HEAD,)
    metric_names = GENERATOR_METRICS + MODEL_MLM_METRICS

    def statistics(self, outputs):
        masked = outputs["masked"]
        stats = _generator_statistics(outputs)
        stats.update(
            statistics.masked_lm_statistics(
                outputs["model_mlm_logits"], masked.masked_lm_ids, masked.masked_lm_weights, prefix="model_mlm"
            )
        )
        return stats

    def loss_terms(self, sums, counts, config):
        return {"generator": config.gen_weight * _mean(sums, counts, "mlm"), "model": _mean(sums, counts, "model_mlm")}

    def expected_initial_loss(self, config):
        return (config.gen_weight + 1.0) * math.log(config.vocab_size)


class AllTokensMLMObjective(Objective):
    """All-Tokens MLM: generator MLM + the model predicting every real token of the corrupted input, with the copy
    mechanism (`statistics.copy_mechanism_statistics`)."""

    name = "all_tokens_mlm"
    heads = (MASKED_LM_HEAD, COPY_HEAD)
    metric_names = GENERATOR_METRICS + MODEL_MLM_METRICS

    def model_mlm_positions(self, masked, length):
        batch = tf.shape(masked.masked_lm_positions)[0]
        return tf.tile(tf.range(length, dtype=masked.masked_lm_positions.dtype)[None], [batch, 1])

    def statistics(self, outputs):
        stats = _generator_statistics(outputs)
        stats.update(
            statistics.copy_mechanism_statistics(
                outputs["model_mlm_logits"],
                outputs["copy_logits"],
                outputs["corrupted_ids"],
                outputs["input_ids"],
                outputs["input_mask"],
            )
        )
        return stats

    def loss_terms(self, sums, counts, config):
        return {"generator": config.gen_weight * _mean(sums, counts, "mlm"), "model": _mean(sums, counts, "model_mlm")}


class ElectricObjective(Objective):
    """Electric: the cloze model's loss (weight gen_weight) over every candidate token (real, not [CLS], [SEP] or
    [MASK]) of the unmasked input, and noise-contrastive estimation (weight disc_weight) over every real token.

    The discriminator's head gives an energy E(x)_t; the binary classifier's logit of "noise" at t is
    E(x)_t + log q(x_t | rest) + log(mask_prob / (1 - mask_prob)), with q the cloze model's probability of the token
    at t of the discriminator's input, without gradient (the NCE loss trains the discriminator alone). Every masked
    position is noise (label 1), even where the sample equals the original token, as the reference. The generator's
    metrics (`masked_lm_*`) are the cloze model's at the masked positions.
    """

    name = "electric"
    cloze_generator = True
    metric_names = GENERATOR_METRICS + CLOZE_METRICS + DISCRIMINATOR_METRICS

    def detection_labels(self, labels, masked):
        length = tf.shape(labels)[1]
        return tf.cast(positions_indicator(masked.masked_lm_positions, masked.masked_lm_weights > 0, length), tf.int32)

    def detection_logits(self, logits, outputs, config):
        log_q = tf.gather(tf.nn.log_softmax(outputs["cloze_logits"], axis=-1), outputs["corrupted_ids"], batch_dims=2)
        noise_odds = math.log(config.mask_prob / (1.0 - config.mask_prob))
        return tf.cast(logits, tf.float32) + tf.stop_gradient(log_q) + noise_odds

    def statistics(self, outputs):
        stats = _generator_statistics(outputs)
        stats.update(
            statistics.masked_lm_statistics(
                outputs["cloze_logits"], outputs["input_ids"], outputs["cloze_weights"], prefix="cloze"
            )
        )
        stats.update(
            statistics.discriminator_statistics(outputs["disc_logits"], outputs["labels"], outputs["input_mask"])
        )
        return stats

    def loss_terms(self, sums, counts, config):
        return {
            "generator": config.gen_weight * _mean(sums, counts, "cloze"),
            "model": config.disc_weight * _mean(sums, counts, "disc"),
        }


OBJECTIVES = {
    objective.name: objective
    for objective in (
        ElectraObjective(),
        Electra15Objective(),
        MaskedLMObjective(),
        ReplaceMLMObjective(),
        AllTokensMLMObjective(),
        ElectricObjective(),
    )
}


def get_objective(name):
    """The `Objective` called `name` (one of `config.OBJECTIVES`)."""
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise ValueError(f"unknown objective {name!r}; choose one of {sorted(OBJECTIVES)}") from None
