"""`ElectraTextClassifier`: a keras-hub `TextClassifier` on an `ElectraBackbone`, raw strings in."""

import keras
import keras_hub
import numpy as np
from keras import ops

from electra_tf.errors import ConfigError
from electra_tf.layers.dropout import ElectraDropout
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.lora import BackboneLora
from electra_tf.training.gradient_accumulation import GradientAccumulation
from finetune.models import labels as label_strings
from finetune.models.labelled_task import LabelledTask
from finetune.models.pretrained_parts import pretrained_backbone_and_tokenizer
from finetune.models.serving import export_classifier
from finetune.models.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from finetune.optimization import reference_finetuning_optimizer

CLASSIFIER_DROPOUT = 0.1


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTextClassifier(LabelledTask, BackboneLora, GradientAccumulation, keras_hub.models.TextClassifier):
    """The reference's fine-tuning model: backbone -> [CLS] vector -> dropout 0.1 -> one dense layer (no pooler:
    ELECTRA has none). Classification gives float32 logits [batch, num_classes]; regression (STS-B) one score per
    example, [batch].

        classifier = ElectraTextClassifier.from_preset("<model_dir>/pretrained", labels=["negative", "positive"])
        classifier.compile()                     # the reference's fine-tuning optimizer, see `compile`
        classifier.fit(sentences, ["positive", ...], batch_size=32, epochs=3)  # lists, NumPy arrays or tf.data
        classifier.predict_labels(["a new sentence"])   # ["positive"]; pairs: predict_labels((texts_a, texts_b))
        classifier.save("finetuned.keras")       # keras.saving.load_model after `import finetune.models`

    `y` holds class ids, or label strings when the classifier has `labels` (mapped by `finetune.models.labels`, as
    the command line maps its files' labels); data in memory are shuffled every epoch.

    With `preprocessor=None` the model takes the backbone's int inputs (`token_ids`, `segment_ids`, `padding_mask`).
    Variables are named so that layer-wise learning-rate decay finds their depth: the backbone's `embeddings/`,
    `embeddings_project/`, `transformer_layer_{i}/`, and the head's `classifier/`.

    Args:
        backbone: an `ElectraBackbone` (e.g. a pre-trained discriminator's `backbone`).
        num_classes: number of classes (by default as many as `labels`, or 2); ignored (one output) with
            `regression`.
        preprocessor: an `ElectraTextClassifierPreprocessor`, or None for token-id inputs.
        regression: one linear output instead of class logits.
        dropout: dropout on the [CLS] vector (0.1 in the reference).
        labels: the label strings in id order (e.g. ["negative", "positive"]), saved with the model: `fit` and
            `evaluate` take them as `y`, `predict_labels` returns them, and the exported model returns them too.
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = ElectraTextClassifierPreprocessor

    def __init__(
        self,
        backbone,
        num_classes=None,
        preprocessor=None,
        regression=False,
        dropout=CLASSIFIER_DROPOUT,
        labels=None,
        **kwargs,
    ):
        mapping = _label_mapping(labels, num_classes, regression)
        if num_classes is None:
            num_classes = len(mapping.names) if mapping else 2
        if not regression and (not isinstance(num_classes, int) or num_classes < 2):
            raise ConfigError(
                f"a classifier needs num_classes >= 2, got num_classes={num_classes!r}; use "
                "regression=True for a single score",
                arguments=("num_classes", "regression"),
            )
        # keras-hub's order: layers as attributes first, then the functional graph.
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = ElectraDropout(dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        # Glorot-uniform kernel and zero bias: the reference's tf.layers.dense defaults for its task heads.
        self.output_dense = keras.layers.Dense(
            1 if regression else num_classes, dtype=backbone.dtype_policy, name="classifier"
        )
        # Before the functional graph, which the head's outputs need, and its init, which compiles with the defaults
        # (and these choose the loss).
        self.num_classes = 1 if regression else num_classes
        self.regression = bool(regression)
        inputs = backbone.input
        outputs = self._head_outputs(backbone(inputs)[:, 0, :])
        self.label_mapping = mapping
        self.dropout = float(dropout)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    @classmethod
    def from_preset(
        cls,
        preset,
        num_classes=None,
        regression=False,
        max_seq_length=128,
        vocab_file=None,
        do_lower_case=None,
        strip_accents=None,
        dropout=CLASSIFIER_DROPOUT,
        load_weights=True,
        labels=None,
        *,
        format="auto",
        num_heads=None,
        allow_embedding_mismatch=False,
        **kwargs,
    ):
        """A classifier on the pre-trained backbone at `preset`: any checkpoint `electra_tf.models.load_checkpoint`
        reads (our `<model_dir>/pretrained`, a pre-training run, the reference's TF1 checkpoints, Hugging Face,
        keras-hub), with a new head, and a preprocessor on the checkpoint's vocabulary (or `vocab_file`) that
        normalises text as the checkpoint records (its casing and accents; `do_lower_case` / `strip_accents` put other
        values over them). `format`, `num_heads` (the reference's TF1 checkpoints do not record it) and
        `allow_embedding_mismatch` are `load_checkpoint`'s."""
        backbone, vocab_file, settings = pretrained_backbone_and_tokenizer(
            cls,
            preset,
            load_weights,
            vocab_file,
            do_lower_case,
            strip_accents,
            format=format,
            num_heads=num_heads,
            allow_embedding_mismatch=allow_embedding_mismatch,
        )
        preprocessor = ElectraTextClassifierPreprocessor(
            vocab_file,
            max_seq_length=max_seq_length,
            do_lower_case=settings.do_lower_case,
            strip_accents=settings.strip_accents,
        )
        return cls(
            backbone,
            num_classes=num_classes,
            preprocessor=preprocessor,
            regression=regression,
            dropout=dropout,
            labels=labels,
            **kwargs,
        )

    def call(self, inputs, training=None, mask=None):
        """The functional graph's outputs, except in training: then the backbone's last layer computes [CLS] alone
        (`ElectraBackbone.encode` with `output_length=1`), the same values at about 6 % less of the step's arithmetic
        for ELECTRA-Small (the head reads nothing else)."""
        if not training:
            return super().call(inputs, training=training, mask=mask)
        return self._head_outputs(self.backbone.encode(inputs, training=True, output_length=1)[:, 0, :], training=True)

    def _head_outputs(self, cls_vector, training=None):
        """Dropout and the dense layer on the [CLS] vectors: float32 logits (losses and metrics in float32 whatever
        the mixed-precision policy), or one score per example for regression."""
        logits = ops.cast(self.output_dense(self.output_dropout(cls_vector, training=training)), "float32")
        return ops.squeeze(logits, axis=-1) if self.regression else logits

    @property
    def labels(self):
        """The label strings in id order, or None."""
        return self.label_mapping.names if self.label_mapping else None

    def label_ids(self, y):
        if not label_strings.is_text(y):
            return y
        return self.require_labels().ids(np.asarray(y).reshape(-1))

    def predict_labels(self, x, batch_size=None, **kwargs):
        """What the command line writes to its predictions files, as a Python list: the predicted label string of
        each example (its class id if the classifier has no `labels`), or its score for regression."""
        kwargs.setdefault("verbose", 0)
        return self.output_labels(self.predict(x, batch_size=batch_size, **kwargs))

    def output_labels(self, outputs):
        """`predict_labels` of the outputs of `predict`."""
        outputs = np.asarray(outputs)
        if self.regression:
            return [float(score) for score in outputs.reshape(-1)]
        ids = np.argmax(outputs, axis=-1)
        return self.label_mapping.strings(ids) if self.label_mapping else [int(index) for index in ids]

    @property
    def num_layers(self):
        """The backbone's number of Transformer layers (what layer-wise learning-rate decay needs)."""
        return self.backbone.num_layers

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto", num_train_steps=None, **kwargs):
        """keras-hub's `compile` with the reference's defaults: `optimizer="auto"` is the reference's fine-tuning
        optimizer for the backbone's size (`finetune.optimization.reference_finetuning_optimizer`: Adam without bias
        correction, weight decay 0.01, the gradient clipped to global norm 1.0, layer-wise decay 0.8 (0.9 for 24
        layers), learning rate 3e-4 / 1e-4 / 5e-5 for
        small / base / large widths; with `num_train_steps`, 10 % warm-up and linear decay to 0 over them, otherwise
        constant). `loss="auto"`: sparse categorical cross-entropy on logits, mean squared error for regression;
        `metrics="auto"`: accuracy (none for regression). `gradient_accumulation_steps=N` runs each batch of `fit` as N
        micro-batches in turn, `concurrent_micro_batches=N` as N at once (faster on a CPU once each has its share of
        the threads: `electra_tf.training.distribution.share_threads_between_micro_batches`), both with the update of
        the whole batch (`GradientAccumulation`)."""
        if optimizer == "auto":
            optimizer = reference_finetuning_optimizer(self.backbone, num_train_steps)
        if loss == "auto":
            loss = (
                keras.losses.MeanSquaredError()
                if self.regression
                else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            )
        if metrics == "auto":
            metrics = [] if self.regression else [keras.metrics.SparseCategoricalAccuracy("accuracy")]
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None, text_pairs=False, **kwargs):
        """With a preprocessor and no `input_signature`: a SavedModel for TF Serving with a raw-text signature
        `serve_text` (`texts`, or `text_a` and `text_b` with `text_pairs`) and a token-id one, `serving_default`
        (`finetune.models.serving`). Otherwise Keras' own export."""
        if self.preprocessor is None or input_signature is not None or format != "tf_saved_model":
            return super().export(filepath, format=format, verbose=verbose, input_signature=input_signature, **kwargs)
        return export_classifier(self, filepath, text_pairs=text_pairs)

    def get_config(self):
        config = super().get_config()
        config.update(
            num_classes=self.num_classes, regression=self.regression, dropout=self.dropout, labels=self.labels
        )
        return config


def _label_mapping(labels, num_classes, regression):
    if labels is None:
        return None
    if regression:
        raise ConfigError(
            "a regression model has no labels: pass labels=... or regression=True, not both",
            arguments=("labels", "regression"),
        )
    mapping = label_strings.LabelMapping(labels)
    if num_classes is not None and num_classes != len(mapping.names):
        raise ConfigError(
            f"num_classes={num_classes!r} does not match the {len(mapping.names)} "
            f"labels={mapping.names}; leave num_classes out, labels give it",
            arguments=("num_classes", "labels"),
        )
    return mapping
