"""The ELECTRA pre-training model: generator and discriminator sharing one embedding block, and the joint step."""

import math

import keras
import tensorflow as tf

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.generator import ElectraGenerator
from electra_tf.layers import generator_head
from electra_tf.models.network import as_config, make_embeddings
from electra_tf.pretraining import objectives, randomness
from electra_tf.pretraining.masking import mask_inputs
from electra_tf.pretraining.positions import scatter_vectors
from electra_tf.pretraining.sampling import (
    annealed_temperature, gumbel_max_sample, gumbel_softmax_gradient, replace_tokens)
from electra_tf.training.metrics import make_pretraining_metrics, update_pretraining_metrics
from electra_tf.training.replica_updates import all_reduce_sum, apply_if


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPretrainer(keras.Model):
    """Generator + discriminator trained jointly with replaced-token detection.

    Each step (all in-graph): dynamic masking (85 % [MASK], 15 % kept), generator MLM at the masked positions, one
    Gumbel-max sample per position in float32 without gradient, the corrupted input and its labels, discriminator
    logits on every token, and loss = gen_weight x MLM + disc_weight (50) x discriminator loss in float32.

    `config.objective` selects another objective of the paper's Table 5 (`pretraining.objectives`: which heads the
    discriminator-sized network carries and what loss they get) and the config's generator fields the variants of its
    section 3.2: untied or gradient-disentangled (gdes) embeddings, a generator tied to the discriminator, a uniform
    generator, two-stage training (single device) and adversarial generator training.

    Every random draw is a function of (seed, step, example index in the global batch); see `pretraining.randomness`.
    Gradients are summed over replicas, then clipped to `clip_norm` on the global norm of that sum (the reference
    clips the cross-replica gradient; Keras' built-in clipping would clip per replica).

    Args:
        config: `ElectraConfig` (or its dict) of the discriminator; the generator follows the sizing rule.
        max_seq_length: length of the training examples; fixes N, the number of prediction slots.
        seed: seed of the masking and sampling draws.
        clip_norm: global-norm clipping threshold; 0 or None disables it.
        num_train_steps: length of the run, over which adversarial training anneals its Gumbel-softmax temperature
            (None: no annealing).
    """

    def __init__(self, config, max_seq_length=128, seed=0, clip_norm=1.0, num_train_steps=None, **kwargs):
        kwargs.setdefault("name", "electra_pretrainer")
        super().__init__(**kwargs)
        config = as_config(config)
        config.check_sequence_length(max_seq_length)
        self.electra_config = config
        self.max_seq_length = int(max_seq_length)
        self.max_predictions = config.max_predictions_per_seq(self.max_seq_length)
        self.seed = int(seed)
        self.clip_norm = clip_norm
        self.num_train_steps = num_train_steps
        self.objective = objectives.get_objective(config.objective)
        self._build_networks(config)
        self._trackers = make_pretraining_metrics(self.objective.metric_names)
        # Batches trained, checkpointed with the model. It numbers the steps (logs, checkpoints, the data position on
        # resume, the random draws) and, unlike optimizer.iterations, also counts the steps that float16 loss
        # scaling skips.
        self.steps_trained = self.add_weight(name="steps_trained", shape=(), dtype="int64", initializer="zeros",
                                             trainable=False, aggregation="only_first_replica")
        # Steps whose loss (or, without loss scaling, gradient) was NaN or infinite: their update is never applied.
        # The callbacks turn this into the --nonfinite_loss policy (stop naming the step, or go on and log the count).
        self.skipped_steps = self.add_weight(name="skipped_steps", shape=(), dtype="int64", initializer="zeros",
                                             trainable=False, aggregation="only_first_replica")
        self.last_skipped_step = self.add_weight(name="last_skipped_step", shape=(), dtype="int64",
                                                 initializer="zeros", trainable=False,
                                                 aggregation="only_first_replica")
        self.built = True

    def _build_networks(self, config):
        dtype = self.dtype_policy
        # `embeddings` is the discriminator's block, shared with the generator unless untied (two-stage training
        # copies the generator's into it when the second stage starts).
        self.embeddings = make_embeddings(config, dtype=dtype)
        self.embeddings.build()
        self.generator_embeddings = None
        if config.untied_embeddings or config.two_stage_steps:
            self.generator_embeddings = make_embeddings(config, dtype=dtype, name="generator_embeddings")
            self.generator_embeddings.build()
        self.generator = None
        if config.has_generator_network and not config.tie_all_weights:
            self.generator = ElectraGenerator(config, embeddings=self.generator_embeddings or self.embeddings,
                                              dtype=dtype)
        self.word_embedding_delta = None
        if config.embedding_sharing == "gdes":
            # E_delta starts at zero, so the discriminator starts from the generator's table.
            self.word_embedding_delta = keras.layers.Embedding(
                config.vocab_size, config.embedding_size, embeddings_initializer="zeros", dtype=dtype,
                name="word_embeddings_delta")
        self.discriminator = ElectraDiscriminator(config, embeddings=self.embeddings,
                                                  word_embedding_delta=self.word_embedding_delta, dtype=dtype)
        if config.tie_all_weights:
            self.generator = ElectraGenerator(config, embeddings=self.embeddings, encoder=self.discriminator.encoder,
                                              dtype=dtype)
        self.model_mlm_head = None
        if objectives.MASKED_LM_HEAD in self.objective.heads:
            self.model_mlm_head = generator_head(self.embeddings.word_embeddings, config.layer_norm_epsilon,
                                                 config.initializer_range, dtype=dtype, name="model_mlm_predictions")
            self.model_mlm_head.build((None, None, config.hidden_size))
        self.copy_head = None
        if objectives.COPY_HEAD in self.objective.heads:
            # Glorot-uniform 1-unit layer, as the reference's heads.
            self.copy_head = keras.layers.Dense(1, dtype=dtype, name="copy_prediction")
            self.copy_head.build((None, None, config.hidden_size))

    # ------------------------------------------------------------------ forward
    def pretraining_outputs(self, features, step, training=False):
        """Everything one pre-training step computes for `features` at optimizer step `step`.

        Returns a dict: `masked` (MaskedInputs), `input_ids` and `input_mask`; with a generator `mlm_logits`
        [B, N, V] float32, `sampled_ids` [B, N], `corrupted_ids` and `labels` [B, L]; and the heads of the objective:
        `disc_logits` [B, L], `model_mlm_logits` [B, P, V], `copy_logits` [B, L] (float32).
        """
        config = self.electra_config
        input_ids = tf.cast(features["input_ids"], tf.int32)
        input_mask = tf.cast(features["input_mask"], tf.int32)
        segment_ids = tf.cast(features["segment_ids"], tf.int32)
        sequence_length = input_ids.shape[1] or self.max_seq_length
        example_index = randomness.global_example_index(tf.shape(input_ids)[0])

        def noise(stream, shape):
            seeds = randomness.example_seeds(self.seed, step, example_index, stream)
            return randomness.per_example_uniform(seeds, shape)

        masked = mask_inputs(
            input_ids, input_mask,
            noise(randomness.STREAM_MASK_POSITIONS, [sequence_length]),
            noise(randomness.STREAM_MASK_TOKEN, [self.max_predictions]),
            mask_prob=config.mask_prob, max_predictions=self.max_predictions,
            mask_token_fraction=config.mask_token_fraction, mask_id=config.mask_id,
            special_ids=(config.cls_id, config.sep_id, config.mask_id))
        outputs = {"masked": masked, "input_ids": input_ids, "input_mask": input_mask}
        model_inputs = {"input_ids": masked.input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
        if self.objective.uses_generator:
            sampling_noise = noise(randomness.STREAM_SAMPLING, [self.max_predictions, config.vocab_size])
            mlm_logits = self._generator_logits(masked, input_mask, segment_ids, training)
            sampled_ids = gumbel_max_sample(mlm_logits, sampling_noise, config.temperature)
            corrupted_ids, labels = replace_tokens(input_ids, sampled_ids, masked.masked_lm_positions,
                                                   masked.masked_lm_weights)
            outputs.update(mlm_logits=mlm_logits, sampled_ids=sampled_ids, corrupted_ids=corrupted_ids, labels=labels)
            model_inputs["input_ids"] = corrupted_ids
            if config.generator_training == "adversarial":
                model_inputs["word_vector_offsets"] = self._adversarial_offsets(
                    mlm_logits, sampling_noise, masked, step, sequence_length)
        hidden = self.discriminator.encode(model_inputs, training=training)
        if objectives.REPLACED_TOKEN_HEAD in self.objective.heads:
            outputs["disc_logits"] = tf.cast(self.discriminator.head(hidden), tf.float32)
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
            {"input_ids": masked.input_ids, "input_mask": input_mask, "segment_ids": segment_ids,
             "masked_lm_positions": masked.masked_lm_positions}, training=training)
        return tf.cast(logits, tf.float32)

    def _adversarial_offsets(self, mlm_logits, sampling_noise, masked, step, sequence_length):
        """Zero-valued word-vector offsets [B, L, E] through which the discriminator loss reaches the generator with
        its sign reversed (the generator maximises it), by the Gumbel-softmax straight-through estimator.

        The word table enters without gradient: only the generator's logits get the reversed gradient.
        """
        config = self.electra_config
        relaxation_temperature = annealed_temperature(step, config.adversarial_temperature_start,
                                                      config.adversarial_temperature_end, self.num_train_steps)
        relaxed = gumbel_softmax_gradient(mlm_logits, sampling_noise, config.temperature, relaxation_temperature)
        table = tf.stop_gradient(tf.cast(self.embeddings.word_embeddings.embeddings, tf.float32))
        vectors = -tf.einsum("bnv,ve->bne", relaxed, table)
        return scatter_vectors(vectors, masked.masked_lm_positions, masked.masked_lm_weights > 0, sequence_length)

    def pretraining_statistics(self, outputs):
        """Per-replica sums and counts of the objective (see `pretraining.objectives`)."""
        return self.objective.statistics(outputs)

    def _total_loss(self, sums, counts, step=None):
        """The objective's loss with sums from `sums` and counts from `counts`.

        On one replica both are that replica's statistics. Under a strategy, `sums` are the replica's own (they carry
        the gradient) and `counts` the all-reduced ones: each replica's loss is then its share of the global mean, and
        the summed gradients equal the single-device gradient of the same global batch exactly.
        """
        config = self.electra_config
        terms = self.objective.loss_terms(sums, counts, config)
        if config.two_stage_steps:
            step = self.steps_trained if step is None else step
            return tf.where(self._in_first_stage(step), terms["generator"], terms["model"])
        if config.generator_training == "adversarial":
            # The generator learns only from the reversed discriminator loss, not by maximum likelihood.
            terms.pop("generator")
        return tf.add_n(list(terms.values()))

    def expected_initial_loss(self):
        """The loss a freshly initialised model should start near (None when it depends on the initial weights): for
        ELECTRA ln V + disc_weight x ln 2 (uniform generator, discriminator at p = 1/2)."""
        config = self.electra_config
        if config.two_stage_steps:
            return config.gen_weight * math.log(config.vocab_size)
        if config.generator_training == "adversarial":
            return config.disc_weight * math.log(2.0)
        return self.objective.expected_initial_loss(config)

    def _in_first_stage(self, step):
        return tf.cast(step, tf.int64) < self.electra_config.two_stage_steps

    def call(self, inputs, training=False):
        step = self.steps_trained
        outputs = self.pretraining_outputs(inputs, step, training=training)
        names = ("mlm_logits", "disc_logits", "labels", "model_mlm_logits", "copy_logits")
        results = {name: outputs[name] for name in names if name in outputs}
        results["masked_lm_positions"] = outputs["masked"].masked_lm_positions
        return results

    # ------------------------------------------------------------------ training
    def _loss_scale(self):
        scale = getattr(self.optimizer, "dynamic_scale", None)
        if scale is None:
            scale = self.optimizer.loss_scale_factor
        return 1.0 if scale is None else tf.cast(scale, tf.float32)

    def train_step(self, data):
        step = self.steps_trained
        if self.electra_config.two_stage_steps:
            self._start_second_stage_at(step)
        variables = self.trainable_variables
        with tf.GradientTape() as tape:
            outputs = self.pretraining_outputs(data, step, training=True)
            stats = self.pretraining_statistics(outputs)
            totals = all_reduce_sum(tf.nest.map_structure(tf.stop_gradient, stats))
            loss = self._total_loss(stats, totals, step)
            scaled_loss = self.optimizer.scale_loss(loss)
        gradients = tape.gradient(scaled_loss, variables)
        # Dense gradients: IndexedSlices from the embedding lookups cannot be all-reduced and divided uniformly.
        gradients = [tf.convert_to_tensor(g) if g is not None else tf.zeros_like(v)
                     for g, v in zip(gradients, variables)]
        gradients = all_reduce_sum(gradients)
        global_loss = self._total_loss(totals, totals, step)
        # One pass over the gradients serves both the finiteness check and the clipping: the global norm is finite
        # exactly when every gradient is (and does not overflow).
        global_norm = tf.linalg.global_norm(gradients)
        finite = self._is_finite(global_loss, global_norm)
        if self.clip_norm:
            gradients, _ = tf.clip_by_global_norm(gradients, self.clip_norm * self._loss_scale(),
                                                  use_norm=global_norm)
        # The optimizer sums gradients over replicas again; hand each replica its share of the (identical) result.
        num_replicas = self.distribute_strategy.num_replicas_in_sync
        if num_replicas > 1:
            gradients = [g / num_replicas for g in gradients]
        if self.electra_config.two_stage_steps:
            self._apply_by_stage(step, finite, gradients, variables)
        else:
            apply_if(finite, self.optimizer, gradients, variables)
        # Steps are numbered from 1 in logs and messages: this one is steps_trained + 1 until the increment.
        self.last_skipped_step.assign(tf.where(finite, self.last_skipped_step, self.steps_trained + 1))
        self.skipped_steps.assign_add(tf.cast(tf.logical_not(finite), tf.int64))
        self.steps_trained.assign_add(1)
        # A skipped step contributes nothing to the metric window (a NaN would poison its means until the reset).
        totals = tf.nest.map_structure(lambda t: tf.where(finite, t, tf.zeros_like(t)), totals)
        update_pretraining_metrics(self._trackers, totals, tf.where(finite, global_loss, 0.0),
                                   loss_weight=tf.cast(finite, tf.float32))
        results = self._metric_results()
        skipped_steps = tf.cast(self.skipped_steps, tf.float32)
        results["skipped_steps"] = tf.reshape(skipped_steps, tf.shape(results["loss"]))
        return results

    # ------------------------------------------------------------------ two-stage training
    def _start_second_stage_at(self, step):
        """At the first step of the second stage, initialise the discriminator's embeddings and encoder from the
        generator's (which then stays frozen)."""
        if self.distribute_strategy.num_replicas_in_sync > 1:
            raise ValueError("two-stage training runs on a single device; use --strategy=default")
        pairs = (list(zip(self.embeddings.weights, self.generator_embeddings.weights))
                 + list(zip(self.discriminator.encoder.weights, self.generator.encoder.weights)))

        def copy():
            for target, source in pairs:
                target.assign(source)
            return tf.constant(True)

        tf.cond(tf.equal(tf.cast(step, tf.int64), self.electra_config.two_stage_steps), copy,
                lambda: tf.constant(False))

    def _apply_by_stage(self, step, finite, gradients, variables):
        """First stage: update the generator (with its embeddings) only; second stage: everything else only, so the
        generator's Adam state cannot move it either."""
        if not self.optimizer.built:
            # Built with every variable up front: built lazily by the first stage's apply, it would know only those.
            self.optimizer.build(variables)
        generator_ids = {id(variable) for variable in self.generator.trainable_variables}
        first_stage = self._in_first_stage(step)
        for in_stage, is_generator in ((first_stage, True), (tf.logical_not(first_stage), False)):
            selected = [(g, v) for g, v in zip(gradients, variables) if (id(v) in generator_ids) == is_generator]
            apply_if(tf.logical_and(finite, in_stage), self.optimizer, [g for g, _ in selected],
                      [v for _, v in selected])

    def _is_finite(self, global_loss, gradient_norm):
        """Whether this step's update may be applied: the same answer on every replica (all inputs are all-reduced).

        Under float16 loss scaling, non-finite gradients with a finite loss are overflow that the LossScaleOptimizer
        handles itself (skips and halves the scale), so only the loss is checked there.
        """
        finite = tf.reduce_all(tf.math.is_finite(global_loss))
        if isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
            return finite
        return tf.logical_and(finite, tf.math.is_finite(gradient_norm))

    def test_step(self, data):
        outputs = self.pretraining_outputs(data, self.steps_trained, training=False)
        totals = all_reduce_sum(self.pretraining_statistics(outputs))
        update_pretraining_metrics(self._trackers, totals, self._total_loss(totals, totals, self.steps_trained))
        return self._metric_results()

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Keras' fit reduces a first batch across replicas only to learn its shapes; under MultiWorkerMirroredStrategy
        # that cross-worker reduce fails on a dict batch ("Attempt to convert a value ({'input_ids': PerReplica..."),
        # so build from the known shapes instead. Keras 3 internal hook; other strategies keep Keras' path.
        strategy = self._distribute_strategy
        if data_batch is not None or not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
            return super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)
        spec = {name: keras.KerasTensor((None, self.max_seq_length), "int32")
                for name in ("input_ids", "input_mask", "segment_ids")}
        with strategy.scope():
            self._symbolic_build(data_batch=spec)

    @property
    def metrics(self):
        return list(self._trackers.values())

    def _metric_results(self):
        results = {name: metric.result() for name, metric in self._trackers.items()}
        if isinstance(self.distribute_strategy, tf.distribute.MultiWorkerMirroredStrategy):
            # Keras reduces step outputs across workers with reduce(MEAN, axis=0), which rejects scalars; every
            # replica holds the same (globally all-reduced) value, so a [1] vector reduces to that value.
            results = {name: tf.reshape(value, [1]) for name, value in results.items()}
        return results

    # ------------------------------------------------------------------ serialisation
    def pretrained_discriminator(self):
        """A standalone `ElectraDiscriminator` (own embedding block) with this model's discriminator weights: what
        fine-tuning starts from. With gradient-disentangled sharing its word table is E_generator + E_delta."""
        standalone = ElectraDiscriminator(self.electra_config, dtype=self.dtype_policy)
        source = self.discriminator
        standalone.embeddings.set_weights(source.embeddings.get_weights())
        standalone.encoder.set_weights(source.encoder.get_weights())
        standalone.head.set_weights(source.head.get_weights())
        if self.word_embedding_delta is not None:
            table = standalone.embeddings.word_embeddings.embeddings
            table.assign(source.embeddings.word_embeddings.embeddings + self.word_embedding_delta.embeddings)
        return standalone

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "config": self.electra_config.to_dict(),
                "max_seq_length": self.max_seq_length, "seed": self.seed, "clip_norm": self.clip_norm,
                "num_train_steps": self.num_train_steps}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(config=config.pop("config"), **config)
