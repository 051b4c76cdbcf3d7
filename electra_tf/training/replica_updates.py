"""Cross-replica helpers of the training steps: sums over replicas, clipping of the sum, and a conditional optimizer
update."""

import tensorflow as tf


def all_reduce_sum(values):
    """Sum `values` (a structure of tensors) over replicas; the identity outside a strategy."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return values
    return context.all_reduce(tf.distribute.ReduceOp.SUM, values)


def replica_shares(gradients):
    """Each replica's share of cross-replica sums `gradients` (identical on every replica): what a Keras optimizer,
    which sums the replicas' gradients itself, must receive to apply the sums."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return gradients
    return [None if gradient is None else gradient / context.num_replicas_in_sync for gradient in gradients]


def global_norm_clip_scale(gradients, clip_norm):
    """The factor `tf.clip_by_global_norm` scales `gradients` (tensors; `None` entries left out) by:
    clip_norm / max(their global norm, clip_norm), NaN when the norm is not finite."""
    norm = tf.linalg.global_norm([gradient for gradient in gradients if gradient is not None])
    clip_norm = tf.cast(clip_norm, norm.dtype)
    scale = clip_norm * tf.minimum(1.0 / norm, 1.0 / clip_norm)
    return scale + (norm - norm)


def clip_summed_gradients(gradients, clip_norm):
    """Each replica's share (`replica_shares`) of the cross-replica sum of `gradients` clipped to the global norm
    `clip_norm`, as the reference clips: clipping each replica's own gradient instead (what Keras' `global_clipnorm`
    does under a strategy) would let the sum's norm grow with the number of replicas. `None` entries stay `None`."""
    present = [index for index, gradient in enumerate(gradients) if gradient is not None]
    summed = all_reduce_sum([tf.convert_to_tensor(gradients[index]) for index in present])
    scale = global_norm_clip_scale(summed, clip_norm)
    result = list(gradients)
    for index, gradient in zip(present, replica_shares([gradient * scale for gradient in summed])):
        result[index] = gradient
    return result


def apply_if(condition, optimizer, gradients, variables):
    """`optimizer.apply(gradients, variables)` only when `condition` (a scalar bool, equal on every replica).

    The optimizer's update calls `merge_call`, which a strategy does not allow inside a `tf.cond` in replica context,
    so under a strategy the cond runs in cross-replica context (the pattern of Keras' LossScaleOptimizer); without one
    it is a plain cond.
    """

    def apply():
        optimizer.apply(gradients, variables)

    def skip():
        pass

    if not tf.distribute.has_strategy():
        tf.cond(condition, apply, skip)
        return

    def cross_replica(distribution, condition, gradients, variables):
        first_replica_condition = distribution.experimental_local_results(condition)[0]

        def apply_on_every_replica():
            distribution.extended.call_for_each_replica(optimizer.apply, args=(gradients, variables))

        tf.cond(first_replica_condition, apply_on_every_replica, skip)

    tf.distribute.get_replica_context().merge_call(cross_replica, args=(condition, gradients, variables))
