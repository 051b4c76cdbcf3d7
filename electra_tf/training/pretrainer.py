"""The pre-training step: `ElectraPretrainer` adds loss, gradients, cross-replica reduction, clipping, the non-finite
policy, two-stage updates and metrics to the forward-only `ElectraPretrainingModel`."""

import math

import keras
import tensorflow as tf

from electra_tf.models.pretraining_model import ElectraPretrainingModel
from electra_tf.pretraining import randomness
from electra_tf.training.choices import check_gradient_accumulation
from electra_tf.training.gradient_accumulation import accumulate, dense_gradients
from electra_tf.training.metrics import make_pretraining_metrics, update_pretraining_metrics
from electra_tf.training.replica_updates import all_reduce_sum, apply_if, replica_shares


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraPretrainer(ElectraPretrainingModel):
    """`ElectraPretrainingModel` with the joint training step: loss = gen_weight x MLM + disc_weight (50) x
    discriminator loss in float32 (or the objective's loss, see `pretraining.objectives`).

    Gradients are summed over replicas, then clipped to `clip_norm` on the global norm of that sum (the reference
    clips the cross-replica gradient; Keras' built-in clipping would clip per replica). A step whose loss or gradient
    is not finite is not applied; `skipped_steps` and `last_skipped_step` let the callbacks apply the run's policy.

    Args:
        config, max_seq_length, seed, num_train_steps, networks: see `ElectraPretrainingModel`.
        clip_norm: global-norm clipping threshold; 0 or None disables it.
        gradient_accumulation_steps: N; each replica runs its share of a batch as N equal micro-batches, one after the
            other, and the update is the whole batch's (`accumulated_replica_gradients`).
    """

    def __init__(
        self,
        config,
        max_seq_length=128,
        seed=0,
        clip_norm=1.0,
        num_train_steps=None,
        gradient_accumulation_steps=1,
        **kwargs,
    ):
        super().__init__(config, max_seq_length=max_seq_length, seed=seed, num_train_steps=num_train_steps, **kwargs)
        check_gradient_accumulation(gradient_accumulation_steps)
        self.clip_norm = clip_norm
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.metric_trackers = make_pretraining_metrics(self.objective.metric_names)
        # The global norm of the unclipped gradient: above clip_norm every gradient is scaled down by clip_norm / it,
        # which can bring the smallest ones (the attention's query and key kernels, early on) below Adam's epsilon.
        self.metric_trackers["gradient_norm"] = keras.metrics.Mean(name="gradient_norm")
        # Batches trained, checkpointed with the model. It numbers the steps (logs, checkpoints, the data position on
        # resume, the random draws) and, unlike optimizer.iterations, also counts the steps that float16 loss
        # scaling skips.
        self.steps_trained = self.add_weight(
            name="steps_trained",
            shape=(),
            dtype="int64",
            initializer="zeros",
            trainable=False,
            aggregation="only_first_replica",
        )
        # Steps whose loss (or, without loss scaling, gradient) was NaN or infinite: their update is never applied.
        # The callbacks turn this into the `nonfinite_loss` policy (stop naming the step, or go on and log the count).
        self.skipped_steps = self.add_weight(
            name="skipped_steps",
            shape=(),
            dtype="int64",
            initializer="zeros",
            trainable=False,
            aggregation="only_first_replica",
        )
        self.last_skipped_step = self.add_weight(
            name="last_skipped_step",
            shape=(),
            dtype="int64",
            initializer="zeros",
            trainable=False,
            aggregation="only_first_replica",
        )

    def call(self, inputs, training=False):
        return super().call(inputs, step=self.steps_trained, training=training)

    def save_own_variables(self, store):
        # `.weights.h5` files hold the networks only, so they load into the forward-only ElectraPretrainingModel; the
        # step counters are training state, kept in the run's tf.train.Checkpoint.
        pass

    def load_own_variables(self, store):
        pass

    def get_config(self):
        return {
            **super().get_config(),
            "clip_norm": self.clip_norm,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }

    def pretraining_statistics(self, outputs):
        """Per-replica sums and counts of the objective (see `pretraining.objectives`)."""
        return self.objective.statistics(outputs)

    def pretraining_loss(self, sums, counts, step=None):
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
        if not config.generator_learns_by_likelihood:
            # The generator learns only from the reversed discriminator loss.
            terms.pop("generator")
        if config.generator_training == "annealed":
            # The reversed discriminator loss reaches the generator with weight share (`pretraining_outputs`).
            step = self.steps_trained if step is None else step
            terms["generator"] = terms["generator"] * (1.0 - self.adversarial_share(step))
        return tf.add_n(list(terms.values()))

    def loss_coefficients(self, statistics, step=None):
        """{name: d loss / d statistics[name]} for each sum the loss has, at the counts of `statistics`.

        Every objective's loss is a weighted sum of ratios sum / count, so it is linear in its sums: its gradient is
        the sum over them of this coefficient times the sum's gradient (what gradient accumulation adds up).
        """
        counts = tf.nest.map_structure(tf.stop_gradient, statistics)
        with tf.GradientTape() as tape:
            tape.watch(statistics)
            loss = self.pretraining_loss(statistics, counts, step)
        coefficients = tape.gradient(loss, statistics)
        return {name: coefficient for name, coefficient in coefficients.items() if coefficient is not None}

    def expected_initial_loss(self):
        """The loss a freshly initialised model should start near (None when it depends on the initial weights): for
        ELECTRA ln V + disc_weight x ln 2 (uniform generator, discriminator at p = 1/2)."""
        config = self.electra_config
        if config.two_stage_steps:
            return config.gen_weight * math.log(config.vocab_size)
        if not config.generator_learns_by_likelihood:
            return config.disc_weight * math.log(2.0)
        return self.objective.expected_initial_loss(config)

    def _in_first_stage(self, step):
        return tf.cast(step, tf.int64) < self.electra_config.two_stage_steps

    # ------------------------------------------------------------------ training
    def _loss_scale(self):
        scale = getattr(self.optimizer, "dynamic_scale", None)
        if scale is None:
            scale = self.optimizer.loss_scale_factor
        return 1.0 if scale is None else tf.cast(scale, tf.float32)

    def replica_gradients(self, data, step):
        """This replica's (loss-scaled) dense gradients of its share of the global loss, one per trainable variable,
        and the all-reduced statistics. Summed over replicas, the gradients are the single-device gradients of the
        global batch."""
        variables = self.trainable_variables
        with tf.GradientTape() as tape:
            outputs = self.pretraining_outputs(data, step, training=True)
            stats = self.pretraining_statistics(outputs)
            totals = all_reduce_sum(tf.nest.map_structure(tf.stop_gradient, stats))
            loss = self.pretraining_loss(stats, totals, step)
            scaled_loss = self.optimizer.scale_loss(loss)
        # Dense gradients: IndexedSlices from the embedding lookups cannot be all-reduced and divided uniformly.
        return dense_gradients(tape.gradient(scaled_loss, variables), variables), totals

    def accumulated_replica_gradients(self, data, step):
        """`replica_gradients` of this replica's share of the batch run as `gradient_accumulation_steps` micro-batches.

        Each micro-batch gives its statistics and, for each sum the loss has, that sum's (scaled) gradient. Added
        up over the micro-batches, and the statistics all-reduced, they are the whole batch's: the loss's gradient is
        then the sum of `loss_coefficients` at the global counts times the sums' gradients, exactly the gradient of
        the global loss (a mean of micro-batch means would weigh each micro-batch's tokens by its own counts). Each
        example is masked and sampled as in one pass: its draws are keyed on its row in the global batch
        (`randomness.micro_batch`).
        """
        variables = self.trainable_variables
        replica_batch_size = tf.shape(data["input_ids"])[0]
        shape = data["input_ids"].shape
        if shape[0] is not None:
            num_replicas = self.distribute_strategy.num_replicas_in_sync
            check_gradient_accumulation(self.gradient_accumulation_steps, shape[0] * num_replicas, num_replicas)
        # A sum's gradient adds up its tokens' gradients, hundreds of times a mean's: taken times a power of two near
        # 1 / (the micro-batch's tokens), it has the magnitude of a loss's gradient, which float16 loss scaling is
        # tuned to, and it scales back exactly.
        tokens = shape.num_elements() // self.gradient_accumulation_steps if shape.is_fully_defined() else 1
        sum_scale = 2.0 ** -round(math.log2(max(tokens, 1)))

        def micro_step(start, micro_batch):
            with randomness.micro_batch(start, replica_batch_size):
                with tf.GradientTape(persistent=True) as tape:
                    outputs = self.pretraining_outputs(micro_batch, step, training=True)
                    stats = self.pretraining_statistics(outputs)
            output_scale = tf.cast(self._loss_scale(), tf.float32) * sum_scale
            gradients = {}
            for name in self.loss_coefficients(stats, step):
                # Only the variables the sum reaches (the generator's MLM loss does not reach the discriminator):
                # an accumulator per pair, not per sum and variable.
                by_variable = tape.gradient(stats[name], variables, output_gradients=output_scale)
                gradients[name] = {
                    position: tf.convert_to_tensor(gradient)
                    for position, gradient in enumerate(by_variable)
                    if gradient is not None
                }
            del tape
            return {"gradients": gradients, "statistics": tf.nest.map_structure(tf.stop_gradient, stats)}

        accumulated = accumulate(micro_step, data, self.gradient_accumulation_steps)
        totals = all_reduce_sum(accumulated["statistics"])
        coefficients = self.loss_coefficients(totals, step)
        gradients = []
        for position, variable in enumerate(variables):
            terms = [
                coefficient / sum_scale * accumulated["gradients"][name][position]
                for name, coefficient in coefficients.items()
                if position in accumulated["gradients"][name]
            ]
            gradients.append(tf.add_n(terms) if terms else tf.zeros_like(variable))
        return gradients, totals

    def train_step(self, data):
        step = self.steps_trained
        if self.electra_config.two_stage_steps:
            self._start_second_stage_at(step)
        variables = self.trainable_variables
        if self.gradient_accumulation_steps > 1:
            gradients, totals = self.accumulated_replica_gradients(data, step)
        else:
            gradients, totals = self.replica_gradients(data, step)
        gradients = all_reduce_sum(gradients)
        global_loss = self.pretraining_loss(totals, totals, step)
        # One pass over the gradients serves both the finiteness check and the clipping: the global norm is finite
        # exactly when every gradient is (and does not overflow).
        global_norm = tf.linalg.global_norm(gradients)
        finite = self._is_finite(global_loss, global_norm)
        if self.clip_norm:
            gradients, _ = tf.clip_by_global_norm(gradients, self.clip_norm * self._loss_scale(), use_norm=global_norm)
        # The optimizer sums gradients over replicas again; hand each replica its share of the (identical) result.
        gradients = replica_shares(gradients)
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
        update_pretraining_metrics(
            self.metric_trackers, totals, tf.where(finite, global_loss, 0.0), loss_weight=tf.cast(finite, tf.float32)
        )
        self.metric_trackers["gradient_norm"].update_state(
            tf.where(finite, global_norm / self._loss_scale(), 0.0), sample_weight=tf.cast(finite, tf.float32)
        )
        results = self._metric_results()
        results["skipped_steps"] = tf.cast(self.skipped_steps, tf.float32)
        return results

    # ------------------------------------------------------------------ two-stage training
    def _start_second_stage_at(self, step):
        """At the first step of the second stage, initialise the discriminator's embeddings and encoder from the
        generator's (which then stays frozen)."""
        if self.distribute_strategy.num_replicas_in_sync > 1:
            raise ValueError("two-stage training runs on a single device; use the default strategy")
        discriminator_layers = [layer for layer in self.discriminator.backbone.layers if layer is not self.embeddings]
        generator_layers = [layer for layer in self.generator.backbone.layers if layer is not self.generator_embeddings]
        pairs = list(zip(self.embeddings.weights, self.generator_embeddings.weights))
        for target_layer, source_layer in zip(discriminator_layers, generator_layers):
            pairs += list(zip(target_layer.weights, source_layer.weights))

        def copy():
            for target, source in pairs:
                target.assign(source)
            return tf.constant(True)

        tf.cond(
            tf.equal(tf.cast(step, tf.int64), self.electra_config.two_stage_steps), copy, lambda: tf.constant(False)
        )

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
            apply_if(
                tf.logical_and(finite, in_stage), self.optimizer, [g for g, _ in selected], [v for _, v in selected]
            )

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
        loss = self.pretraining_loss(totals, totals, self.steps_trained)
        update_pretraining_metrics(self.metric_trackers, totals, loss)
        return self._metric_results()

    @property
    def metrics(self):
        return list(self.metric_trackers.values())

    def _metric_results(self):
        return {name: metric.result() for name, metric in self.metric_trackers.items()}
