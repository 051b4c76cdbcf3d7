"""The fine-tuning model of the reference: discriminator encoder -> [CLS] vector -> dropout 0.1 -> one dense layer."""

import keras
from keras import ops

from electra_tf.errors import ConfigError
from electra_tf.layers.dropout import ElectraDropout
from electra_tf.models.network import ElectraNetwork, as_config

CLASSIFIER_DROPOUT = 0.1


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraClassifier(ElectraNetwork):
    """Sequence classification or regression on token ids; `call` returns float32 logits.

    There is no pooler (ELECTRA has none): the head reads the final hidden state of [CLS]. Classification gives
    [batch, num_classes] logits (train with sparse categorical cross-entropy from logits); regression (STS-B) gives one
    score per example, [batch] (train with mean squared error).

    Args:
        config: the pre-trained discriminator's `ElectraConfig` (or its dict).
        num_classes: number of classes; ignored (1 output) when `regression`.
        regression: one linear output instead of class logits.
        classifier_dropout: dropout on the [CLS] vector before the dense layer (0.1 in the reference).

    Build one from a pre-trained checkpoint with `from_discriminator`; the variables' paths (`embeddings/`,
    `encoder/embeddings_project/`, `encoder/transformer_layer_{i}/`, `classifier/`) are what layer-wise learning-rate
    decay keys on.
    """

    def __init__(self, config, num_classes=2, regression=False, classifier_dropout=CLASSIFIER_DROPOUT, **kwargs):
        kwargs.setdefault("name", "electra_classifier")
        config = as_config(config)
        if not regression and (not isinstance(num_classes, int) or num_classes < 2):
            raise ConfigError(f"a classifier needs num_classes >= 2, got {num_classes!r}; use regression=True for a "
                              "single score")
        super().__init__(config, config, **kwargs)
        self.num_classes = 1 if regression else num_classes
        self.regression = bool(regression)
        self.classifier_dropout = float(classifier_dropout)
        self.dropout = ElectraDropout(self.classifier_dropout, dtype=self.dtype_policy, name="classifier_dropout")
        # Glorot-uniform kernel and zero bias: the reference's tf.layers.dense defaults for its task heads.
        self.classifier = keras.layers.Dense(self.num_classes, kernel_initializer="glorot_uniform",
                                             dtype=self.dtype_policy, name="classifier")
        self.build()

    def _build_head(self):
        self.classifier.build((None, self.electra_config.hidden_size))

    @classmethod
    def from_discriminator(cls, discriminator, num_classes=2, regression=False,
                           classifier_dropout=CLASSIFIER_DROPOUT, **kwargs):
        """A classifier whose embeddings and encoder start as copies of `discriminator`'s (a new, random head)."""
        model = cls(discriminator.electra_config, num_classes=num_classes, regression=regression,
                    classifier_dropout=classifier_dropout, **kwargs)
        model.embeddings.set_weights(discriminator.embeddings.get_weights())
        model.encoder.set_weights(discriminator.encoder.get_weights())
        return model

    def call(self, inputs, training=None):
        cls_vector = self.encode(inputs, training=training)[:, 0]
        # Losses and metrics are computed on float32 logits whatever the mixed-precision policy.
        logits = ops.cast(self.classifier(self.dropout(cls_vector, training=training)), "float32")
        return ops.squeeze(logits, axis=-1) if self.regression else logits

    def compute_output_spec(self, inputs, training=None):
        batch = inputs["input_ids"].shape[0]
        shape = (batch,) if self.regression else (batch, self.num_classes)
        return keras.KerasTensor(shape, dtype="float32")

    def get_config(self):
        config = super().get_config()
        config.update(num_classes=self.num_classes, regression=self.regression,
                      classifier_dropout=self.classifier_dropout)
        return config
