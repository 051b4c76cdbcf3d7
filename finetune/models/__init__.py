"""Keras models for fine-tuning: the classifier on token ids, the raw-text preprocessor and the end-to-end model."""

from finetune.models.classifier import ElectraClassifier
from finetune.models.preprocessor import ElectraPreprocessor
from finetune.models.text_classifier import ElectraTextClassifier

__all__ = ["ElectraClassifier", "ElectraPreprocessor", "ElectraTextClassifier"]
