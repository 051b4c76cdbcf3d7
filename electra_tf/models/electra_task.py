"""What the discriminator and the generator share: a keras-hub `Task` of one head on an `ElectraBackbone`."""

import keras_hub

from electra_tf.config import ElectraConfig, as_config
from electra_tf.models.backbone import ElectraBackbone


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
        self.electra_config = (self.default_electra_config(backbone) if electra_config is None
                               else as_config(electra_config))

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
