"""What the discriminator and the generator share: a keras-hub `Task` of one head on an `ElectraBackbone`."""

import keras_hub

from electra_tf.config import ElectraConfig, as_config
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.presets import checkpoint_model, keras_hub_handle, rebuilt


class ElectraTask(keras_hub.models.Task):
    """A head on `backbone`, as a keras-hub `Task` (functional: `task_graph` gives its inputs and outputs).

    `electra_config` is the `ElectraConfig` the model was built from (with the pre-training settings and the sizing
    rule that conversions to other formats need), serialised with the model; by default `default_electra_config` of
    the backbone. Nothing is compiled by default: these models are parts of pre-training, scoring or export.
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = None

    def __init__(self, backbone, preprocessor=None, electra_config=None, **kwargs):
        # keras-hub's order: layers as attributes first (the subclass has made its head), then the functional graph.
        self.backbone = backbone
        self.preprocessor = preprocessor
        inputs, outputs = self.task_graph(backbone)
        kwargs.setdefault("compile", False)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.electra_config = (
            self.default_electra_config(backbone) if electra_config is None else as_config(electra_config)
        )

    @classmethod
    def from_preset(
        cls,
        preset,
        load_weights=True,
        *,
        format="auto",
        num_heads=None,
        vocab_file=None,
        allow_missing_head=False,
        allow_embedding_mismatch=False,
        **kwargs,
    ):
        """The model (backbone and head) in the checkpoint at `preset`, in any format
        `electra_tf.models.load_checkpoint` reads (a preset of ours, a pre-training run's model_dir, the
        reference's TF1 checkpoint, a Hugging Face directory or pair, a keras-hub backbone); a checkpoint without
        such a model is refused, naming the class that loads what it holds. A keras-hub handle (`kaggle://...`,
        `hf://...`, a built-in preset name; `presets.keras_hub_handle`) goes to `keras_hub.models.Task.from_preset`.

        As keras-hub's: `dtype` goes to the backbone and other `kwargs` to the model's constructor, and
        `load_weights=False` gives the same architecture freshly initialised. `format`, `num_heads`, `vocab_file`,
        `allow_missing_head` (a checkpoint without the head: Hugging Face's ElectraModel, a keras-hub backbone) and
        `allow_embedding_mismatch` are `load_checkpoint`'s.
        """
        load_arguments = {
            "format": format,
            "num_heads": num_heads,
            "vocab_file": vocab_file,
            "allow_missing_head": allow_missing_head,
            "allow_embedding_mismatch": allow_embedding_mismatch,
        }
        if keras_hub_handle(cls, preset, load_arguments):
            return super().from_preset(preset, load_weights, **kwargs)
        model = checkpoint_model(cls, preset, **load_arguments)
        if "dtype" in kwargs:
            kwargs["backbone"] = rebuilt(model.backbone, cls.backbone_cls, load_weights, dtype=kwargs.pop("dtype"))
        return rebuilt(model, cls, load_weights, **kwargs)

    def task_graph(self, backbone):
        """(inputs, outputs) of the functional model."""
        raise NotImplementedError

    @staticmethod
    def default_electra_config(backbone):
        return ElectraConfig(**backbone.architecture())

    def get_config(self):
        config = super().get_config()
        config["electra_config"] = self.electra_config.to_dict()
        return config
