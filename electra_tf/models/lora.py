"""LoRA fine-tuning of the task models on an `ElectraBackbone` (`ElectraBackbone.enable_lora`), and the merged model
that export writes."""

import os
import tempfile

import keras


class BackboneLora:
    """Mixin of a task model whose encoder is `self.backbone` (an `ElectraBackbone`): `enable_lora` as the backbone's,
    with the task's head left trainable, as PEFT's `modules_to_save` keeps a classifier's head."""

    def enable_lora(self, rank, target_layer_names=None, lora_alpha=None):
        """Trains only the LoRA weights of the backbone's `target_layer_names` projections (default query and value)
        and the head: see `ElectraBackbone.enable_lora`. Call it before `compile`, which builds the optimizer's slots
        for the trainable variables only."""
        self.backbone.enable_lora(rank, target_layer_names=target_layer_names, lora_alpha=lora_alpha)

    @property
    def lora_enabled(self):
        return bool(self.backbone.lora_enabled_layers())


def merged_lora(model):
    """`model` (a task model, see `BackboneLora`) without LoRA: each adapted kernel replaced by W + (lora_alpha / rank)
    A B and no LoRA weights, every layer trainable, without the optimizer's state; `model` itself when it has no LoRA
    weights.

    This is the model that Keras writes for a LoRA model (`Dense.save_own_variables` saves the merged kernel) read
    back, which is also what `keras.saving.load_model` gives for a `.keras` file of one: its outputs are the LoRA
    model's, and serving it costs no extra matmul.
    """
    if not model.lora_enabled:
        return model
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "merged.keras")
        model.save(path)
        return keras.saving.load_model(path, compile=False)
