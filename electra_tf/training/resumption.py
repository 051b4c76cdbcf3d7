"""What a resumable run keeps beside its checkpoints so that running the same command again continues it exactly:
the settings it was made with (a rerun with other settings is refused, naming them, instead of silently continuing
another run), and the dropout layers' random state that Keras does not checkpoint.

Every run that resumes (pre-training, a fine-tuning trial, a cached stage of an experiment) uses this one check.
"""

import dataclasses
import json
import os

from electra_tf.errors import ConfigError
from electra_tf.io_utils import atomic_write_json


def dataclass_defaults(cls):
    """{field: default} of a dataclass (its default factories called): the value a setting added since a record was
    written had before it existed."""
    defaults = {}
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            defaults[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            defaults[field.name] = field.default_factory()
    return defaults


def changed_settings(saved, current, ignore=(), defaults=None):
    """[(name, saved value, current value)] of the settings that differ, by name; JSON values compared as JSON stores
    them (a tuple equals its list). A name `saved` lacks counts as its value in `defaults` (a setting added since)."""
    saved, current = json.loads(json.dumps(saved)), json.loads(json.dumps(current))
    defaults = json.loads(json.dumps(defaults or {}))
    saved = {**{name: defaults[name] for name in current if name in defaults and name not in saved}, **saved}
    return [
        (name, saved.get(name), current.get(name))
        for name in sorted(set(saved) | set(current))
        if name not in ignore and saved.get(name) != current.get(name)
    ]


def refuse_other_settings(saved, current, where, what, argument, ignore=(), defaults=None):
    """ConfigError naming every changed setting when `current` differs from the `saved` settings of the run at
    `where` (ignoring the names in `ignore`, which do not change what the run computes); `argument` names the
    directory argument a new run would take."""
    changed = changed_settings(saved, current, ignore, defaults)
    if changed:
        details = ", ".join(f"{name}: {old!r} -> {new!r}" for name, old, new in changed)
        raise ConfigError(
            f"{where} holds {what} made with other settings ({details}); use another {argument}, or "
            "the settings of that run to resume it",
            arguments=(argument,),
        )


def check_or_write_settings(path, values, what, argument, defaults=None, ignore=()):
    """Write `values` to `path`, or refuse when `path` holds other values (`refuse_other_settings`, which ignores the
    names in `ignore`)."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            refuse_other_settings(
                json.load(handle), values, os.path.dirname(path), what, argument, ignore=ignore, defaults=defaults
            )
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_json(path, json.loads(json.dumps(values)))


def seed_generator_states(model):
    """The state variables of the model's Keras SeedGenerators (its Dropout layers), by position in `model.variables`.

    Keras does not checkpoint them, so without this a resumed run would draw other dropout masks than an uninterrupted
    one. Keys are positions, not layer names: auto-generated names differ between models built in the same process.
    """
    states = {}
    for variable in model.variables:
        if variable.path.endswith("seed_generator_state"):
            states.setdefault(id(variable), variable)
    return {f"seed_generator_{index:03d}": state for index, state in enumerate(states.values())}
