"""SavedModel of a fine-tuned SQuAD model (`electra-finetune --task=squad* --save_models`'s model.keras).

`serving_default`: int32 `input_ids`, `input_mask`, `segment_ids` [batch, seq] (windows built as
`finetune.squad.features` builds them) -> the head's outputs: `start_logits` and `end_logits` [batch, seq] for the
simple head; the beam's top starts and ends (and, for SQuAD 2.0, the answerability logit) for the paper's head.
`serve_text`: `question` and `context` string vectors -> one window `[CLS] question [SEP] context [SEP]`, the question
cut to `max_query_length` pieces and the pair to `max_seq_length` (longer documents need the sliding windows of the
id signature) -> the same outputs plus the packed inputs.
"""

import os

from electra_tf.checkpoints import tokenizer_files
from electra_tf.errors import CheckpointError
from electra_tf.inputs import pack_segment_pairs
from electra_tf.models.lora import merged_lora
from electra_tf.serving_module import ServingModule, served_outputs
from electra_tf.tokenizer import BERT_UNCASED, ElectraTokenizer
from finetune.models.saved_classifier import load_finetuned_model
from finetune.models.squad_model import ElectraSquadModel


class SquadServingModule(ServingModule):
    def __init__(self, squad_model, tokenizer, max_seq_length, max_query_length):
        super().__init__("electra_squad", tokenizer, max_seq_length)
        self.squad_model = squad_model
        self.max_query_length = max_query_length

    def _serve_ids(self, input_ids, input_mask, segment_ids):
        # The SQuAD model takes the reference's feature names, as its windows are built.
        return served_outputs(
            self.squad_model, {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
        )

    def _serve_text(self, question, context):
        question_ids = self.tokenizer.tokenize(question)[:, : self.max_query_length]
        features = pack_segment_pairs(
            question_ids,
            self.tokenizer.tokenize(context),
            self.max_seq_length,
            self.tokenizer.cls_id,
            self.tokenizer.sep_id,
        )
        return self._serve_packed(features)


def load_squad_model(path):
    """The `ElectraSquadModel` saved in the `.keras` file at `path`, or a one-line `CheckpointError` saying why not."""
    return load_finetuned_model(path, ElectraSquadModel, "SQuAD model")


def squad_model_tokenizer(path, vocab_file=None, do_lower_case=None, strip_accents=None):
    """The tokenizer the SQuAD model at `path` was fine-tuned with: the vocab.txt and tokenizer.json saved beside it
    (`vocab_file`, `do_lower_case` and `strip_accents` put over them when given)."""
    directory = os.path.dirname(os.path.abspath(path))
    vocab_file = vocab_file or tokenizer_files.vocab_file_of(directory)
    if not vocab_file:
        raise CheckpointError(
            f"no {tokenizer_files.VOCAB_NAME} beside {path} (a model saved before the tokenizer "
            "was saved with it): pass vocab_file=<the vocab.txt it was fine-tuned with>",
            arguments=("vocab_file",),
        )
    recorded = tokenizer_files.read_tokenizer_json(directory) or BERT_UNCASED
    settings = recorded.overridden(do_lower_case, strip_accents)
    return ElectraTokenizer.from_settings(vocab_file, settings)


def export_squad(
    squad_model,
    tokenizer,
    output_dir,
    max_seq_length=384,
    max_query_length=64,
    export_format="saved_model",
    quantize=None,
):
    """Write the SQuAD model to `output_dir` atomically (a LoRA model's kernels merged: `merged_lora`): a SavedModel,
    or with `export_format` "litert" / "onnx" its token-id signature at `max_seq_length` as model.tflite / model.onnx
    (`tokenizer` and `max_query_length` are then unused), with `quantize="int8"` int8 weights."""
    module = SquadServingModule(merged_lora(squad_model), tokenizer, max_seq_length, max_query_length)
    return module.write(output_dir, export_format, quantize)
