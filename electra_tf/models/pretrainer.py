"""The ELECTRA pre-training model: generator and discriminator sharing one embedding block, and the joint step."""

import keras
import tensorflow as tf

from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.models.generator import ElectraGenerator
from electra_tf.models.network import as_config, make_embeddings
from electra_tf.pretraining import objective, randomness
from electra_tf.pretraining.masking import mask_inputs
from electra_tf.pretraining.sampling import gumbel_max_sample, replace_tokens
from electra_tf.training.metrics import make_pretraining_metrics, update_pretraining_metrics


def _all_reduce_sum(values):
    """Sum `values` (a structure of tensors) over replicas; the identity outside a strategy."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return values
    return context.all_reduce(tf.distribute.ReduceOp.SUM, values)


def _apply_if(condition, optimizer, gradients, variables):
    """`optimizer.apply(gradients, variables)` only when `condition` (a scalar bool, equal on every replica).

    The optimizer's update calls `merge_call`, which a strategy does not allow inside a `tf.cond` in replica context,
    so under such strategies the cond runs in cross-replica context (the pattern of Keras' LossScaleOptimizer).
    """
    def apply():
        optimizer.apply(gradients, variables)

    def skip():
        pass

    if tf.__internal__.distribute.strategy_supports_no_merge_call():
        tf.cond(condition, apply, skip)
        return

    def cross_replica(distribution, condition, gradients, variables):
        first_replica_condition = distribution.experimental_local_results(condition)[0]

        def apply_on_every_replica():
            distribution.extended.call_for_each_replica(optimizer.apply, args=(gradients, variables))

        tf.cond(first_replica_condition, apply_on_every_replica, skip)

    tf.distribute.get_replica_context().merge_call(cross_replica, args=(condition, gradients, variables))


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPretrainer(keras.Model):
    """Generator + discriminator trained jointly with replaced-token detection.

    Each step (all in-graph): dynamic masking (85 % [MASK], 15 % kept), generator MLM at the masked positions, one
    Gumbel-max sample per position in float32 without gradient, the corrupted input and its labels, discriminator
    logits on every token, and loss = gen_weight x MLM + disc_weight (50) x discriminator loss in float32.

    Every random draw is a function of (seed, step, example index in the global batch); see `pretraining.randomness`.
    Gradients are summed over replicas, then clipped to `clip_norm` on the global norm of that sum (the reference
    clips the cross-replica gradient; Keras' built-in clipping would clip per replica).

    Args:
        config: `ElectraConfig` (or its dict) of the discriminator; the generator follows the sizing rule.
        max_seq_length: length of the training examples; fixes N, the number of prediction slots.
        seed: seed of the masking and sampling draws.
        clip_norm: global-norm clipping threshold; 0 or None disables it.
    """

    def __init__(self, config, max_seq_length=128, seed=0, clip_norm=1.0, **kwargs):
        kwargs.setdefault("name", "electra_pretrainer")
        super().__init__(**kwargs)
        config = as_config(config)
        config.check_sequence_length(max_seq_length)
        self.electra_config = config
        self.max_seq_length = int(max_seq_length)
        self.max_predictions = config.max_predictions_per_seq(self.max_seq_length)
        self.seed = int(seed)
        self.clip_norm = clip_norm
        self.embeddings = make_embeddings(config, dtype=self.dtype_policy)
        self.embeddings.build()
        self.generator = ElectraGenerator(config, embeddings=self.embeddings, dtype=self.dtype_policy)
        self.discriminator = ElectraDiscriminator(config, embeddings=self.embeddings, dtype=self.dtype_policy)
        self._trackers = make_pretraining_metrics()
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

    # ------------------------------------------------------------------ forward
    def pretraining_outputs(self, features, step, training=False):
        """Everything one pre-training step computes for `features` at optimizer step `step`.

        Returns a dict: `masked` (MaskedInputs), `mlm_logits` [B, N, V] float32, `sampled_ids` [B, N],
        `corrupted_ids` and `labels` [B, L], `disc_logits` [B, L] float32, `input_mask`.
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
        mlm_logits = self.generator(
            {"input_ids": masked.input_ids, "input_mask": input_mask, "segment_ids": segment_ids,
             "masked_lm_positions": masked.masked_lm_positions}, training=training)
        mlm_logits = tf.cast(mlm_logits, tf.float32)
        sampled_ids = gumbel_max_sample(
            mlm_logits, noise(randomness.STREAM_SAMPLING, [self.max_predictions, config.vocab_size]),
            config.temperature)
        corrupted_ids, labels = replace_tokens(input_ids, sampled_ids, masked.masked_lm_positions,
                                               masked.masked_lm_weights)
        disc_logits = self.discriminator(
            {"input_ids": corrupted_ids, "input_mask": input_mask, "segment_ids": segment_ids}, training=training)
        return {"masked": masked, "mlm_logits": mlm_logits, "sampled_ids": sampled_ids, "corrupted_ids": corrupted_ids,
                "labels": labels, "disc_logits": tf.cast(disc_logits, tf.float32), "input_mask": input_mask}

    def pretraining_statistics(self, outputs):
        """Per-replica sums and counts of the objective (see `pretraining.objective`)."""
        masked = outputs["masked"]
        stats = objective.masked_lm_statistics(outputs["mlm_logits"], masked.masked_lm_ids,
                                               masked.masked_lm_weights, outputs["sampled_ids"])
        stats.update(objective.discriminator_statistics(outputs["disc_logits"], outputs["labels"],
                                                        outputs["input_mask"]))
        return stats

    def _total_loss(self, sums, counts):
        config = self.electra_config
        return objective.total_loss(sums, counts, config.gen_weight, config.disc_weight)

    def call(self, inputs, training=False):
        step = self.steps_trained
        outputs = self.pretraining_outputs(inputs, step, training=training)
        return {"mlm_logits": outputs["mlm_logits"], "disc_logits": outputs["disc_logits"],
                "labels": outputs["labels"], "masked_lm_positions": outputs["masked"].masked_lm_positions}

    # ------------------------------------------------------------------ training
    def _loss_scale(self):
        scale = getattr(self.optimizer, "dynamic_scale", None)
        if scale is None:
            scale = self.optimizer.loss_scale_factor
        return 1.0 if scale is None else tf.cast(scale, tf.float32)

    def train_step(self, data):
        step = self.steps_trained
        variables = self.trainable_variables
        with tf.GradientTape() as tape:
            outputs = self.pretraining_outputs(data, step, training=True)
            stats = self.pretraining_statistics(outputs)
            totals = _all_reduce_sum(tf.nest.map_structure(tf.stop_gradient, stats))
            loss = self._total_loss(stats, totals)
            scaled_loss = self.optimizer.scale_loss(loss)
        gradients = tape.gradient(scaled_loss, variables)
        # Dense gradients: IndexedSlices from the embedding lookups cannot be all-reduced and divided uniformly.
        gradients = [tf.convert_to_tensor(g) if g is not None else tf.zeros_like(v)
                     for g, v in zip(gradients, variables)]
        gradients = _all_reduce_sum(gradients)
        global_loss = self._total_loss(totals, totals)
        finite = self._is_finite(global_loss, gradients)
        if self.clip_norm:
            gradients, _ = tf.clip_by_global_norm(gradients, self.clip_norm * self._loss_scale())
        # The optimizer sums gradients over replicas again; hand each replica its share of the (identical) result.
        num_replicas = self.distribute_strategy.num_replicas_in_sync
        if num_replicas > 1:
            gradients = [g / num_replicas for g in gradients]
        _apply_if(finite, self.optimizer, gradients, variables)
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

    def _is_finite(self, global_loss, gradients):
        """Whether this step's update may be applied: the same answer on every replica (all inputs are all-reduced).

        Under float16 loss scaling, non-finite gradients with a finite loss are overflow that the LossScaleOptimizer
        handles itself (skips and halves the scale), so only the loss is checked there.
        """
        finite = tf.reduce_all(tf.math.is_finite(global_loss))
        if isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
            return finite
        gradients_finite = [tf.reduce_all(tf.math.is_finite(g)) for g in gradients]
        return tf.logical_and(finite, tf.reduce_all(tf.stack(gradients_finite)))

    def test_step(self, data):
        outputs = self.pretraining_outputs(data, self.steps_trained, training=False)
        totals = _all_reduce_sum(self.pretraining_statistics(outputs))
        update_pretraining_metrics(self._trackers, totals, self._total_loss(totals, totals))
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
    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "config": self.electra_config.to_dict(),
                "max_seq_length": self.max_seq_length, "seed": self.seed, "clip_norm": self.clip_norm}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(config=config.pop("config"), **config)
