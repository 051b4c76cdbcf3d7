from electra_tf.layers.embeddings import ElectraEmbeddings
from electra_tf.layers.heads import DiscriminatorHead, ElectraMaskedLMHead
from electra_tf.layers.transformer_layer import (
    ElectraTransformerLayer,
    alibi_attention_bias,
    alibi_slopes,
    attention_bias_from_padding_mask,
)

__all__ = [
    "DiscriminatorHead",
    "ElectraEmbeddings",
    "ElectraMaskedLMHead",
    "ElectraTransformerLayer",
    "alibi_attention_bias",
    "alibi_slopes",
    "attention_bias_from_padding_mask",
]
