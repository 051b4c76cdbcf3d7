"""`ElectraTokenClassifier`: one tag per word (chunking, POS, NER, error detection) on an `ElectraBackbone`."""

import keras
import keras_hub
import numpy as np
import tensorflow as tf
from keras import ops

from electra_tf.errors import ConfigError
from electra_tf.layers.dropout import ElectraDropout
from electra_tf.models.backbone import ElectraBackbone
from electra_tf.models.lora import BackboneLora
from electra_tf.training.gradient_accumulation import GradientAccumulation
from finetune.models import labels as label_strings
from finetune.models.labelled_task import LabelledTask
from finetune.models.pretrained_parts import pretrained_backbone_and_tokenizer
from finetune.models.tagger_serving import export_tagger
from finetune.models.token_classifier_preprocessor import WORD_POSITIONS, ElectraTokenClassifierPreprocessor
from finetune.optimization import reference_finetuning_optimizer

TAGGER_DROPOUT = 0.1


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraTokenClassifier(LabelledTask, BackboneLora, GradientAccumulation, keras_hub.models.Task):
    """The reference's tagging model: backbone -> the vector of each word's first piece -> dropout 0.1 -> one dense
    layer, float32 logits [batch, max_seq_length, num_tags] (word k at index k; positions past the last word are
    padding). The other pieces of a word carry no label and no loss, as in the reference.

        tagger = ElectraTokenClassifier.from_preset("<model_dir>/pretrained", tags=["B-NP", "I-NP", "O"])
        tagger.compile()                          # the reference's fine-tuning optimizer, see `compile`
        tagger.fit([["He", "reckons", "..."], ...], [["B-NP", "B-VP", ...], ...], batch_size=32, epochs=3)
        tagger.predict_labels(["He reckons the deficit will narrow."])  # [["B-NP", "B-VP", "B-NP", ...]]
        tagger.tag(["He reckons the current account deficit will narrow."])   # words, tags and byte offsets
        tagger.save("tagger.keras")               # keras.saving.load_model after `import finetune.models`

    With `preprocessor=None` the model takes the backbone's int inputs and `word_positions` (see
    `ElectraTokenClassifierPreprocessor`). `y` holds per word a tag of `tags` or its id (mapped by
    `finetune.models.labels`, in tf.data datasets too); data in memory are shuffled every epoch.

    Args:
        backbone: an `ElectraBackbone`.
        tags: the tag names, in id order.
        preprocessor: an `ElectraTokenClassifierPreprocessor`, or None for int inputs.
        dropout: dropout on the word vectors (0.1 in the reference).
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = ElectraTokenClassifierPreprocessor

    def __init__(self, backbone, tags, preprocessor=None, dropout=TAGGER_DROPOUT, **kwargs):
        mapping = label_strings.LabelMapping(tags, argument="tags")
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = ElectraDropout(dropout, dtype=backbone.dtype_policy, name="tagger_dropout")
        # Glorot-uniform kernel and zero bias: the reference's tf.layers.dense defaults for its task heads.
        self.output_dense = keras.layers.Dense(len(mapping.names), dtype=backbone.dtype_policy, name="tagger")
        inputs = dict(backbone.input)
        inputs[WORD_POSITIONS] = keras.Input(shape=(None,), dtype="int32", name=WORD_POSITIONS)
        sequence = backbone({name: inputs[name] for name in backbone.input})
        word_vectors = ops.take_along_axis(sequence, ops.expand_dims(inputs[WORD_POSITIONS], -1), axis=1)
        logits = ops.cast(self.output_dense(self.output_dropout(word_vectors)), "float32")
        self.label_mapping = mapping
        self.dropout = float(dropout)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

    @classmethod
    def from_preset(
        cls,
        preset,
        tags,
        max_seq_length=128,
        vocab_file=None,
        do_lower_case=None,
        strip_accents=None,
        dropout=TAGGER_DROPOUT,
        load_weights=True,
        *,
        format="auto",
        num_heads=None,
        allow_embedding_mismatch=False,
        **kwargs,
    ):
        """A tagger on the pre-trained backbone at `preset` (any checkpoint `electra_tf.models.load_checkpoint`
        reads), with a new head and a preprocessor that normalises text as the checkpoint records (see
        `ElectraTextClassifier.from_preset`, also for `format`, `num_heads` and `allow_embedding_mismatch`)."""
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
        preprocessor = ElectraTokenClassifierPreprocessor(
            vocab_file,
            max_seq_length=max_seq_length,
            do_lower_case=settings.do_lower_case,
            strip_accents=settings.strip_accents,
        )
        return cls(backbone, tags=tags, preprocessor=preprocessor, dropout=dropout, **kwargs)

    @property
    def num_layers(self):
        """The backbone's number of Transformer layers (what layer-wise learning-rate decay needs)."""
        return self.backbone.num_layers

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto", num_train_steps=None, **kwargs):
        """keras-hub's `compile` with the reference's defaults (as `ElectraTextClassifier.compile`): the reference's
        fine-tuning optimizer for the backbone's size; cross-entropy of each packed word's tag averaged over the
        packed words (`mean_with_sample_weight`); word accuracy; `gradient_accumulation_steps` as
        `GradientAccumulation` says."""
        if optimizer == "auto":
            optimizer = reference_finetuning_optimizer(self.backbone, num_train_steps)
        if loss == "auto":
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight")
        if metrics == "auto":
            # Weighted: only the packed words count (the padding and the other pieces weigh 0).
            metrics = None
            kwargs.setdefault("weighted_metrics", [keras.metrics.SparseCategoricalAccuracy("accuracy")])
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    @property
    def tags(self):
        """The tag names in id order."""
        return self.label_mapping.names

    def inputs_in_memory(self, x):
        if isinstance(x, (list, tuple)) and x and not isinstance(x[0], (str, bytes)):
            return tf.ragged.constant([[str(word) for word in words] for words in x], dtype=tf.string)
        if isinstance(x, np.ndarray) and x.dtype.kind in "OUS":
            return tf.constant(x.astype(str))
        return x

    def label_ids(self, y):
        """Ragged int32 ids [batch, (words)] of per-word tags (strings of `tags`, or ids) given as lists."""
        if not isinstance(y, (list, tuple, np.ndarray)) or isinstance(y, np.ndarray) and y.dtype != object:
            return y
        sentences = [list(sentence) for sentence in y]
        lengths = [len(sentence) for sentence in sentences]
        flat = [tag for sentence in sentences for tag in sentence]
        ids = self.label_mapping.ids(flat) if label_strings.is_text(flat) else np.array(flat, np.int32)
        return tf.RaggedTensor.from_row_lengths(tf.constant(ids, tf.int32), lengths)

    def predict_labels(self, x, batch_size=32):
        """Per example of `x` (raw strings or word lists), the tag of each word as a Python list (None for a word
        that did not fit `max_seq_length` pieces)."""
        return [[tag for _, tag, _, _ in words] for words in self.tag(x, batch_size=batch_size)]

    def tag(self, inputs, batch_size=32):
        """Tags of raw strings or of word lists: per example a list of (word, tag, start, end), with the word's byte
        offsets into the string (None for given words). Words that did not fit `max_seq_length` get tag None."""
        if self.preprocessor is None:
            raise ConfigError(
                "tag() and predict_labels() need a preprocessor: build the tagger with from_preset or preprocessor=...",
                arguments=("preprocessor",),
            )
        raw = isinstance(inputs, (list, tuple)) and inputs and isinstance(inputs[0], (str, bytes))
        if raw:
            words, starts, ends = self.preprocessor.split_text(tf.constant(list(inputs)))
            words, starts, ends = words.to_list(), starts.to_list(), ends.to_list()
        else:
            words = [list(sentence) for sentence in inputs]
        _, num_packed = self.preprocessor.pack(
            tf.ragged.constant(
                [[w if isinstance(w, bytes) else str(w).encode() for w in s] for s in words], dtype=tf.string
            )
        )
        predictions = np.argmax(self.predict(inputs, batch_size=batch_size, verbose=0), axis=-1)
        results = []
        for index, sentence in enumerate(words):
            packed = int(num_packed[index])
            results.append(
                [
                    (
                        word.decode() if isinstance(word, bytes) else word,
                        self.tags[predictions[index, k]] if k < packed else None,
                        starts[index][k] if raw else None,
                        ends[index][k] if raw else None,
                    )
                    for k, word in enumerate(sentence)
                ]
            )
        return results

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None, **kwargs):
        """With a preprocessor and no `input_signature`: a SavedModel for TF Serving with a raw-text signature
        `serve_text` (word-level words, tags and offsets) and an id one, `serving_default`
        (`finetune.models.tagger_serving`). Otherwise Keras' own export."""
        if self.preprocessor is None or input_signature is not None or format != "tf_saved_model":
            return super().export(filepath, format=format, verbose=verbose, input_signature=input_signature, **kwargs)
        return export_tagger(self, filepath)

    def get_config(self):
        config = super().get_config()
        config.update(tags=list(self.tags), dropout=self.dropout)
        return config
