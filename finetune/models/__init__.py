"""Fine-tuning models, each composing an `ElectraBackbone`: the text classifier and the word tagger (each with its
raw-text preprocessor) and the SQuAD span model."""

from finetune.models.text_classifier import ElectraTextClassifier
from finetune.models.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from finetune.models.token_classifier import ElectraTokenClassifier
from finetune.models.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor
from finetune.squad.model import ElectraSquadModel

__all__ = ["ElectraSquadModel", "ElectraTextClassifier", "ElectraTextClassifierPreprocessor", "ElectraTokenClassifier",
           "ElectraTokenClassifierPreprocessor"]
