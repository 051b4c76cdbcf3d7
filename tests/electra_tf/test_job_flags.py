import dataclasses
import sys
from typing import List, Optional

import pytest
from absl import flags

from electra_studies.compute_matched.settings import Settings
from electra_tf.errors import ConfigError
from electra_tf.job_flags import define_job_flags, flag_field, job_arguments
from electra_tf.training.pretraining_spec import PretrainingJob
from finetune.finetuning_spec import FinetuningJob
from tests.console_commands import command_module


@dataclasses.dataclass
class _Job:
    name: str = flag_field(help_text="Required.")
    path: str = flag_field(None, "A path.")
    steps: int = flag_field(10, "Steps.")
    rate: float = flag_field(0.5, "Rate.")
    verbose: bool = flag_field(False, "Talk.")
    lower_case: bool = flag_field(None, "Unset: the data's.")
    head: str = flag_field("joint", "Head.", choices=("joint", "simple"))
    extras: dict = dataclasses.field(default_factory=dict)


def _flags(argv=(), **options):
    flag_values = flags.FlagValues()
    define_job_flags(_Job, skip=options.pop("skip", ("extras",)), flag_values=flag_values, **options)
    flag_values(["program", *argv])
    return flag_values


def test_each_field_is_a_flag_of_its_annotation_kind_with_its_default_and_help():
    flag_values = _flags()
    kinds = {name: flag_values[name].flag_type() for name in flag_values}
    assert kinds == {
        "name": "string",
        "path": "string",
        "steps": "int",
        "rate": "float",
        "verbose": "bool",
        "lower_case": "bool",
        "head": "string enum",
    }
    assert {name: flag_values[name].value for name in flag_values} == {
        "name": None,  # required: the job's validation names it
        "path": None,
        "steps": 10,
        "rate": 0.5,
        "verbose": False,
        "lower_case": None,
        "head": "joint",
    }
    assert flag_values["steps"].help == "Steps."


def test_parsed_flags_build_the_job():
    flag_values = _flags(["--name=x", "--steps=3", "--rate=1e-3", "--verbose", "--head=simple", "--nolower_case"])
    job = _Job(**job_arguments(_Job, skip=("extras",), flag_values=flag_values))
    assert job == _Job(name="x", steps=3, rate=1e-3, verbose=True, lower_case=False, head="simple")


@pytest.mark.parametrize("argv, expected", [((), None), (("--lower_case",), True), (("--nolower_case",), False)])
def test_a_bool_field_defaulting_to_none_is_a_tri_state_flag(argv, expected):
    assert _flags(argv)["lower_case"].value is expected


def test_an_enum_refuses_a_value_outside_the_choices():
    with pytest.raises(
        flags.IllegalFlagValueError, match=r"^flag --head=other: value should be one of <joint\|simple>$"
    ):
        _flags(["--head=other"])


def test_overrides_change_only_what_they_name():
    flag_values = _flags(overrides={"steps": {"default": 7, "help": "Command steps."}, "head": {"choices": ["joint"]}})
    assert (flag_values["steps"].value, flag_values["steps"].help) == (7, "Command steps.")
    assert flag_values["head"].parser.enum_values == ["joint"]
    assert flag_values["rate"].value == 0.5
    assert "extras" not in flag_values


def test_the_flags_belong_to_the_module_that_defines_them():
    flag_values = _flags()
    here = {flag.name for flag in flag_values.get_key_flags_for_module(sys.modules[__name__])}
    assert here == {"name", "path", "steps", "rate", "verbose", "lower_case", "head"}


def test_a_field_of_no_flag_kind_must_be_skipped():
    with pytest.raises(TypeError, match=r"^_Job.extras: a <class 'dict'> field has no flag kind .*; skip it"):
        _flags(skip=())


def test_choices_need_a_str_field_and_skips_and_overrides_name_fields():
    @dataclasses.dataclass
    class Counted:
        count: int = flag_field(1, "Count.", choices=(1, 2))

    with pytest.raises(TypeError, match=r"^Counted.count: choices need a str field"):
        define_job_flags(Counted, flag_values=flags.FlagValues())
    with pytest.raises(TypeError, match=r"^_Job has no field stepz "):
        _flags(skip=("extras", "stepz"))
    with pytest.raises(TypeError, match=r"^overrides of steps: unknown keys \['kind'\]"):
        _flags(overrides={"steps": {"kind": int}})


def _field_default(field):
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None if field.default is dataclasses.MISSING else field.default


@pytest.mark.parametrize(
    "program, job_class, not_flags",
    [("electra-finetune", FinetuningJob, ()), ("electra-pretrain", PretrainingJob, ("model_overrides",))],
)
def test_every_job_field_is_a_flag_of_its_command_with_the_field_default(program, job_class, not_flags):
    with command_module(program) as module:
        defined = {flag.name: flag for flag in flags.FLAGS.get_key_flags_for_module(module)}
        for field in dataclasses.fields(job_class):
            if field.name in not_flags:
                continue
            flag = defined[field.name]
            default = tuple(int(step) for step in flag.default) if field.type is tuple else flag.default
            assert default == _field_default(field), field.name
            if "choices" in field.metadata:
                assert flag.parser.enum_values == list(field.metadata["choices"]), field.name


@dataclasses.dataclass
class _Listed:
    names: List[str] = flag_field(["a", "b"], "Names.")
    seeds: List[int] = flag_field([0, 1], "Seeds.")
    fractions: List[float] = flag_field([0.5, 1.0], "Fractions.")
    budget: Optional[float] = flag_field(None, "Budget.")


def _listed(argv=()):
    flag_values = flags.FlagValues()
    define_job_flags(_Listed, flag_values=flag_values)
    flag_values(["program", *argv])
    return _Listed(**job_arguments(_Listed, flag_values=flag_values))


def test_list_fields_are_comma_separated_flags_of_their_item_kind():
    assert _listed() == _Listed()
    assert _Listed().names is not _Listed().names  # a list default is each job's own copy
    job = _listed(["--names= x,, y ", "--seeds=3,4", "--fractions=0.25", "--budget=1e12"])
    assert job == _Listed(names=["x", "y"], seeds=[3, 4], fractions=[0.25], budget=1e12)
    with pytest.raises(ConfigError, match=r"^seeds=1,two must be a comma-separated list of ints$") as error:
        _listed(["--seeds=1,two"])
    assert error.value.arguments == ("seeds",)


def test_every_compute_matched_setting_is_a_flag_with_its_default():
    flag_values = flags.FlagValues()
    define_job_flags(Settings, flag_values=flag_values)
    flag_values(["program"])
    required = {"output_dir": None, "corpus": None, "glue_dir": None}
    assert Settings(**job_arguments(Settings, flag_values=flag_values)) == Settings(**required)
    assert flag_values["eval_fractions"].default == ["0.25", "0.5", "1.0"]
    assert flag_values["mixed_precision"].parser.enum_values == ["float32", "mixed_bfloat16"]
