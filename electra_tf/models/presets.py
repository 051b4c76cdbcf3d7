"""What every model's `from_preset` shares: the checkpoint at `preset`, in any format, read by
`electra_tf.checkpoints.load_checkpoint`, and keras-hub's `load_weights` and config overrides applied to it."""


def loaded_checkpoint(cls, preset, kind=None, **load_arguments):
    """The `LoadedModel` of `kind` (default `cls`'s; a tuple of kinds, see `load_checkpoint`) in the checkpoint at
    `preset`, for `cls.from_preset` (a task model on a pre-trained backbone passes its `kind`): errors speak of
    `preset`, and a checkpoint without such a model is refused naming `cls.from_preset` and the classes that load what
    it holds."""
    from electra_tf.checkpoints import load_checkpoint
    from electra_tf.checkpoints.naming import model_class_kind

    return load_checkpoint(preset, kind or model_class_kind(cls), argument="preset",
                           requested_by=f"{cls.__name__}.from_preset", **load_arguments)


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
