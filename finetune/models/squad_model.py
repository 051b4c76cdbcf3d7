"""The SQuAD fine-tuning model: an `ElectraBackbone` with one of the span heads, and its loss."""

import keras
from keras import ops

from electra_tf.errors import ConfigError
from electra_tf.models.backbone import backbone_inputs
from electra_tf.models.lora import BackboneLora
from electra_tf.training.gradient_accumulation import GradientAccumulation
from finetune.models.pretrained_parts import pretrained_backbone
from finetune.models.squad_heads import HEADS, JointSpanHead, SpanHead

IMPOSSIBLE_LOSS_WEIGHT = 0.5  # the answerability classifier's share of the loss (ELECTRA's SQuAD 2.0 setting)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraSquadModel(BackboneLora, GradientAccumulation, keras.Model):
    """Span prediction on `[CLS] question [SEP] context [SEP]` inputs: `backbone` -> `span_head`.

    Args:
        backbone: an `ElectraBackbone` (e.g. a pre-trained discriminator's `backbone`).
        head: "simple" (independent start/end) or "joint" (the paper's start-conditioned ends with a beam).
        version_2: SQuAD 2.0; with the joint head this adds the answerability classifier (loss weight 0.5).
        beam_size: starts and ends per start kept by the joint head (20 x 20 in the paper).

    Inputs are dicts of int tensors, named as the backbone's or as the reference's features (`input_ids`,
    `input_mask`, `segment_ids`); the joint head also takes
    `start_positions` when training (teacher forcing). Spans may cover context tokens and [CLS] (the null answer).
    `fit` needs labels {"start_positions", "end_positions", "is_impossible"}; the loss is the mean of the start and
    end cross-entropies (+ 0.5 x the answerability cross-entropy).
    """

    def __init__(self, backbone, head="joint", version_2=False, beam_size=20, **kwargs):
        kwargs.setdefault("name", "electra_squad")
        if head not in HEADS:
            raise ConfigError(f"unknown SQuAD head={head!r}; choose one of {', '.join(HEADS)}", arguments=("head",))
        super().__init__(dtype=backbone.dtype_policy, **kwargs)
        self.backbone = backbone
        self.head_name, self.version_2, self.beam_size = head, bool(version_2), int(beam_size)
        if head == "simple":
            self.span_head = SpanHead(backbone.initializer_range, dtype=self.dtype_policy, name="span_head")
        else:
            self.span_head = JointSpanHead(
                backbone.hidden_size,
                beam_size=self.beam_size,
                answerable_classifier=self.version_2,
                initializer_range=backbone.initializer_range,
                layer_norm_epsilon=backbone.layer_norm_epsilon,
                dtype=self.dtype_policy,
                name="span_head",
            )
        self.span_head.build((None, None, backbone.hidden_size))
        self.built = True

    @classmethod
    def from_preset(
        cls,
        preset,
        head="joint",
        version_2=False,
        beam_size=20,
        load_weights=True,
        *,
        format="auto",
        num_heads=None,
        allow_embedding_mismatch=False,
        **kwargs,
    ):
        """A SQuAD model on the pre-trained backbone at `preset` (any checkpoint
        `electra_tf.models.load_checkpoint` reads, as `ElectraTextClassifier.from_preset`), with a new span head;
        `kwargs` are the constructor's. The model takes token ids: its tokenizer is the checkpoint's
        (`load_checkpoint(preset).tokenizer()`). `format`, `num_heads` (the reference's TF1 checkpoints do not record
        it) and `allow_embedding_mismatch` are `load_checkpoint`'s; `load_weights=False` gives a freshly initialised
        backbone of the same architecture."""
        backbone = pretrained_backbone(
            cls,
            preset,
            load_weights,
            format=format,
            num_heads=num_heads,
            allow_embedding_mismatch=allow_embedding_mismatch,
        )
        return cls(backbone, head=head, version_2=version_2, beam_size=beam_size, **kwargs)

    @property
    def num_layers(self):
        return self.backbone.num_layers

    @property
    def uses_teacher_forcing(self):
        return self.head_name == "joint"

    def call(self, inputs, training=None):
        features = backbone_inputs(inputs)
        hidden = self.backbone(features, training=training)
        # Context tokens (segment 1) and [CLS]; the final [SEP] stays allowed and is dropped in post-processing.
        answer_mask = ops.cast(features["segment_ids"], "int32") * ops.cast(features["padding_mask"], "int32")
        answer_mask = ops.maximum(answer_mask, ops.cast(ops.arange(ops.shape(answer_mask)[1]) == 0, "int32")[None])
        start_positions = inputs.get("start_positions") if self.uses_teacher_forcing else None
        return self.span_head(hidden, answer_mask, start_positions=start_positions, training=training)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        del x, sample_weight, training
        # Keras loss objects (not bare functions): they scale the loss per replica under a distribution strategy.
        span_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        loss = 0.5 * (
            span_loss(y["start_positions"], y_pred["start_logits"])
            + span_loss(y["end_positions"], y_pred["end_logits"])
        )
        if "impossible_logits" in y_pred:
            impossible = ops.cast(y["is_impossible"], "float32")[:, None]
            answerability_loss = keras.losses.BinaryCrossentropy(from_logits=True)
            loss = loss + IMPOSSIBLE_LOSS_WEIGHT * answerability_loss(impossible, y_pred["impossible_logits"][:, None])
        return loss

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.layers.serialize(self.backbone),
            "head": self.head_name,
            "version_2": self.version_2,
            "beam_size": self.beam_size,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(keras.layers.deserialize(config.pop("backbone")), **config)
