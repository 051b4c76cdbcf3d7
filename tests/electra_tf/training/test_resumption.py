import dataclasses
import json

import pytest

from electra_tf.errors import ConfigError
from electra_tf.training.resumption import (
    changed_settings,
    check_or_write_settings,
    dataclass_defaults,
    refuse_other_settings,
)


@dataclasses.dataclass
class _Settings:
    learning_rate: float = 1e-3
    steps: tuple = ()
    extra: dict = dataclasses.field(default_factory=lambda: {"a": 1})


def test_changes_are_compared_as_json_stores_them_and_missing_names_count_as_their_default():
    assert dataclass_defaults(_Settings) == {"learning_rate": 1e-3, "steps": (), "extra": {"a": 1}}
    current = dataclasses.asdict(_Settings(steps=(1, 2)))
    assert changed_settings({"learning_rate": 1e-3, "steps": [1, 2], "extra": {"a": 1}}, current) == []
    # A record written before `extra` existed: it stands for the default, so only a changed value is a change.
    older = {"learning_rate": 1e-3, "steps": [1, 2]}
    assert changed_settings(older, current, defaults=dataclass_defaults(_Settings)) == []
    assert changed_settings(older, {**current, "extra": {"a": 2}}, defaults=dataclass_defaults(_Settings)) == [
        ("extra", {"a": 1}, {"a": 2})
    ]
    assert changed_settings(older, current) == [("extra", None, {"a": 1})]
    assert changed_settings({**older, "learning_rate": 5e-4}, current, ignore=("learning_rate", "extra")) == []


def test_refusal_names_every_change_and_the_argument_to_change(tmp_path):
    with pytest.raises(ConfigError) as raised:
        refuse_other_settings(
            {"learning_rate": 1e-3, "seed": 0}, {"learning_rate": 5e-4, "seed": 1}, "runs/a", "a run", "model_dir"
        )
    assert str(raised.value) == (
        "runs/a holds a run made with other settings (learning_rate: 0.001 -> 0.0005, seed: "
        "0 -> 1); use another model_dir, or the settings of that run to resume it"
    )
    assert raised.value.arguments == ("model_dir",)


def test_settings_are_written_once_and_then_checked(tmp_path):
    path = tmp_path / "stage" / "settings.json"
    check_or_write_settings(str(path), {"corpus": ("a.txt",), "size": 3}, "data", "output_dir")
    assert json.loads(path.read_text(encoding="utf-8")) == {"corpus": ["a.txt"], "size": 3}
    check_or_write_settings(str(path), {"corpus": ["a.txt"], "size": 3}, "data", "output_dir")
    with pytest.raises(
        ConfigError,
        match=r"stage holds data made with other settings \(size: 3 -> 4\); use another "
        "output_dir",
    ):
        check_or_write_settings(str(path), {"corpus": ["a.txt"], "size": 4}, "data", "output_dir")
    assert json.loads(path.read_text(encoding="utf-8"))["size"] == 3, "the record of the stage is kept"
