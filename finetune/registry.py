"""Every fine-tuning task by name: the nine GLUE tasks, SQuAD 1.1 (`squadv1`) and 2.0 (`squad`), and the tagging
tasks (`chunk`, `ner`, `pos`, `ged`, `tagging`), and the user's own files (`classification`, `regression`)."""

import functools

from electra_tf.errors import ConfigError

# The tasks' modules are imported when the tasks are first asked for: `electra-finetune --help` imports this
# module and needs none of them.


@functools.lru_cache(maxsize=None)
def tasks():
    """{canonical name: `finetune.task.Task`}, GLUE first."""
    from finetune.glue.task import glue_tasks
    from finetune.own_data.task import own_data_tasks
    from finetune.squad.task import squad_tasks
    from finetune.tagging.task import tagging_tasks

    return {**glue_tasks(), **squad_tasks(), **tagging_tasks(), **own_data_tasks()}


def _lookup_key(name):
    # Case-insensitive, with or without the hyphen: "sst2", "SST-2", "stsb", "SQuAD".
    return name.replace("-", "").lower()


def get_task(name):
    """The `Task` called `name`; ConfigError listing the known tasks otherwise."""
    by_key = {_lookup_key(known): task for known, task in tasks().items()}
    task = by_key.get(_lookup_key(name or ""))
    if task is None:
        problem = "task is required" if not name else f"unknown task={name!r}"
        raise ConfigError(f"{problem}; choose one of {', '.join(tasks())}", arguments=("task",))
    return task


def reference_hyperparameters(
    task,
    model_size,
    learning_rate=None,
    num_train_epochs=None,
    max_seq_length=None,
    layerwise_lr_decay=None,
    train_batch_size=None,
):
    """The paper/reference settings for the task named `task` and `model_size`; arguments that are not None override
    them."""
    return (
        get_task(task)
        .default_hyperparameters(model_size)
        .overridden(
            learning_rate=learning_rate,
            num_train_epochs=num_train_epochs,
            max_seq_length=max_seq_length,
            layerwise_lr_decay=layerwise_lr_decay,
            train_batch_size=train_batch_size,
        )
    )
