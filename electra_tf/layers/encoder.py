"""The Transformer stack of one network (generator or discriminator), after the shared embeddings."""

import keras
import keras_hub

from electra_tf.layers.activations import gelu
from electra_tf.layers.dropout import use_electra_dropout
from electra_tf.layers.flat_projections import flatten_attention_projections
from electra_tf.layers.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraEncoder(keras.layers.Layer):
    """`embeddings_project` (E -> H, only when E != H) followed by BERT post-LayerNorm Transformer layers.

    The layers are keras-hub `TransformerEncoder`s configured as the reference: exact (erf) GELU, LayerNorm epsilon
    1e-12, truncated-normal(0.02) kernels, dropout 0.1 on hidden states and attention probabilities. Layer i is named
    `transformer_layer_{i}`; layer-wise learning-rate decay and checkpoint conversion rely on these names. Once built,
    each layer's attention projections are `FlatEinsumDense` (a faster drop-in with the same variables) and its
    dropouts `ElectraDropout` (float32 keep decisions under bfloat16; Keras' own in float32), see docs/PERFORMANCE.md.
    """

    def __init__(self, embedding_size, hidden_size, num_layers, num_heads, intermediate_size, hidden_dropout=0.1,
                 attention_dropout=0.1, layer_norm_epsilon=1e-12, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        if hidden_dropout != attention_dropout:
            # keras-hub's TransformerEncoder takes one rate for both; the reference uses 0.1 for both.
            raise ValueError("ElectraEncoder needs hidden_dropout == attention_dropout "
                             f"(got {hidden_dropout} and {attention_dropout})")
        self.embedding_size = embedding_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.hidden_dropout = hidden_dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

        self.embeddings_project = None
        if embedding_size != hidden_size:
            # Glorot-uniform, as tf.layers.dense's default in the reference.
            self.embeddings_project = keras.layers.Dense(
                hidden_size, dtype=self.dtype_policy, name="embeddings_project")
        # Named attributes rather than a list: tf.train.Checkpoint does not see layers held in a Python list, and the
        # names give checkpoints the reference's per-layer structure.
        for i in range(num_layers):
            setattr(self, f"transformer_layer_{i}", keras_hub.layers.TransformerEncoder(
                intermediate_dim=intermediate_size, num_heads=num_heads, dropout=hidden_dropout,
                activation=gelu,  # the exact erf form, with a hand-written gradient
                layer_norm_epsilon=layer_norm_epsilon, kernel_initializer=truncated_normal(initializer_range),
                normalize_first=False, dtype=self.dtype_policy, name=f"transformer_layer_{i}"))

    @property
    def transformer_layers(self):
        return [getattr(self, f"transformer_layer_{i}") for i in range(self.num_layers)]

    def build(self, embedded_shape=None):
        if self.embeddings_project is not None:
            self.embeddings_project.build((None, None, self.embedding_size))
        for layer in self.transformer_layers:
            layer.build((None, None, self.hidden_size))
            # keras-hub keeps the layer's attention as `_self_attention_layer` (keras-hub 0.32); without it the
            # projections keep Keras' slower broadcast batch matmul.
            attention = getattr(layer, "_self_attention_layer", None)
            if attention is not None:
                flatten_attention_projections(attention)
            use_electra_dropout(layer)
        self.built = True

    def call(self, embedded, padding_mask, training=None):
        hidden = embedded
        if self.embeddings_project is not None:
            hidden = self.embeddings_project(hidden)
        for layer in self.transformer_layers:
            hidden = layer(hidden, padding_mask=padding_mask, training=training)
        return hidden

    def compute_output_shape(self, embedded_shape, padding_mask_shape=None):
        return tuple(embedded_shape[:-1]) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            embedding_size=self.embedding_size, hidden_size=self.hidden_size, num_layers=self.num_layers,
            num_heads=self.num_heads, intermediate_size=self.intermediate_size, hidden_dropout=self.hidden_dropout,
            attention_dropout=self.attention_dropout, layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range)
        return config
