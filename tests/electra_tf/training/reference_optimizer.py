"""Independent checks of optimizers: a NumPy transcription of the reference's AdamWeightDecayOptimizer
(google-research/electra model/optimization.py) with the project's options (bias correction, a learning-rate
multiplier per variable), and the variables an optimizer really decays."""

import numpy as np
import tensorflow as tf


def reference_adam_weight_decay(
    params,
    grads_per_step,
    lrs,
    decayed,
    multipliers=None,
    wd=0.01,
    b1=0.9,
    b2=0.999,
    eps=1e-6,
    bias_correction=False,
    clip_norm=None,
):
    """Parameters after applying `grads_per_step` ([{name: gradient}]) with learning rates `lrs`, in float64.

    `decayed[name]` says whether weight decay applies; `multipliers[name]` scales the variable's learning rate; with
    `clip_norm` each step's gradients are first scaled by clip_norm / max(their global norm, clip_norm), as the
    reference's `tf.clip_by_global_norm`.
    """
    params = {name: value.astype(np.float64).copy() for name, value in params.items()}
    m = {name: np.zeros_like(value) for name, value in params.items()}
    v = {name: np.zeros_like(value) for name, value in params.items()}
    for t, (grads, lr) in enumerate(zip(grads_per_step, lrs), start=1):
        if clip_norm:
            global_norm = np.sqrt(sum(np.sum(np.square(grad, dtype=np.float64)) for grad in grads.values()))
            grads = {name: grad * clip_norm / max(global_norm, clip_norm) for name, grad in grads.items()}
        for name, grad in grads.items():
            m[name] = b1 * m[name] + (1 - b1) * grad
            v[name] = b2 * v[name] + (1 - b2) * grad**2
            m_used, v_used = m[name], v[name]
            if bias_correction:
                m_used, v_used = m_used / (1 - b1**t), v_used / (1 - b2**t)
            update = m_used / (np.sqrt(v_used) + eps)
            if decayed[name]:
                update += wd * params[name]
            params[name] = params[name] - lr * (multipliers or {}).get(name, 1.0) * update
    return params


def decayed_by(optimizer, model):
    """[(path, decayed)] for `model`'s trainable variables under `optimizer`, seen from one step with zero gradients
    (Adam's update is then 0, so only weight decay moves a variable)."""
    rng = np.random.default_rng(3)
    variables = model.trainable_variables
    for variable in variables:  # no zeros (biases, LayerNorm beta) that decay would leave unchanged
        variable.assign(rng.uniform(0.5, 1.5, size=variable.shape).astype("float32"))
    before = [variable.numpy() for variable in variables]
    optimizer.apply([tf.zeros_like(variable) for variable in variables], variables)
    return [(variable.path, bool(np.any(variable.numpy() != value))) for variable, value in zip(variables, before)]
