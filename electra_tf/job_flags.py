"""Command-line flags defined from a job dataclass, so that each setting is written once: its name, default, help and
choices are the field's.

A job (`PretrainingJob`, `FinetuningJob`) declares each setting with `flag_field(default, help, choices)`; its entry
point calls `define_job_flags(Job)` and builds the job from the parsed flags (`job_arguments`). The flag's kind comes
from the field's annotation: str, int, float, bool (a bool field defaulting to None is a tri-state flag: unset, true
or false), and an enum of the field's choices. A field without a default becomes a flag with default None, which the
job's validation reports when it is not given. Imports no TensorFlow: `--help` answers without it.
"""

import dataclasses

from absl import flags

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
    return dataclasses.field(default=default, metadata=metadata)


def _flag_settings(field, overrides):
    default = None if field.default is dataclasses.MISSING else field.default
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
        if field.type not in _DEFINE_BY_TYPE:
            raise TypeError(
                f"{job_class.__name__}.{field.name}: a {field.type} field has no flag kind (str, int, float or bool); "
                "skip it and define its flag by hand"
            )
        if settings["choices"] is not None:
            if field.type is not str:
                raise TypeError(f"{job_class.__name__}.{field.name}: choices need a str field, not {field.type}")
            flags.DEFINE_enum(
                field.name, settings["default"], list(settings["choices"]), settings["help"], flag_values=flag_values
            )
        else:
            _DEFINE_BY_TYPE[field.type](field.name, settings["default"], settings["help"], flag_values=flag_values)


def job_arguments(job_class, skip=(), flag_values=flags.FLAGS):
    """{field name: parsed flag value} of every field of `job_class` but those named in `skip`."""
    return {
        field.name: flag_values[field.name].value for field in dataclasses.fields(job_class) if field.name not in skip
    }
