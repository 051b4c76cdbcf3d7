"""A NumPy transcription of Hugging Face transformers' ELECTRA forward pass (modeling_electra.py), in float64.

`ElectraModel`: embeddings sum -> LayerNorm -> embeddings_project -> BERT post-LN layers; `ElectraForPreTraining`:
dense -> gelu -> dense_prediction -> squeeze; `ElectraForMaskedLM`: dense -> gelu -> LayerNorm -> tied word table +
bias. Written from the HF code's structure, independently of electra_tf, so it can stand in for torch in the tests.
"""

import math

import numpy as np

_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


def linear(x, t, name):
    """nn.Linear: x @ W^T + b, W [out, in]."""
    return x @ t[f"{name}.weight"].T + t[f"{name}.bias"]


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def electra_model(t, config, input_ids, attention_mask, token_type_ids, prefix="electra."):
    t = {k: np.asarray(v, np.float64) for k, v in t.items()}
    batch, length = input_ids.shape
    p = prefix
    hidden = (
        t[f"{p}embeddings.word_embeddings.weight"][input_ids]
        + t[f"{p}embeddings.position_embeddings.weight"][np.arange(length)][None]
        + t[f"{p}embeddings.token_type_embeddings.weight"][token_type_ids]
    )
    eps = config["layer_norm_eps"]
    hidden = layer_norm(hidden, t[f"{p}embeddings.LayerNorm.weight"], t[f"{p}embeddings.LayerNorm.bias"], eps)
    if f"{p}embeddings_project.weight" in t:
        hidden = linear(hidden, t, f"{p}embeddings_project")
    heads = config["num_attention_heads"]
    head_dim = config["hidden_size"] // heads
    # get_extended_attention_mask: (1 - mask) * dtype-min added to the scores of padded keys.
    extended = (1.0 - attention_mask[:, None, None, :].astype(np.float64)) * np.finfo(np.float32).min

    def split(x):
        return x.reshape(batch, length, heads, head_dim).transpose(0, 2, 1, 3)

    for i in range(config["num_hidden_layers"]):
        layer = f"{p}encoder.layer.{i}"
        q = split(linear(hidden, t, f"{layer}.attention.self.query"))
        k = split(linear(hidden, t, f"{layer}.attention.self.key"))
        v = split(linear(hidden, t, f"{layer}.attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head_dim) + extended
        context = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * head_dim)
        attention = layer_norm(
            linear(context, t, f"{layer}.attention.output.dense") + hidden,
            t[f"{layer}.attention.output.LayerNorm.weight"],
            t[f"{layer}.attention.output.LayerNorm.bias"],
            eps,
        )
        intermediate = gelu(linear(attention, t, f"{layer}.intermediate.dense"))
        hidden = layer_norm(
            linear(intermediate, t, f"{layer}.output.dense") + attention,
            t[f"{layer}.output.LayerNorm.weight"],
            t[f"{layer}.output.LayerNorm.bias"],
            eps,
        )
    return hidden


def electra_for_pretraining_logits(t, config, input_ids, attention_mask, token_type_ids):
    hidden = electra_model(t, config, input_ids, attention_mask, token_type_ids)
    t = {k: np.asarray(v, np.float64) for k, v in t.items()}
    hidden = gelu(linear(hidden, t, "discriminator_predictions.dense"))
    return linear(hidden, t, "discriminator_predictions.dense_prediction")[..., 0]


def electra_for_masked_lm_logits(t, config, input_ids, attention_mask, token_type_ids):
    hidden = electra_model(t, config, input_ids, attention_mask, token_type_ids)
    t = {k: np.asarray(v, np.float64) for k, v in t.items()}
    hidden = gelu(linear(hidden, t, "generator_predictions.dense"))
    hidden = layer_norm(
        hidden,
        t["generator_predictions.LayerNorm.weight"],
        t["generator_predictions.LayerNorm.bias"],
        config["layer_norm_eps"],
    )
    # generator_lm_head.weight is tied to the word table.
    return hidden @ t["electra.embeddings.word_embeddings.weight"].T + t["generator_lm_head.bias"]
