"""The fine-tuning task protocol: examples -> features -> a model head -> a scorer.

In the spirit of the reference's `finetune/task.py`, a `Task` knows everything task-specific about fine-tuning, so
one runner (`finetune.runner`) fine-tunes every task the same way. The runner calls, per run:

    task.validate(job)                                  # task options and data files, before anything is loaded
    hyperparameters = task.default_hyperparameters(job.model_size).overridden(...)
    data = task.load_data(job, tokenizer, hyperparameters.max_seq_length)   # once for all trials

and per trial, with the trial's seed set:

    model = task.build_model(pretrained_model, hyperparameters, job, data) # under the strategy's scope
    task.compile_model(model, optimizer, gradient_accumulation_steps=..., concurrent_micro_batches=...)
    model.fit(task.train_examples(model, data) shuffled per epoch and batched in length buckets by the runner,
              validation_data=task.validation_dataset(model, data, eval_batch_size, job.pad_to_max_length), ...)
    metrics = task.evaluate(model, data, trial_dir, job)                    # prediction files written, scored
    task.save_model(model, path, tokenizer, hyperparameters.max_seq_length) # with save_models

`job` is a `finetune.finetuning_spec.FinetuningJob`; a task reads its own options (SQuAD's `doc_stride`, ...) from it.
Implementations: `finetune.glue.task.GlueTask`, `finetune.squad.task.SquadTask`, `finetune.tagging.task.TaggingTask`;
`finetune.registry.get_task`
finds them by name.
"""

import abc


def first_examples(examples, limit):
    """The first `limit` of `examples` (all of them when `limit` is None): `max_train_examples` and
    `max_eval_examples` cut every task's splits with it."""
    return examples if limit is None else examples[:limit]


class Task(abc.ABC):
    """One fine-tuning task: its data, its model head, its training loss and its official scorer."""

    name: str  # canonical name, as results.json reports it ("STS-B", "squad")
    records_train_loss = False  # results.json lists each trial's training loss per epoch
    options = ()  # the job fields only this task reads (SQuAD's doc_stride, ...); other tasks' runs do not record them

    @abc.abstractmethod
    def default_hyperparameters(self, model_size):
        """The reference's `finetune.hyperparameters.FinetuningHyperparameters` for this task and `model_size`."""

    @abc.abstractmethod
    def validate(self, job):
        """Raises ConfigError/DataError, naming `job`'s fields, for bad task options or missing data files."""

    @abc.abstractmethod
    def load_data(self, job, tokenizer, max_seq_length):
        """Reads and featurises the training and evaluation splits once for all trials (only the first
        `job.max_train_examples` / `job.max_eval_examples` of each, see `first_examples`); returns an object the
        other methods take as `data`."""

    @abc.abstractmethod
    def describe_data(self, data):
        """Facts about `data` for results.json (e.g. {"num_train_examples": 96})."""

    @abc.abstractmethod
    def describe_training(self, data):
        """What one epoch trains on, for the progress line (e.g. "96 train examples")."""

    @abc.abstractmethod
    def build_model(self, pretrained_model, hyperparameters, job, data):
        """A fresh Keras model with a `num_layers` attribute (the depth layer-wise decay uses): this task's head on
        a copy of `pretrained_model`'s backbone (called under the strategy's scope); `data` is what `load_data`
        returned (a tagger takes its tag set from it)."""

    @abc.abstractmethod
    def compile_model(self, model, optimizer, **micro_batches):
        """Compiles `model` with `optimizer`, this task's loss and training metrics, and `micro_batches`
        (`gradient_accumulation_steps`, `concurrent_micro_batches`: see
        `electra_tf.training.gradient_accumulation.GradientAccumulation`)."""

    @abc.abstractmethod
    def train_examples(self, model, data):
        """The training `tf.data.Dataset` of (inputs, labels) pairs, unbatched and in file order: the runner shuffles
        each epoch by the trial's seed and batches it in length buckets (`finetune.trial_state.training_batches`)."""

    def bucketing(self, model):
        """`finetune.batching.length_bucketed_batches`' keyword arguments for `model`'s training examples (the
        mask that gives their length, the narrowest width the model takes)."""
        return {}

    def validation_dataset(self, model, data, batch_size, pad_to_max_length=False):
        """(inputs, labels) batches of the dev split that Keras evaluates after every epoch (`validation_data`:
        `val_loss` and the compiled metrics, in the logs and TensorBoard's validation/), or None (no such split, or
        labels the training loss does not take)."""
        return None

    @abc.abstractmethod
    def evaluate(self, model, data, trial_dir, job):
        """Predicts the evaluation splits, writes the prediction files into `trial_dir` and returns the official
        scores as {eval key: {metric: value}}."""

    @abc.abstractmethod
    def save_model(self, model, path, tokenizer, max_seq_length):
        """Saves the fine-tuned `model` as a .keras file at `path` (GLUE: with raw-text preprocessing)."""
