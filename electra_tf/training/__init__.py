"""Training-time pieces that are not model code: metrics, optimizers and schedules, strategies, callbacks."""
