"""The end-to-end model users fine-tune from Python: raw strings -> `ElectraPreprocessor` -> `ElectraClassifier`."""

import keras

from finetune.models.classifier import CLASSIFIER_DROPOUT, ElectraClassifier
from finetune.models.preprocessor import ElectraPreprocessor


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifier(keras.Model):
    """Classifies (or scores) raw text; train, evaluate and predict with plain Keras.

        model = ElectraTextClassifier.from_pretrained("pretrained/", num_classes=2)
        model.compile(optimizer=create_finetuning_optimizer(model.num_layers, 3e-4, train_steps))
        model.fit(tf.data.Dataset.from_tensor_slices((sentences, labels)).batch(32), epochs=3)
        model.predict(tf.constant(["a new sentence"]))          # pairs: model.predict((texts_a, texts_b))
        model.save("finetuned.keras")

    Tokenisation runs in-graph, so the model accepts strings in `fit` and after saving or `export`. `compile`
    defaults the loss to sparse categorical cross-entropy on logits (mean squared error for regression) and the
    metrics to accuracy (none for regression).
    """

    def __init__(self, preprocessor, classifier, **kwargs):
        kwargs.setdefault("name", "electra_text_classifier")
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.preprocessor = preprocessor
        self.classifier = classifier
        self.built = True

    @classmethod
    def from_pretrained(cls, path, num_classes=2, regression=False, max_seq_length=128, vocab_file=None,
                        do_lower_case=True, classifier_dropout=CLASSIFIER_DROPOUT, **kwargs):
        """A model whose encoder starts from the pre-trained discriminator at `path` (any format `load_discriminator`
        reads) and whose tokenizer uses the checkpoint's vocabulary unless `vocab_file` is given."""
        from electra_tf.errors import CheckpointError
        from finetune.checkpoints import load_discriminator

        pretrained = load_discriminator(path)
        vocab_file = vocab_file or pretrained.vocab_file
        if not vocab_file:
            raise CheckpointError(f"{path} holds no vocabulary: pass vocab_file=<the vocab.txt it was trained with>")
        classifier = ElectraClassifier.from_discriminator(pretrained.model, num_classes=num_classes,
                                                          regression=regression,
                                                          classifier_dropout=classifier_dropout)
        preprocessor = ElectraPreprocessor(vocab_file, max_seq_length=max_seq_length, do_lower_case=do_lower_case)
        return cls(preprocessor, classifier, **kwargs)

    @property
    def num_layers(self):
        """The encoder's number of Transformer layers (what layer-wise learning-rate decay needs)."""
        return self.classifier.electra_config.num_layers

    def call(self, inputs, training=None):
        return self.classifier(self.preprocessor(inputs), training=training)

    def compute_output_spec(self, inputs, training=None):
        return self.classifier.compute_output_spec(self.preprocessor.compute_output_spec(inputs))

    def compile(self, optimizer="rmsprop", loss="auto", metrics="auto", **kwargs):
        if loss == "auto":
            loss = (keras.losses.MeanSquaredError() if self.classifier.regression
                    else keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        if metrics == "auto":
            metrics = [] if self.classifier.regression else [keras.metrics.SparseCategoricalAccuracy("accuracy")]
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def compile_from_config(self, config):
        # Keras skips restoring the compile state of models that override `compile`; this one's is restorable.
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable,
                "preprocessor": keras.layers.serialize(self.preprocessor),
                "classifier": keras.layers.serialize(self.classifier)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        preprocessor = keras.layers.deserialize(config.pop("preprocessor"))
        classifier = keras.layers.deserialize(config.pop("classifier"))
        return cls(preprocessor, classifier, **config)
