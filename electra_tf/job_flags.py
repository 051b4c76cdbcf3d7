"""Command-line flags defined from a job dataclass, so that each setting is written once: its name, default, help and
choices are the field's.

A job (`PretrainingJob`, `FinetuningJob`) declares each setting with `flag_field(default, help, choices)`; its entry
point calls `define_job_flags(Job)` and builds the job from the parsed flags (`job_arguments`). The flag's kind comes
from the field's annotation: str, int, float, bool (a bool field defaulting to None is a tri-state flag: unset, true
or false), an enum of the field's choices, and a comma-separated list for `List[str]`, `List[int]` and
`List[float]` (`Optional[X]` is X's kind). A field without a default becomes a flag with default None, which the
job's validation reports when it is not given. Imports no TensorFlow: `--help` answers without it.
"""

import dataclasses
import typing

from absl import flags

from electra_tf.errors import ConfigError

# Flags defined here belong to the command that calls `define_job_flags`: its `--help` lists them.
flags.disclaim_key_flags()

_DEFINE_BY_TYPE = {
    str: flags.DEFINE_string,
    int: flags.DEFINE_integer,
    float: flags.DEFINE_float,
    bool: flags.DEFINE_boolean,
}


def flag_field(default=dataclasses.MISSING, help_text="", choices=None):
    """A dataclass field whose flag has `help_text` and, given `choices`, takes only one of them; without `default`
    the field is required (its flag defaults to None)."""
    metadata = {"help": help_text}
    if choices is not None:
        metadata["choices"] = tuple(choices)
    if isinstance(default, list):  # a mutable default: each job gets its own copy
        return dataclasses.field(default_factory=lambda: list(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _field_default(field):
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None


def flag_kind(annotation):
    """(kind, item kind) of a field's annotation: (str|int|float|bool, None), (list, str|int|float) for a list of
    those, (None, None) for an annotation no flag can take. `Optional[X]` is X."""
    if typing.get_origin(annotation) is typing.Union:
        present = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
        return flag_kind(present[0]) if len(present) == 1 else (None, None)
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation) or (None,)
        return (list, item) if item in (str, int, float) else (None, None)
    return (annotation, None) if annotation in _DEFINE_BY_TYPE else (None, None)


def _flag_settings(field, overrides):
    default = _field_default(field)
    settings = {"default": default, "help": field.metadata.get("help", ""), "choices": field.metadata.get("choices")}
    unknown = set(overrides) - set(settings)
    if unknown:
        raise TypeError(f"overrides of {field.name}: unknown keys {sorted(unknown)}; give default, help or choices")
    return {**settings, **overrides}


def define_job_flags(job_class, skip=(), overrides=None, flag_values=flags.FLAGS):
    """Defines one flag in `flag_values` for every field of the dataclass `job_class` but those named in `skip`.

    `overrides` ({field name: {"default"|"help"|"choices": value}}) change what a command genuinely does differently
    from the field. Raises TypeError for a field whose annotation is none of str, int, float and bool, for choices on a
    field that is not a str, and for an override or skip naming no field."""
    overrides = dict(overrides or {})
    names = {field.name for field in dataclasses.fields(job_class)}
    strays = (set(skip) | set(overrides)) - names
    if strays:
        raise TypeError(
            f"{job_class.__name__} has no field {', '.join(sorted(strays))} (skip and overrides name fields)"
        )
    for field in dataclasses.fields(job_class):
        if field.name in skip:
            continue
        settings = _flag_settings(field, overrides.get(field.name, {}))
        kind, item_kind = flag_kind(field.type)
        if kind is None:
            raise TypeError(
                f"{job_class.__name__}.{field.name}: a {field.type} field has no flag kind (str, int, float, bool or a "
                "list of str, int or float); skip it and define its flag by hand"
            )
        if settings["choices"] is not None:
            if kind is not str:
                raise TypeError(f"{job_class.__name__}.{field.name}: choices need a str field, not {field.type}")
            flags.DEFINE_enum(
                field.name, settings["default"], list(settings["choices"]), settings["help"], flag_values=flag_values
            )
        elif kind is list:
            default = None if settings["default"] is None else [str(item) for item in settings["default"]]
            flags.DEFINE_list(field.name, default, settings["help"], flag_values=flag_values)
        else:
            _DEFINE_BY_TYPE[kind](field.name, settings["default"], settings["help"], flag_values=flag_values)


def job_arguments(job_class, skip=(), flag_values=flags.FLAGS):
    """{field name: parsed flag value} of every field of `job_class` but those named in `skip`; a list field's items
    converted to its item kind (str items stripped, empty ones dropped). Raises ConfigError naming the field for an
    item that is not a number of the field's kind."""
    arguments = {}
    for field in dataclasses.fields(job_class):
        if field.name in skip:
            continue
        value = flag_values[field.name].value
        kind, item_kind = flag_kind(field.type)
        if kind is list and value is not None:
            value = _list_items(field.name, value, item_kind)
        arguments[field.name] = value
    return arguments


def _list_items(name, values, item_kind):
    if item_kind is str:
        return [value.strip() for value in values if value.strip()]
    try:
        return [item_kind(value) for value in values]
    except ValueError:
        raise ConfigError(
            f"{name}={','.join(values)} must be a comma-separated list of {item_kind.__name__}s", arguments=(name,)
        ) from None
