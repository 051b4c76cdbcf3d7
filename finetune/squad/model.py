"""The SQuAD fine-tuning model: the discriminator's encoder with one of the span heads, and its loss."""

import keras
from keras import ops

from electra_tf.errors import ConfigError
from electra_tf.models.network import ElectraNetwork, as_config
from finetune.squad.heads import HEADS, JointSpanHead, SpanHead

IMPOSSIBLE_LOSS_WEIGHT = 0.5  # the answerability classifier's share of the loss (ELECTRA's SQuAD 2.0 setting)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraSquadModel(ElectraNetwork):
    """Span prediction on `[CLS] question [SEP] context [SEP]` inputs.

    Args:
        config: the pre-trained discriminator's `ElectraConfig` (or its dict).
        head: "simple" (independent start/end) or "joint" (the paper's start-conditioned ends with a beam).
        version_2: SQuAD 2.0; with the joint head this adds the answerability classifier (loss weight 0.5).
        beam_size: starts and ends per start kept by the joint head (20 x 20 in the paper).

    Inputs are dicts of int tensors `input_ids`, `input_mask`, `segment_ids`; the joint head also takes
    `start_positions` when training (teacher forcing). Spans may cover context tokens and [CLS] (the null answer).
    `fit` needs labels {"start_positions", "end_positions", "is_impossible"}; the loss is the mean of the start and
    end cross-entropies (+ 0.5 x the answerability cross-entropy).
    """

    def __init__(self, config, head="joint", version_2=False, beam_size=20, **kwargs):
        kwargs.setdefault("name", "electra_squad")
        config = as_config(config)
        if head not in HEADS:
            raise ConfigError(f"unknown SQuAD head {head!r}; choose one of {', '.join(HEADS)}")
        super().__init__(config, config, **kwargs)
        self.head_name, self.version_2, self.beam_size = head, bool(version_2), int(beam_size)
        if head == "simple":
            self.span_head = SpanHead(config.initializer_range, dtype=self.dtype_policy, name="span_head")
        else:
            self.span_head = JointSpanHead(config.hidden_size, beam_size=self.beam_size,
                                           answerable_classifier=self.version_2,
                                           initializer_range=config.initializer_range,
                                           layer_norm_epsilon=config.layer_norm_epsilon, dtype=self.dtype_policy,
                                           name="span_head")
        self.build()

    def _build_head(self):
        self.span_head.build((None, None, self.electra_config.hidden_size))

    @classmethod
    def from_discriminator(cls, discriminator, **kwargs):
        """A model whose embeddings and encoder start as copies of `discriminator`'s (a new, random head)."""
        model = cls(discriminator.electra_config, **kwargs)
        model.embeddings.set_weights(discriminator.embeddings.get_weights())
        model.encoder.set_weights(discriminator.encoder.get_weights())
        return model

    @property
    def uses_teacher_forcing(self):
        return self.head_name == "joint"

    def call(self, inputs, training=None):
        hidden = self.encode(inputs, training=training)
        # Context tokens (segment 1) and [CLS]; the final [SEP] stays allowed and is dropped in post-processing.
        answer_mask = ops.cast(inputs["segment_ids"], "int32") * ops.cast(inputs["input_mask"], "int32")
        answer_mask = ops.maximum(answer_mask, ops.cast(ops.arange(ops.shape(answer_mask)[1]) == 0, "int32")[None])
        start_positions = inputs.get("start_positions") if self.uses_teacher_forcing else None
        return self.span_head(hidden, answer_mask, start_positions=start_positions, training=training)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        del x, sample_weight, training
        # Keras loss objects (not bare functions): they scale the loss per replica under a distribution strategy.
        span_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        loss = 0.5 * (span_loss(y["start_positions"], y_pred["start_logits"])
                      + span_loss(y["end_positions"], y_pred["end_logits"]))
        if "impossible_logits" in y_pred:
            impossible = ops.cast(y["is_impossible"], "float32")[:, None]
            answerability_loss = keras.losses.BinaryCrossentropy(from_logits=True)
            loss = loss + IMPOSSIBLE_LOSS_WEIGHT * answerability_loss(impossible, y_pred["impossible_logits"][:, None])
        return loss

    def get_config(self):
        config = super().get_config()
        config.update(head=self.head_name, version_2=self.version_2, beam_size=self.beam_size)
        return config
