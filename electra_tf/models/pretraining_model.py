"""The ELECTRA pre-training model, forward only: generator and discriminator sharing one embedding block."""

import keras
import tensorflow as tf

from electra_tf.config import as_config
from electra_tf.errors import ConfigError
from electra_tf.models.discriminator import build_discriminator
from electra_tf.models.presets import checkpoint_model, rebuilt
from electra_tf.models.pretraining_networks import (
    PretrainingNetworks,
    build_pretraining_networks,
    check_pretraining_networks,
)
from electra_tf.pretraining import objectives, randomness
from electra_tf.pretraining.masking import candidate_mask, mask_inputs
from electra_tf.pretraining.positions import gather_positions, scatter_vectors
from electra_tf.pretraining.sampling import (
    annealed_temperature,
    gumbel_max_sample,
    gumbel_softmax_gradient,
    linear_ramp,
    replace_tokens,
)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPretrainingModel(keras.Model):
    """Generator + discriminator of replaced-token detection, and everything one pre-training step computes.

    `pretraining_outputs(features, step)` runs, all in-graph: dynamic masking (85 % [MASK], 15 % kept), the generator's
    MLM at the masked positions, one Gumbel-max sample per position in float32 without gradient, the corrupted input
    and its labels, and the discriminator's logits on every token. The loss, the optimizer step and the metrics are
    not here: `electra_tf.training.pretrainer.ElectraPretrainer` adds them.

    `config.objective` selects another objective of the paper's Table 5 (`pretraining.objectives`: which heads the
    discriminator-sized network carries) and the config's generator fields the variants of its section 3.2: untied or
    gradient-disentangled (gdes) embeddings, a generator tied to the discriminator, a uniform generator, two-stage
    training and adversarial (or annealed: maximum likelihood turning adversarial) generator training. Electric
    (`objective="electric"`) replaces the generator by a two-tower cloze model on the unmasked input
    (`models.cloze_generator`) and makes the discriminator's logits noise-contrastive (`objectives.ElectricObjective`).

    Every random draw is a function of (seed, step, example index in the global batch); see `pretraining.randomness`.

    Args:
        config: `ElectraConfig` (or its dict) of the discriminator; the generator follows the sizing rule.
        max_seq_length: length of the training examples; fixes N, the number of prediction slots.
        seed: seed of the masking and sampling draws.
        num_train_steps: length of the run, over which adversarial training anneals its Gumbel-softmax temperature
            (None: no annealing) and annealed training moves from maximum likelihood to the adversarial loss (required
            for generator_training="annealed" without generator_annealing_steps).
        networks: the `PretrainingNetworks` to train, which must be those `build_pretraining_networks(config)`
            builds (ConfigError naming what differs); the model then takes their dtype policy unless given `dtype`.
            None: new ones, in the model's dtype policy. They are not part of `get_config()`: `from_config` builds
            new ones.
    """

    def __init__(self, config, max_seq_length=128, seed=0, num_train_steps=None, networks=None, **kwargs):
        kwargs.setdefault("name", "electra_pretrainer")
        if isinstance(networks, PretrainingNetworks) and networks.embeddings is not None:
            # As a keras-hub task follows its backbone: the model computes in the policy of the networks it is given.
            kwargs.setdefault("dtype", networks.embeddings.dtype_policy)
        super().__init__(**kwargs)
        config = as_config(config)
        config.check_sequence_length(max_seq_length)
        self.electra_config = config
        self.max_seq_length = int(max_seq_length)
        self.max_predictions = config.max_predictions_per_seq(self.max_seq_length)
        self.seed = int(seed)
        self.num_train_steps = num_train_steps
        if config.generator_training == "annealed" and not (config.generator_annealing_steps or num_train_steps):
            raise ConfigError(
                "generator_training=annealed needs num_train_steps or generator_annealing_steps: the "
                "steps over which the generator's loss turns adversarial",
                arguments=("generator_training", "num_train_steps", "generator_annealing_steps"),
            )
        self.objective = objectives.get_objective(config.objective)
        if networks is None:
            networks = build_pretraining_networks(config, dtype=self.dtype_policy)
        else:
            check_pretraining_networks(networks, config, self.dtype_policy)
        # Tracked in this order, which fixes the order of the weights and the checkpoints' paths.
        self.embeddings = networks.embeddings
        self.generator_embeddings = networks.generator_embeddings
        self.discriminator = networks.discriminator
        self.generator = networks.generator
        self.word_embedding_delta = networks.word_embedding_delta
        self.model_mlm_head = networks.model_mlm_head
        self.copy_head = networks.copy_head
        self.built = True

    # ------------------------------------------------------------------ forward
    def pretraining_outputs(self, features, step, training=False, draw_index=None):
        """Everything one pre-training step computes for `features` at optimizer step `step`.

        The random draws (masking, sampling) are keyed on `draw_index` (default: `step`); evaluation keys them on the
        batch's position in the evaluation set, so that every evaluation masks and samples alike.

        Returns a dict: `masked` (MaskedInputs), `input_ids` and `input_mask`; with a generator `mlm_logits`
        [B, N, V] float32, `sampled_ids` [B, N], `corrupted_ids` and `labels` [B, L] (with a cloze generator also
        `cloze_logits` [B, L, V] and its loss's `cloze_weights` [B, L]); and the heads of the objective: `disc_logits`
        [B, L] (Electric's: the NCE logits, see `objectives.ElectricObjective`), `model_mlm_logits` [B, P, V],
        `copy_logits` [B, L] (float32).
        """
        config = self.electra_config
        input_ids = tf.cast(features["input_ids"], tf.int32)
        input_mask = tf.cast(features["input_mask"], tf.int32)
        segment_ids = tf.cast(features["segment_ids"], tf.int32)
        sequence_length = input_ids.shape[1] or self.max_seq_length
        example_index = randomness.global_example_index(tf.shape(input_ids)[0])

        def noise(stream, shape):
            seeds = randomness.example_seeds(
                self.seed, step if draw_index is None else draw_index, example_index, stream
            )
            return randomness.per_example_uniform(seeds, shape)

        masked = mask_inputs(
            input_ids,
            input_mask,
            noise(randomness.STREAM_MASK_POSITIONS, [sequence_length]),
            noise(randomness.STREAM_MASK_TOKEN, [self.max_predictions]),
            mask_prob=config.mask_prob,
            max_predictions=self.max_predictions,
            mask_token_fraction=config.mask_token_fraction,
            mask_id=config.mask_id,
            special_ids=(config.cls_id, config.sep_id, config.mask_id),
        )
        outputs = {"masked": masked, "input_ids": input_ids, "input_mask": input_mask}
        model_inputs = {"input_ids": masked.input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
        if self.objective.uses_generator:
            sampling_noise = noise(randomness.STREAM_SAMPLING, [self.max_predictions, config.vocab_size])
            if self.objective.cloze_generator:
                # The cloze model reads the unmasked input: its logits at t never depend on x_t.
                cloze_logits = tf.cast(
                    self.generator(
                        {"token_ids": input_ids, "padding_mask": input_mask, "segment_ids": segment_ids},
                        training=training,
                    ),
                    tf.float32,
                )
                special_ids = (config.cls_id, config.sep_id, config.mask_id)
                outputs.update(
                    cloze_logits=cloze_logits,
                    cloze_weights=tf.cast(candidate_mask(input_ids, input_mask, special_ids), tf.float32),
                )
                mlm_logits = gather_positions(cloze_logits, masked.masked_lm_positions)
            else:
                mlm_logits = self._generator_logits(masked, input_mask, segment_ids, training)
            sampling_logits = mlm_logits
            if config.sampling_warmup_steps:
                # Uniform samples first: a discriminator that cannot read word order yet still detects them from the
                # token alone, which it cannot do once they fit the words around them (docs/cpu_budget.md).
                sampling_logits = mlm_logits * linear_ramp(step, config.sampling_warmup_steps)
            sampled_ids = gumbel_max_sample(sampling_logits, sampling_noise, config.temperature)
            corrupted_ids, labels = replace_tokens(
                input_ids, sampled_ids, masked.masked_lm_positions, masked.masked_lm_weights
            )
            labels = self.objective.detection_labels(labels, masked)
            outputs.update(mlm_logits=mlm_logits, sampled_ids=sampled_ids, corrupted_ids=corrupted_ids, labels=labels)
            model_inputs["input_ids"] = corrupted_ids
            if config.generator_learns_adversarially:
                offsets = self._adversarial_offsets(sampling_logits, sampling_noise, masked, step, sequence_length)
                if config.generator_training == "annealed":
                    # The offsets are zero-valued: scaling them scales only the reversed gradient.
                    offsets = offsets * self.adversarial_share(step)
                model_inputs["word_vector_offsets"] = offsets
        hidden = self.discriminator.backbone.encode(
            model_inputs, word_vectors=self.discriminator_word_vectors(model_inputs), training=training
        )
        if objectives.REPLACED_TOKEN_HEAD in self.objective.heads:
            outputs["disc_logits"] = self.objective.detection_logits(
                tf.cast(self.discriminator.replaced_token_head(hidden), tf.float32), outputs, config
            )
        if self.model_mlm_head is not None:
            positions = self.objective.model_mlm_positions(masked, sequence_length)
            outputs["model_mlm_logits"] = tf.cast(self.model_mlm_head(hidden, mask_positions=positions), tf.float32)
        if self.copy_head is not None:
            outputs["copy_logits"] = tf.cast(tf.squeeze(self.copy_head(hidden), -1), tf.float32)
        return outputs

    def _generator_logits(self, masked, input_mask, segment_ids, training):
        """[B, N, V] float32 logits at the masked positions; zeros (uniform samples) without a generator network."""
        if self.generator is None:
            shape = tf.concat([tf.shape(masked.masked_lm_positions), [self.electra_config.vocab_size]], axis=0)
            return tf.zeros(shape, tf.float32)
        logits = self.generator(
            {
                "token_ids": masked.input_ids,
                "padding_mask": input_mask,
                "segment_ids": segment_ids,
                "mask_positions": masked.masked_lm_positions,
            },
            training=training,
        )
        return tf.cast(logits, tf.float32)

    def discriminator_word_vectors(self, inputs):
        """The discriminator's word vectors when a variant modifies them (gdes, adversarial offsets), else None (the
        embeddings look them up)."""
        offsets = inputs.get("word_vector_offsets")
        if self.word_embedding_delta is None and offsets is None:
            return None
        input_ids = inputs["input_ids"]
        vectors = self.embeddings.word_embeddings(input_ids)
        if self.word_embedding_delta is not None:
            vectors = tf.stop_gradient(vectors) + self.word_embedding_delta(input_ids)
        if offsets is not None:
            vectors = vectors + tf.cast(offsets, vectors.dtype)
        return vectors

    def adversarial_share(self, step):
        """Under generator_training="annealed", the weight of the adversarial objective in the generator's loss at
        `step` (that of maximum likelihood is one minus it): linear from 0 at step 0 to 1 at
        `generator_annealing_steps` (default: `num_train_steps`)."""
        return linear_ramp(step, self.electra_config.generator_annealing_steps or self.num_train_steps)

    def _adversarial_offsets(self, mlm_logits, sampling_noise, masked, step, sequence_length):
        """Zero-valued word-vector offsets [B, L, E] through which the discriminator loss reaches the generator with
        its sign reversed (the generator maximises it), by the Gumbel-softmax straight-through estimator.

        The word table enters without gradient: only the generator's logits get the reversed gradient.
        """
        config = self.electra_config
        relaxation_temperature = annealed_temperature(
            step, config.adversarial_temperature_start, config.adversarial_temperature_end, self.num_train_steps
        )
        relaxed = gumbel_softmax_gradient(mlm_logits, sampling_noise, config.temperature, relaxation_temperature)
        table = tf.stop_gradient(tf.cast(self.embeddings.word_embeddings.embeddings, tf.float32))
        vectors = -tf.einsum("bnv,ve->bne", relaxed, table)
        return scatter_vectors(vectors, masked.masked_lm_positions, masked.masked_lm_weights > 0, sequence_length)

    def call(self, inputs, step=0, training=False):
        outputs = self.pretraining_outputs(inputs, step, training=training)
        names = ("mlm_logits", "disc_logits", "labels", "model_mlm_logits", "copy_logits", "cloze_logits")
        results = {name: outputs[name] for name in names if name in outputs}
        results["masked_lm_positions"] = outputs["masked"].masked_lm_positions
        return results

    # ------------------------------------------------------------------ export
    def pretrained_discriminator(self):
        """A standalone `ElectraDiscriminator` (own embedding block) with this model's discriminator weights: what
        fine-tuning starts from. With gradient-disentangled sharing its word table is E_generator + E_delta."""
        # float32 layers: what is saved is the model, not the policy of the run that trained it (a loader applies its
        # own, see `electra_tf.models.ours_reading.load_preset`).
        standalone = build_discriminator(self.electra_config, dtype="float32")
        standalone.set_weights(self.discriminator.get_weights())
        if self.word_embedding_delta is not None:
            table = standalone.backbone.embeddings.word_embeddings.embeddings
            table.assign(self.embeddings.word_embeddings.embeddings + self.word_embedding_delta.embeddings)
        return standalone

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "config": self.electra_config.to_dict(),
            "max_seq_length": self.max_seq_length,
            "seed": self.seed,
            "num_train_steps": self.num_train_steps,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(config=config.pop("config"), **config)

    @classmethod
    def from_preset(
        cls,
        preset,
        load_weights=True,
        *,
        format="auto",
        num_heads=None,
        vocab_file=None,
        allow_embedding_mismatch=False,
        **kwargs,
    ):
        """The generator and discriminator in the checkpoint at `preset`: a pre-training run's model_dir, the
        reference's TF1 pre-training checkpoint or a Hugging Face discriminator/ + generator/ pair (any format
        `electra_tf.models.load_checkpoint` reads that holds both); a checkpoint holding one network is refused,
        naming the class that loads it.

        `kwargs` are the constructor's (`max_seq_length`, default min(128, max_position_embeddings); `seed`;
        `num_train_steps`; `dtype`); `load_weights=False` gives the same networks freshly initialised. `format`,
        `num_heads`, `vocab_file` and `allow_embedding_mismatch` are `load_checkpoint`'s.
        """
        model = checkpoint_model(
            cls,
            preset,
            format=format,
            num_heads=num_heads,
            vocab_file=vocab_file,
            allow_embedding_mismatch=allow_embedding_mismatch,
        )
        return rebuilt(model, cls, load_weights, **kwargs)
