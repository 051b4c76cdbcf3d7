"""What every model's `from_preset` shares: the checkpoint at `preset`, in any format, read by
`electra_tf.models.load_checkpoint`, and keras-hub's `load_weights` and config overrides applied to it; a keras-hub
handle (`kaggle://...`, `hf://...`, a built-in preset name) is left to keras-hub's own `from_preset`.

`load_checkpoint` builds the models of the very classes whose `from_preset` comes here (a discriminator for
`ElectraBackbone.from_preset`), so it stands above them: this module holds the reader, and `checkpoint_loading`
registers `load_checkpoint` as it (`reads_checkpoints`) when the package imports it, before any `from_preset` can run.
"""

import os

from electra_tf.checkpoints.naming import model_class_kind
from electra_tf.errors import ConfigError
from electra_tf.preflight import checkpoint_exists, is_remote

# load_checkpoint's arguments at their defaults: keras-hub's own from_preset takes none of them.
_UNSET = (None, False, "auto")
_reader = None


def reads_checkpoints(load_checkpoint):
    """Make `load_checkpoint` the reader of every model's `from_preset` (a decorator: returns it)."""
    global _reader
    _reader = load_checkpoint
    return load_checkpoint


def keras_hub_handle(cls, preset, load_arguments):
    """Whether `cls.from_preset` hands `preset` to keras-hub's own `from_preset` (its parent's) rather than to
    `load_checkpoint`: a handle with a scheme (`kaggle://`, `hf://`, `modelscope://`, `gs://`, ...) or a bare name
    that is no local path (a built-in keras-hub preset such as `electra_small_discriminator_uncased_en`). A path that
    exists, or one with a directory in it, is ours (a missing one gets `load_checkpoint`'s error).

    `load_arguments` ({name: value} of `load_checkpoint`'s arguments the caller was given) must be at their defaults
    for a handle: keras-hub's loader takes none of them (ConfigError)."""
    if not isinstance(preset, str):
        return False
    bare_name = "/" not in preset and os.sep not in preset and not checkpoint_exists(preset)
    if not (is_remote(preset) or bare_name):
        return False
    given = [name for name, value in load_arguments.items() if value not in _UNSET]
    if given:
        raise ConfigError(
            f"preset={preset} is a keras-hub handle, which {cls.__name__}.from_preset leaves to "
            f"keras-hub's own from_preset: it takes no {', '.join(given)} (load_checkpoint's, for a "
            "checkpoint on this machine); pass preset=<a local directory> to use them",
            arguments=("preset", *given),
        )
    return True


def loaded_checkpoint(cls, preset, kind=None, **load_arguments):
    """The `LoadedModel` of `kind` (default `cls`'s; a tuple of kinds, see `load_checkpoint`) in the checkpoint at
    `preset`, for `cls.from_preset` (a task model on a pre-trained backbone passes its `kind`): errors speak of
    `preset`, and a checkpoint without such a model is refused naming `cls.from_preset` and the classes that load what
    it holds."""
    return _reader(
        preset,
        kind or model_class_kind(cls),
        argument="preset",
        requested_by=f"{cls.__name__}.from_preset",
        **load_arguments,
    )


def checkpoint_model(cls, preset, kind=None, **load_arguments):
    """The model of `loaded_checkpoint(cls, preset, kind, **load_arguments)`."""
    return loaded_checkpoint(cls, preset, kind, **load_arguments).model


def rebuilt(model, cls, load_weights=True, **overrides):
    """`model` as a `cls`: `model` itself when it is one and nothing changes, otherwise a `cls` built from its config
    with `overrides` (constructor arguments, e.g. `dtype`) holding its weights, or freshly initialised when not
    `load_weights` (as keras-hub's `from_preset`)."""
    if type(model) is cls and load_weights and not overrides:
        return model
    new_model = cls.from_config({**model.get_config(), **overrides})
    if load_weights:
        # Layer by layer: variables a subclass adds to the model itself (a trainer's step counters) keep theirs.
        for target, layer in zip(new_model.layers, model.layers, strict=True):
            target.set_weights(layer.get_weights())
    return new_model
