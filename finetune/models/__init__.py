"""Fine-tuning models, each composing an `ElectraBackbone`: the text classifier and the word tagger (each with its
raw-text preprocessor) and the SQuAD span model.

Importing this package registers with Keras every class a saved task model holds (the task models, their
preprocessors, the backbone and its layers, the SQuAD heads and the fine-tuning optimizer), so that in a fresh process

    import finetune.models
    model = keras.saving.load_model("model.keras")

restores any of them, trained or not.
"""

# A saved model's compile state holds its optimizer (and schedule): register them too.
import finetune.optimization  # noqa: F401
from finetune.models.squad_model import ElectraSquadModel
from finetune.models.text_classifier import ElectraTextClassifier
from finetune.models.text_classifier_preprocessor import ElectraTextClassifierPreprocessor
from finetune.models.token_classifier import ElectraTokenClassifier
from finetune.models.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor

__all__ = [
    "ElectraSquadModel",
    "ElectraTextClassifier",
    "ElectraTextClassifierPreprocessor",
    "ElectraTokenClassifier",
    "ElectraTokenClassifierPreprocessor",
]
