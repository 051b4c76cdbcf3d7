"""The checks of LoRA's settings, shared by `ElectraBackbone.enable_lora` and the fine-tuning job (no TensorFlow
needed, so a command validates its flags before importing it)."""

from electra_tf.errors import ConfigError


def check_lora_settings(rank, lora_alpha=None, rank_argument="rank"):
    """ConfigError unless `rank` (named `rank_argument` in the message) is a positive integer and `lora_alpha`, when
    given, a positive number."""
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ConfigError(f"{rank_argument} must be a positive integer, got {rank!r}", arguments=(rank_argument,))
    if lora_alpha is not None and (
        isinstance(lora_alpha, bool) or not isinstance(lora_alpha, (int, float)) or not lora_alpha > 0
    ):
        raise ConfigError(f"lora_alpha must be positive, got {lora_alpha!r}", arguments=("lora_alpha",))
