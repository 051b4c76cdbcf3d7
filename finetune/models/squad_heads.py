"""The two SQuAD span heads on the encoder's final hidden states, selectable by name.

* `SpanHead` ("simple", BERT): one dense layer gives independent start and end logits; for 2.0 the [CLS] span is
  the null answer.
* `JointSpanHead` ("joint", the paper's XLNet-style head): start logits; end logits computed for a given start
  from [hidden_end ; hidden_start] -> dense(tanh) -> LayerNorm -> dense(1). Training conditions on the gold start
  (teacher forcing); prediction keeps the `beam_size` best starts and, for each, the `beam_size` best ends. For
  2.0 an answerability classifier reads [CLS] and the start-probability-weighted hidden state.

`answer_mask` (1 where a span may start or end) keeps logits of question, padding and special tokens at -1e4 in
float32 whatever the compute dtype, so the softmaxes of the losses and of the beam ignore them.
"""

import keras
from keras import ops

from electra_tf.layers.initializers import truncated_normal

MASKED_LOGIT = -10000.0
HEADS = ("simple", "joint")


def _masked(logits, answer_mask):
    logits = ops.cast(logits, "float32")
    return logits + MASKED_LOGIT * (1.0 - ops.cast(answer_mask, "float32"))


@keras.saving.register_keras_serializable(package="electra_tf")
class SpanHead(keras.layers.Layer):
    """Independent start/end logits: hidden [B, S, H] -> dense(2) -> ({"start_logits", "end_logits"} [B, S])."""

    def __init__(self, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.initializer_range = initializer_range
        self.span_logits = keras.layers.Dense(
            2, kernel_initializer=truncated_normal(initializer_range), dtype=self.dtype_policy, name="span_logits"
        )

    def build(self, hidden_shape):
        self.span_logits.build(hidden_shape)

    def call(self, hidden, answer_mask, start_positions=None, training=None):
        del start_positions, training  # the ends do not depend on the start
        logits = self.span_logits(hidden)
        return {
            "start_logits": _masked(logits[..., 0], answer_mask),
            "end_logits": _masked(logits[..., 1], answer_mask),
        }

    def get_config(self):
        config = super().get_config()
        config.update(initializer_range=self.initializer_range)
        return config


@keras.saving.register_keras_serializable(package="electra_tf")
class JointSpanHead(keras.layers.Layer):
    """Start logits, start-conditioned end logits, and (with `answerable_classifier`) an "impossible" logit.

    Called with `start_positions` [B] (training) it returns start_logits, end_logits [B, S] for those starts and
    impossible_logits [B]; without, start_top_log_probs/start_top_index [B, k], end_top_log_probs/end_top_index
    [B, k, k] (ends of each top start) and impossible_logits.
    """

    def __init__(
        self,
        hidden_size,
        beam_size=20,
        answerable_classifier=True,
        initializer_range=0.02,
        layer_norm_epsilon=1e-12,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size, self.beam_size = hidden_size, beam_size
        self.answerable_classifier = bool(answerable_classifier)
        self.initializer_range, self.layer_norm_epsilon = initializer_range, layer_norm_epsilon

        def dense(units, name, **options):
            return keras.layers.Dense(
                units,
                kernel_initializer=truncated_normal(initializer_range),
                dtype=self.dtype_policy,
                name=name,
                **options,
            )

        self.start_logits = dense(1, "start_logits")
        self.end_hidden = dense(hidden_size, "end_hidden", activation="tanh")
        self.end_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="end_norm"
        )
        self.end_logits = dense(1, "end_logits")
        if self.answerable_classifier:
            self.answer_hidden = dense(hidden_size, "answer_hidden", activation="tanh")
            self.impossible_logit = dense(1, "impossible_logit", use_bias=False)

    def build(self, hidden_shape):
        self.start_logits.build(hidden_shape)
        self.end_hidden.build((None, None, 2 * self.hidden_size))
        self.end_norm.build((None, None, self.hidden_size))
        self.end_logits.build((None, None, self.hidden_size))
        if self.answerable_classifier:
            self.answer_hidden.build((None, 2 * self.hidden_size))
            self.impossible_logit.build((None, self.hidden_size))

    def _end_logits(self, hidden, start_states, answer_mask):
        """End logits for each start: hidden [B, S, H] and start_states [B, S, H] (or [B, k, S, H] with hidden
        broadcast to it) -> [B, S] (or [B, k, S])."""
        hidden = ops.broadcast_to(hidden, ops.shape(start_states))
        features = self.end_norm(self.end_hidden(ops.concatenate([hidden, start_states], axis=-1)))
        logits = ops.squeeze(self.end_logits(features), axis=-1)
        if len(logits.shape) == 3:
            answer_mask = ops.expand_dims(answer_mask, 1)
        return _masked(logits, answer_mask)

    def call(self, hidden, answer_mask, start_positions=None, training=None):
        start_logits = _masked(ops.squeeze(self.start_logits(hidden), axis=-1), answer_mask)
        outputs = {}
        if start_positions is not None:
            start_index = ops.reshape(ops.cast(start_positions, "int32"), (-1, 1, 1))
            start_states = ops.take_along_axis(hidden, start_index, axis=1)  # [B, 1, H]
            start_states = ops.broadcast_to(start_states, ops.shape(hidden))
            outputs.update(start_logits=start_logits, end_logits=self._end_logits(hidden, start_states, answer_mask))
        else:
            start_log_probs = ops.log_softmax(start_logits, axis=-1)
            top_log_probs, top_index = ops.top_k(start_log_probs, k=self.beam_size)
            start_states = ops.take_along_axis(hidden, ops.expand_dims(top_index, -1), axis=1)  # [B, k, H]
            seq_length = ops.shape(hidden)[1]
            start_states = ops.broadcast_to(
                ops.expand_dims(start_states, 2), (ops.shape(hidden)[0], self.beam_size, seq_length, self.hidden_size)
            )
            end_logits = self._end_logits(ops.expand_dims(hidden, 1), start_states, answer_mask)
            end_top_log_probs, end_top_index = ops.top_k(ops.log_softmax(end_logits, axis=-1), k=self.beam_size)
            outputs.update(
                start_top_log_probs=top_log_probs,
                start_top_index=top_index,
                end_top_log_probs=end_top_log_probs,
                end_top_index=end_top_index,
            )
        if self.answerable_classifier:
            # [CLS] plus the hidden states weighted by the start distribution (XLNet's answer-class features).
            start_probs = ops.cast(ops.softmax(start_logits, axis=-1), hidden.dtype)
            start_summary = ops.einsum("bs,bsh->bh", start_probs, hidden)
            features = self.answer_hidden(ops.concatenate([hidden[:, 0], start_summary], axis=-1))
            outputs["impossible_logits"] = ops.cast(ops.squeeze(self.impossible_logit(features), -1), "float32")
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_size=self.hidden_size,
            beam_size=self.beam_size,
            answerable_classifier=self.answerable_classifier,
            initializer_range=self.initializer_range,
            layer_norm_epsilon=self.layer_norm_epsilon,
        )
        return config
