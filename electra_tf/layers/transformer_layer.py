"""One BERT post-LayerNorm Transformer layer with the reference's sub-layers as public attributes."""

import math

import keras
import tensorflow as tf
from keras import ops

from electra_tf.layers.activations import get_activation
from electra_tf.layers.dropout import ElectraDropout
from electra_tf.layers.fused_ops import attention_probs, bias_dropout_residual_layer_norm, bias_gelu
from electra_tf.layers.initializers import truncated_normal

# The reference adds -10000 to the attention scores of padded keys; finite, so it is exact in float16 and bfloat16.
PADDING_ATTENTION_BIAS = -10000.0


ATTENTION_DIRECTIONS = ("left_to_right", "right_to_left")


def attention_bias_from_padding_mask(padding_mask, dtype, direction=None):
    """Additive attention bias: 0 for visible keys, -10000 for padded ones, [batch, 1, 1, length].

    Computed once per forward pass and shared by every layer (the reference's `create_attention_mask_from_input_mask`
    followed by its `adder`). With `direction` ("left_to_right": a query sees the keys at and before it;
    "right_to_left": at and after it) the keys on the other side are hidden too, [batch, 1, length, length], as the
    reference's causal towers (one -10000 whatever hides a key).
    """
    # keras.ops rather than tf: the backbone also calls this on symbolic inputs when it builds its functional graph.
    keep = ops.cast(ops.expand_dims(ops.expand_dims(padding_mask, 1), 1), dtype)
    if direction is not None:
        if direction not in ATTENTION_DIRECTIONS:
            raise ValueError(f"unknown attention direction {direction!r}; choose one of {list(ATTENTION_DIRECTIONS)}")
        length = ops.shape(padding_mask)[1]
        visible = ops.ones((length, length), dtype=dtype)
        visible = ops.tril(visible) if direction == "left_to_right" else ops.triu(visible)
        keep = keep * visible[None, None]
    return (1.0 - keep) * PADDING_ATTENTION_BIAS


def alibi_slopes(num_heads):
    """ALiBi's per-head slopes (Press et al., 2022): for a power of two n, the geometric sequence 2^(-8/n), 2^(-16/n),
    ..., 2^(-8); otherwise the slopes of the power of two below n followed by every other slope of the one above."""
    if num_heads < 1:
        raise ValueError(f"num_heads must be positive, got {num_heads}")
    below = 2 ** math.floor(math.log2(num_heads))
    slopes = [2.0 ** (-8.0 * (head + 1) / below) for head in range(below)]
    if below < num_heads:
        slopes += alibi_slopes(2 * below)[0::2][: num_heads - below]
    return slopes


def alibi_attention_bias(padding_mask, num_heads, dtype):
    """Additive attention bias -slope(head) * |query position - key position|, [batch, num_heads, length, length]: the
    symmetric ALiBi of bidirectional encoders (MosaicBERT), with the slopes of `alibi_slopes`.

    Each head prefers keys near its query, the first head most; nothing is learned. Added to
    `attention_bias_from_padding_mask`'s bias, it gives a fresh encoder a bias towards neighbouring tokens, which it
    otherwise has to learn (docs/cpu_budget.md measures how long that takes a small one).
    """
    # Positions from a cumulative sum rather than a range: keras.ops on the symbolic inputs of the functional graph too.
    positions = ops.cumsum(ops.ones_like(padding_mask, dtype=dtype), axis=1)
    distance = ops.abs(ops.expand_dims(positions, 1) - ops.expand_dims(positions, 2))
    # One product per head with a Python number: a tensor of the slopes made here would be captured by a traced graph
    # as an input of its own, which an ONNX file then expects to be fed.
    return ops.stack([distance * -slope for slope in alibi_slopes(num_heads)], axis=1)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTransformerLayer(keras.layers.Layer):
    """Self-attention and feed-forward blocks, each followed by dropout, a residual and LayerNorm (post-LN, as BERT).

    The sub-layers carry the reference's scope names, so a checkpoint maps one to one:
    `query_dense`, `key_dense`, `value_dense` (attention/self/{query,key,value}), `attention_output_dense`
    (attention/output/dense), `attention_layer_norm` (attention/output/LayerNorm), `intermediate_dense`
    (intermediate/dense, exact GELU unless `hidden_activation` says otherwise), `output_dense` (output/dense) and
    `output_layer_norm` (output/LayerNorm). Kernels have the reference's [in, out] layout (attention projections
    [H, H], not per head).

    The projections run as 2-D GEMMs on the [batch * length, features] tokens, never as the broadcast batch matmul (one
    small GEMM per sequence) that made `EinsumDense` 1.7x slower, and query, key and value as one [H, 3H] GEMM of
    their concatenated kernels (see docs/PERFORMANCE.md). In a training step (`training=True`) the element-wise chains
    (scale, bias, softmax and dropout of the attention probabilities; after the attention output and the feed-forward
    projections bias, GELU; bias, dropout, residual, LayerNorm) run as XLA-compiled kernels (`fused_ops`); every other
    call runs the Keras sub-layers, so exported graphs need no XLA. Dropouts are `ElectraDropout`, whose decisions the
    fused kernels make from its keys (`dropout.keep_decisions`). A projection with LoRA weights (`Dense.enable_lora`,
    see `ElectraBackbone.enable_lora`) computes with its effective kernel W + (alpha / rank) A B on every path; in a
    training step its factors learn through the low-rank product, not through the kernel's [in, out] gradient.

    Call with `hidden` [batch, length, hidden_size] and `attention_bias` [batch, 1, 1 or length, length]
    (`attention_bias_from_padding_mask`); returns [batch, length, hidden_size]. With `output_length` (an int) it
    returns only the first `output_length` positions, [batch, output_length, hidden_size], the same values: their
    queries still attend to every position, but no other position's query, attention output or feed-forward block is
    computed (a classifier's last layer, which only [CLS] is read from).
    """

    def __init__(
        self,
        hidden_size,
        num_heads,
        intermediate_size,
        hidden_dropout=0.1,
        attention_dropout=0.1,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        hidden_activation="gelu",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if hidden_size % num_heads:
            raise ValueError(f"hidden_size={hidden_size} is not divisible by num_heads={num_heads}")
        self.hidden_size = int(hidden_size)
        self.num_heads = int(num_heads)
        self.head_size = self.hidden_size // self.num_heads
        self.intermediate_size = int(intermediate_size)
        self.hidden_dropout = float(hidden_dropout)
        self.attention_dropout = float(attention_dropout)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.initializer_range = float(initializer_range)
        self.hidden_activation = hidden_activation

        def dense(units, name, activation=None):
            return keras.layers.Dense(
                units,
                activation=activation,
                kernel_initializer=truncated_normal(initializer_range),
                dtype=self.dtype_policy,
                name=name,
            )

        def layer_norm(name):
            return keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name=name)

        self.query_dense = dense(hidden_size, "query")
        self.key_dense = dense(hidden_size, "key")
        self.value_dense = dense(hidden_size, "value")
        self.attention_probs_dropout = ElectraDropout(
            attention_dropout, dtype=self.dtype_policy, name="attention_probs_dropout"
        )
        self.attention_output_dense = dense(hidden_size, "attention_output")
        self.attention_output_dropout = ElectraDropout(
            hidden_dropout, dtype=self.dtype_policy, name="attention_output_dropout"
        )
        self.attention_layer_norm = layer_norm("attention_layer_norm")
        self.intermediate_dense = dense(intermediate_size, "intermediate", activation=get_activation(hidden_activation))
        self.output_dense = dense(hidden_size, "output")
        self.output_dropout = ElectraDropout(hidden_dropout, dtype=self.dtype_policy, name="output_dropout")
        self.output_layer_norm = layer_norm("output_layer_norm")

    def build(self, hidden_shape=None, attention_bias_shape=None):
        tokens = (None, self.hidden_size)
        for layer in (
            self.query_dense,
            self.key_dense,
            self.value_dense,
            self.attention_output_dense,
            self.attention_layer_norm,
            self.intermediate_dense,
            self.output_layer_norm,
        ):
            layer.build(tokens)
        self.output_dense.build((None, self.intermediate_size))
        self.built = True

    def call(self, hidden, attention_bias, training=None, output_length=None):
        tokens = tf.reshape(hidden, [-1, self.hidden_size])  # [batch * length, H]: the projections' 2-D GEMMs
        if output_length is None:
            outputs_hidden, query_tokens = hidden, tokens
        else:  # only the first positions' outputs; their attention still reads every position
            outputs_hidden = hidden[:, :output_length]
            query_tokens = tf.reshape(outputs_hidden, [-1, self.hidden_size])
            attention_bias = attention_bias[:, :, :output_length]
        batch = tf.shape(hidden)[0]
        # A quantized Dense keeps an integer kernel and its scales: only its own call computes with them.
        reads_kernels = not any(dense.quantization_mode for dense in self.dense_layers())

        def heads(projection):  # [B * L, H] -> [B, heads, L, head_size]
            split = tf.reshape(projection, [batch, -1, self.num_heads, self.head_size])
            return tf.transpose(split, [0, 2, 1, 3])

        if not reads_kernels:
            projected = [
                dense(inputs)
                for dense, inputs in zip(self.dense_layers()[:3], (query_tokens, tokens, tokens), strict=True)
            ]
        elif output_length is None:
            projected = self._projections(tokens, (self.query_dense, self.key_dense, self.value_dense), training)
        else:
            projected = self._projections(query_tokens, (self.query_dense,), training) + self._projections(
                tokens, (self.key_dense, self.value_dense), training
            )
        query, key, value = (heads(projection) for projection in projected)
        scores = tf.matmul(query, key, transpose_b=True)
        fused = training and reads_kernels
        if fused:
            dropout = self.attention_probs_dropout
            probs = attention_probs(scores, attention_bias, self.head_size**-0.5, dropout.dropout_key(), dropout.rate)
        else:
            scores = scores * tf.constant(self.head_size**-0.5, query.dtype)
            probs = tf.nn.softmax(scores + tf.cast(attention_bias, scores.dtype), axis=-1)
            probs = self.attention_probs_dropout(probs, training=training)
        context = tf.reshape(tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3]), [-1, self.hidden_size])
        if fused:
            outputs = self._fused_blocks(context, query_tokens)
        else:
            attended = self.attention_output_dropout(self.attention_output_dense(context), training=training)
            attended = self.attention_layer_norm(attended + query_tokens)
            transformed = self.output_dropout(self.output_dense(self.intermediate_dense(attended)), training=training)
            outputs = self.output_layer_norm(transformed + attended)
        return tf.reshape(outputs, tf.shape(outputs_hidden))

    def _projections(self, tokens, projections, training):
        """[`tokens` @ kernel + bias for each Dense of `projections`], the kernels concatenated into one GEMM:
        fewer, wider GEMMs run closer to the matmul peak."""
        kernel = tf.concat([self._kernel(dense, training) for dense in projections], axis=1)
        bias = tf.concat([self._compute(dense.bias) for dense in projections], axis=0)
        projected = tf.split(tf.nn.bias_add(tf.matmul(tokens, kernel), bias), len(projections), axis=1)
        return [
            self._with_lora_gradient(projection, tokens, dense, training)
            for projection, dense in zip(projected, projections, strict=True)
        ]

    def dense_layers(self):
        """The six projections, in the order of the computation."""
        return (
            self.query_dense,
            self.key_dense,
            self.value_dense,
            self.attention_output_dense,
            self.intermediate_dense,
            self.output_dense,
        )

    def _compute(self, variable):
        return tf.cast(variable, self.compute_dtype)

    def _kernel(self, dense, training):
        """`dense`'s kernel for a matmul of this layer. Keras' `kernel` of a LoRA projection is W + (alpha / rank) A B,
        through which TensorFlow would compute the [in, out] gradient of the whole kernel, then A's and B's from it;
        in training that kernel enters as a constant and the factors learn through `_with_lora_gradient` instead, so
        a frozen kernel costs no gradient GEMM."""
        kernel = self._compute(dense.kernel)
        return tf.stop_gradient(kernel) if training and dense.lora_enabled else kernel

    def _with_lora_gradient(self, outputs, inputs, dense, training):
        """`outputs` (`inputs` @ `_kernel(dense)`) with the gradient of a LoRA projection's factors: the low-rank
        product (alpha / rank) `inputs` A B, added as itself minus itself, exactly zero in value. `inputs` get their
        whole gradient from the matmul with the effective kernel, none from here."""
        if not (training and dense.lora_enabled):
            return outputs
        scale = tf.constant(dense.lora_alpha / dense.lora_rank, outputs.dtype)
        low_rank = (
            tf.matmul(
                tf.matmul(tf.stop_gradient(inputs), self._compute(dense.lora_kernel_a)),
                self._compute(dense.lora_kernel_b),
            )
            * scale
        )
        return outputs + (low_rank - tf.stop_gradient(low_rank))

    def _project(self, inputs, dense):
        """`inputs` @ `dense`'s kernel in a training step (its bias, activation and dropout follow in fused kernels)."""
        return self._with_lora_gradient(tf.matmul(inputs, self._kernel(dense, True)), inputs, dense, True)

    def _fused_blocks(self, context, tokens):
        """The layer after attention in a training step: each element-wise chain one XLA kernel (`fused_ops`)."""

        def residual_block(projected, dense, dropout, layer_norm, residual):
            return bias_dropout_residual_layer_norm(
                projected,
                self._compute(dense.bias),
                residual,
                tf.convert_to_tensor(layer_norm.gamma),
                tf.convert_to_tensor(layer_norm.beta),
                self.layer_norm_epsilon,
                dropout.dropout_key(),
                dropout.rate,
            )

        attended = residual_block(
            self._project(context, self.attention_output_dense),
            self.attention_output_dense,
            self.attention_output_dropout,
            self.attention_layer_norm,
            tokens,
        )
        if self.hidden_activation == "gelu":
            intermediate = bias_gelu(
                self._project(attended, self.intermediate_dense), self._compute(self.intermediate_dense.bias)
            )
        else:
            intermediate = self.intermediate_dense(attended)
        return residual_block(
            self._project(intermediate, self.output_dense),
            self.output_dense,
            self.output_dropout,
            self.output_layer_norm,
            attended,
        )

    def compute_output_shape(self, hidden_shape, attention_bias_shape=None):
        return tuple(hidden_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_size=self.hidden_size,
            num_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            hidden_dropout=self.hidden_dropout,
            attention_dropout=self.attention_dropout,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
            hidden_activation=self.hidden_activation,
        )
        return config
