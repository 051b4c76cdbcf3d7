"""Token tagging as a fine-tuning `Task`: one tag per word from CoNLL-style column files.

Tasks: `chunk` (CoNLL-2000, the reference's tagging task; chunk F1 by conlleval's rules), `ner` (span F1, IOB1 or
IOB2; CoNLL-2003 from tensorflow-datasets with `data_source="tfds"`), `pos` (word accuracy), `ged` (grammatical
error detection: binary c/i labels, precision, recall and F0.5 of the "incorrect" class), and `tagging` for any other
tag set (word accuracy). The tag set is the training file's; a dev or test tag it lacks is scored as it stands (a miss
the tagger cannot avoid), with a warning naming the file and line and a count in results.json (`unseen_tags`). Files
come from `train_file`, `dev_file` and optionally `test_file`; `word_column` and `tag_column` say where the word and
the tag are (`.conllu` files: the UPOS tag; Penn Treebank `.pos` files, comma-separated paths or globs; FCE's token TSV
for `ged`: word and c/i label).

Outputs per trial: `dev_predictions.txt` (and `test_predictions.txt`), CoNLL format `word gold predicted`, a blank
line between sentences; with `save_models`, an `ElectraTokenClassifier` (raw text or words in) as `model.keras`.
"""

import dataclasses
import os

import numpy as np
from absl import logging

from electra_tf.errors import ConfigError, DataError
from finetune.hyperparameters import size_defaults
from finetune.task import Task, first_examples

# Loading, training and evaluating import what they need where they start, TensorFlow among it: a job is
# validated with this module (`finetune.registry`) before TensorFlow is imported.

EPOCHS = 3
MAX_SEQ_LENGTH = 128
SPAN, ACCURACY, DETECTION = "span_f1", "accuracy", "detection"


@dataclasses.dataclass(frozen=True)
class TaggingSpec:
    name: str
    metric: str
    description: str
    positive_tag: str = None  # DETECTION: the class whose precision, recall and F0.5 are reported
    ignored_tags: tuple = ()  # labels meaning "not labelled": no loss, not scored


SPECS = {
    spec.name: spec
    for spec in (
        TaggingSpec("chunk", SPAN, "CoNLL-2000 chunking (word POS chunk columns)"),
        TaggingSpec("ner", SPAN, "named entities (IOB1 or IOB2 tags)"),
        TaggingSpec("pos", ACCURACY, "part-of-speech tags"),
        TaggingSpec(
            "ged",
            DETECTION,
            "grammatical error detection (c/i labels per token)",
            positive_tag="i",
            ignored_tags=("NA",),
        ),
        TaggingSpec("tagging", ACCURACY, "any tag set"),
    )
}


@dataclasses.dataclass
class TaggingData:
    tags: list
    train: object  # TaggingFeatures
    train_sentences: list
    evaluation: dict  # split -> (sentences, TaggingFeatures)
    unseen_tags: dict  # split -> {gold tag never in train_file: number of words}


class TaggingTask(Task):
    """One tagging task (see the module docstring) on the user's files."""

    options = ("train_file", "dev_file", "test_file", "word_column", "tag_column")

    def __init__(self, spec):
        self.spec = spec
        self.name = spec.name

    def default_hyperparameters(self, model_size):
        return size_defaults(model_size, EPOCHS, MAX_SEQ_LENGTH)

    def validate(self, job):
        if job.data_source == "tfds":
            from finetune.tagging.readers import TFDS_TAGGING

            if self.name not in TFDS_TAGGING:
                raise ConfigError(
                    f"task={self.name} has no tensorflow-datasets source (those with one: "
                    f"{sorted(TFDS_TAGGING)}); pass train_file and dev_file",
                    arguments=("task", "data_source"),
                )
            return
        for argument in ("train_file", "dev_file"):
            if not getattr(job, argument):
                raise ConfigError(
                    f"task={self.name} needs {argument}: a CoNLL-style file of {self.spec.description}",
                    arguments=(argument, "task"),
                )
        from finetune.tagging.readers import expand_paths

        for argument in ("train_file", "dev_file", "test_file"):
            for path in expand_paths(getattr(job, argument) or ""):
                if not os.path.isfile(path):
                    raise DataError(f"{argument}={path} does not exist", arguments=(argument,))

    def read_split(self, job, split):
        """The sentences of `split` ("train", "dev", "test"): from `<split>_file`, or from tensorflow-datasets with
        data_source="tfds"; None when the split has no file."""
        if job.data_source == "tfds":
            from finetune.tagging.readers import read_tfds_tagged

            return read_tfds_tagged(self.name, split, data_dir=job.tfds_data_dir, download=job.tfds_download)
        path = getattr(job, f"{split}_file")
        return self.read(job, path) if path else None

    def read_examples(self, job, split):
        """`read_split`'s sentences, only the first `max_train_examples` (train) or `max_eval_examples`."""
        sentences = self.read_split(job, split)
        limit = job.max_train_examples if split == "train" else job.max_eval_examples
        return None if sentences is None else first_examples(sentences, limit)

    def read(self, job, path):
        from finetune.tagging import readers

        encoding = {"encoding": job.input_encoding, "encoding_errors": job.encoding_errors}
        if self.spec.metric == DETECTION:
            return readers.read_fce(path, **encoding)
        if path.endswith(".conllu"):
            return readers.read_conllu(path, **encoding)
        if path.endswith(".pos"):
            return readers.read_ptb_pos(path, **encoding)
        return readers.read_conll(path, word_column=job.word_column, tag_column=job.tag_column, **encoding)

    def load_data(self, job, tokenizer, max_seq_length):
        from finetune.models.labels import LabelMapping
        from finetune.tagging.features import featurize

        train = self.read_examples(job, "train")
        tags = sorted({tag for sentence in train for tag in sentence.tags} - set(self.spec.ignored_tags))
        if len(tags) < 2:
            raise DataError(
                f"train_file={job.train_file} has only the tag {tags}: a tagger needs two or more",
                arguments=("train_file",),
            )
        if self.spec.positive_tag and self.spec.positive_tag not in tags:
            raise DataError(
                f"train_file={job.train_file} has no {self.spec.positive_tag!r} tag (it has {tags})",
                arguments=("train_file",),
            )
        tag_ids = LabelMapping(tags, argument="tags").index
        evaluation, unseen_counts = {}, {}
        for split in ("dev", "test"):
            sentences = self.read_examples(job, split)
            if sentences is not None:
                unseen = unseen_tags(sentences, set(tag_ids) | set(self.spec.ignored_tags))
                _warn_unseen_tags(unseen, f"{split}_file")
                unseen_counts[split] = {tag: count for tag, (count, _) in unseen.items()}
                evaluation[split] = (sentences, featurize(sentences, tokenizer, max_seq_length, tag_ids))
        return TaggingData(tags, featurize(train, tokenizer, max_seq_length, tag_ids), train, evaluation, unseen_counts)

    def describe_data(self, data):
        return {
            "tags": data.tags,
            "num_train_sentences": len(data.train_sentences),
            "num_train_windows": len(data.train.windows),
            "unseen_tags": {split: counts for split, counts in data.unseen_tags.items() if counts},
        }

    def describe_training(self, data):
        return f"{len(data.train_sentences)} train sentences in {len(data.train.windows)} windows"

    def build_model(self, pretrained_model, hyperparameters, job, data):
        from electra_tf.models import clone_backbone
        from finetune.models import ElectraTokenClassifier

        return ElectraTokenClassifier(clone_backbone(pretrained_model.backbone), tags=data.tags)

    def compile_model(self, model, optimizer, **micro_batches):
        model.compile(optimizer=optimizer, **micro_batches)

    def train_examples(self, model, data):
        return data.train.dataset()

    def validation_dataset(self, model, data, batch_size, pad_to_max_length=False):
        # Words with a tag unseen in training weigh 0 here (no loss), while the official score counts them.
        if "dev" not in data.evaluation:
            return None
        return data.evaluation["dev"][1].dataset(batch_size, pad_to_max_length=pad_to_max_length)

    def evaluate(self, model, data, trial_dir, job):
        from finetune.batching import predict_in_buckets

        results = {}
        for split, (sentences, features) in data.evaluation.items():
            logits = predict_in_buckets(
                model,
                features.inputs(),
                job.eval_batch_size,
                pad_to_max_length=job.pad_to_max_length,
                sequence_outputs=True,
            )
            predicted = [
                model.label_mapping.strings(sentence)
                for sentence in features.sentence_predictions(np.argmax(logits, axis=-1))
            ]
            write_conll_predictions(os.path.join(trial_dir, f"{split}_predictions.txt"), sentences, predicted)
            if split == "dev":
                results[self.name] = self.score([list(s.tags) for s in sentences], predicted)
            else:
                results[f"{self.name}-test"] = self.score([list(s.tags) for s in sentences], predicted)
        return results

    def score(self, gold, predicted):
        """The task's official metrics (in percent) of word-level `predicted` tags against `gold`."""
        from finetune.tagging import metrics

        if self.spec.ignored_tags:
            kept = [
                [(g, p) for g, p in zip(gold_tags, predicted_tags) if g not in self.spec.ignored_tags]
                for gold_tags, predicted_tags in zip(gold, predicted)
            ]
            gold, predicted = [[g for g, _ in s] for s in kept], [[p for _, p in s] for s in kept]
        if self.spec.metric == SPAN:
            return metrics.span_f1(gold, predicted)
        if self.spec.metric == DETECTION:
            return metrics.binary_detection_scores(gold, predicted, positive=self.spec.positive_tag)
        return {"accuracy": metrics.token_accuracy(gold, predicted)}

    def save_model(self, model, path, tokenizer, max_seq_length):
        from finetune.models import ElectraTokenClassifierPreprocessor

        model.preprocessor = ElectraTokenClassifierPreprocessor.from_tokenizer(tokenizer, max_seq_length)
        model.save(path)


def unseen_tags(sentences, known):
    """{tag: (number of words, "file line N" of the first)} of the gold tags of `sentences` that are not `known`."""
    unseen = {}
    for sentence in sentences:
        for offset, tag in enumerate(sentence.tags):
            if tag not in known:
                count, first = unseen.get(tag, (0, f"{sentence.source} line {sentence.line + offset}"))
                unseen[tag] = (count + 1, first)
    return unseen


def _warn_unseen_tags(unseen, argument):
    # Real benchmarks have them (CoNLL-2000's test set has I-LST, never in its training set): the words are scored as
    # they stand, misses the tagger cannot avoid, rather than refused or silently dropped.
    for tag, (count, first) in sorted(unseen.items()):
        logging.warning(
            "%s: tag %r on %d word(s) (first at %s) never occurs in train_file; the tagger cannot predict "
            "it, so these words count as errors",
            argument,
            tag,
            count,
            first,
        )


def write_conll_predictions(path, sentences, predicted):
    """`word gold predicted` per line, a blank line after each sentence (conlleval's input), written atomically."""
    from electra_tf.io_utils import atomic_write_text

    lines = []
    for sentence, tags in zip(sentences, predicted):
        lines.extend(f"{word} {gold} {tag}" for word, gold, tag in zip(sentence.words, sentence.tags, tags))
        lines.append("")
    atomic_write_text(path, "\n".join(lines) + "\n")


def tagging_tasks():
    """{name: TaggingTask} for chunk, ner, pos, ged and tagging."""
    return {name: TaggingTask(spec) for name, spec in SPECS.items()}
