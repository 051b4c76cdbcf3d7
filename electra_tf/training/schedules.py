"""Learning-rate schedules of the reference."""

import keras
from keras import ops

from electra_tf.errors import ConfigError


@keras.saving.register_keras_serializable(package="electra_tf")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear (polynomial) decay to `end_learning_rate` with linear warm-up.

    mode="multiply" (the reference): lr x (1 - step/total)^power x min(1, step/warmup) -- warm-up and decay multiplied,
    so the first update (step 0) has learning rate 0.
    mode="sequential" (BERT and most libraries): lr x step/warmup during warm-up, then the decay alone.
    """

    def __init__(
        self,
        peak_learning_rate,
        num_train_steps,
        num_warmup_steps=0,
        power=1.0,
        end_learning_rate=0.0,
        mode="multiply",
        name="warmup_linear_decay",
    ):
        if mode not in ("multiply", "sequential"):
            raise ConfigError(f"unknown learning-rate schedule mode {mode!r}; use 'multiply' or 'sequential'")
        if num_train_steps <= 0:
            raise ConfigError(f"num_train_steps must be positive, got {num_train_steps}")
        if num_warmup_steps < 0:
            raise ConfigError(f"num_warmup_steps must be >= 0, got {num_warmup_steps}")
        self.peak_learning_rate = float(peak_learning_rate)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)
        self.power = float(power)
        self.end_learning_rate = float(end_learning_rate)
        self.mode = mode
        self.name = name

    def __call__(self, step):
        step = ops.cast(step, "float32")
        progress = ops.minimum(step, float(self.num_train_steps)) / float(self.num_train_steps)
        decayed = (self.peak_learning_rate - self.end_learning_rate) * ops.power(
            1.0 - progress, self.power
        ) + self.end_learning_rate
        if self.num_warmup_steps == 0:
            return decayed
        warmup_fraction = step / float(self.num_warmup_steps)
        if self.mode == "multiply":
            return decayed * ops.minimum(1.0, warmup_fraction)
        return ops.where(step < self.num_warmup_steps, self.peak_learning_rate * warmup_fraction, decayed)

    def get_config(self):
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "num_train_steps": self.num_train_steps,
            "num_warmup_steps": self.num_warmup_steps,
            "power": self.power,
            "end_learning_rate": self.end_learning_rate,
            "mode": self.mode,
            "name": self.name,
        }
