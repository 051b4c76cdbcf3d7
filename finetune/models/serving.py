"""SavedModel export of a fine-tuned `ElectraTextClassifier` for TF Serving, with a token-id and a raw-text signature.

Lives beside the fine-tuning models (not in `electra_tf/export.py`) because it needs them to load the `.keras` file;
it writes the SavedModel the way the discriminator's and generator's exports do (`write_serving_model`).
"""

import json
import os
import zipfile

import tensorflow as tf

from electra_tf.errors import CheckpointError, ConfigError
from electra_tf.export import write_serving_model

TEXT_INPUTS = ("auto", "single", "pair")


class ClassifierServingModule(tf.Module):
    """The fine-tuned classifier, its tokenizer's tables and two signatures.

    `serving_default`: int32 `input_ids`, `input_mask`, `segment_ids` [batch, seq] -> float32 `logits`
    ([batch, classes]; regression: [batch]) and, for classification, `probabilities` (softmax of the logits).
    `serve_text`: single sentences: a string vector `texts`; sentence pairs: string vectors `text_a` and `text_b` ->
    the same outputs plus the `input_ids`, `input_mask` and `segment_ids` it packed in-graph (the classifier's own
    `ElectraTextClassifierPreprocessor`, so serving tokenises exactly as training did).
    """

    def __init__(self, text_classifier, text_pairs):
        super().__init__(name="electra_text_classifier")
        self.classifier = text_classifier
        self.preprocessor = text_classifier.preprocessor
        # Tracked here as well so the vocabulary tables are saved whatever Keras tracks inside the layer.
        self.tokenizer = self.preprocessor.text_tokenizer
        self.regression = text_classifier.regression
        id_spec = tf.TensorSpec([None, None], tf.int32)
        text_spec = tf.TensorSpec([None], tf.string)
        self.serve_ids = tf.function(self._serve_ids, input_signature=[id_spec, id_spec, id_spec])
        if text_pairs:
            self.serve_text = tf.function(self._serve_text_pairs, input_signature=[text_spec, text_spec])
        else:
            self.serve_text = tf.function(self._serve_texts, input_signature=[text_spec])

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        logits = tf.cast(self.classifier(
            {"token_ids": input_ids, "padding_mask": input_mask, "segment_ids": segment_ids}, training=False),
            tf.float32)
        if self.regression:
            return {"logits": logits}
        return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1)}

    def _serve_features(self, features):
        outputs = self._serve_ids(**features)
        outputs.update(features)
        return outputs

    def _serve_texts(self, texts):
        return self._serve_features(self.preprocessor.pack(texts))

    def _serve_text_pairs(self, text_a, text_b):
        return self._serve_features(self.preprocessor.pack((text_a, text_b)))


def load_text_classifier(path):
    """The `ElectraTextClassifier` in the `.keras` file at `path`, or a one-line `CheckpointError` saying why not."""
    import keras

    from finetune.models.text_classifier import ElectraTextClassifier

    if not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else "does not exist"
        raise CheckpointError(f"--init_checkpoint={path} {what}: --model=classifier takes the model.keras file of a "
                              "fine-tuned classifier (run_finetuning.py --save_models writes trial_<k>/model.keras)")
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"{path} is not a .keras file: --model=classifier takes the model.keras of "
                              "run_finetuning.py --save_models")
    try:
        model = keras.saving.load_model(path, compile=False)
    except (ValueError, TypeError, KeyError, OSError) as error:
        raise CheckpointError(f"cannot load {path} as a fine-tuned classifier: {str(error).splitlines()[0]}") from error
    if not isinstance(model, ElectraTextClassifier):
        raise CheckpointError(f"{path} holds a {type(model).__name__}, not a fine-tuned ElectraTextClassifier (the "
                              "model.keras of run_finetuning.py --save_models)")
    return model


def is_pair_classifier(path, text_inputs="auto"):
    """Whether the raw-text signature takes sentence pairs: `text_inputs` ("single"/"pair"), or for "auto" the task in
    the fine-tuning run's results.json (one directory above `trial_<k>/model.keras`)."""
    if text_inputs not in TEXT_INPUTS:
        raise ConfigError(f"--text_inputs must be one of {', '.join(TEXT_INPUTS)}, got {text_inputs!r}")
    if text_inputs != "auto":
        return text_inputs == "pair"
    from finetune.glue.tasks import get_task

    results_file = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "results.json")
    try:
        with open(results_file, encoding="utf-8") as handle:
            task = json.load(handle)["task"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"cannot tell whether {path} classifies single sentences or pairs (no task in "
                          f"{results_file}): pass --text_inputs=single or --text_inputs=pair") from None
    return get_task(task).is_pair_task


def export_classifier(text_classifier, output_dir, text_pairs=False):
    """Write the classifier's SavedModel to `output_dir` atomically."""
    module = ClassifierServingModule(text_classifier, text_pairs)
    return write_serving_model(module, output_dir, {"serving_default": module.serve_ids,
                                                    "serve_text": module.serve_text})
