"""Entry points speak flags: an error's Python argument names become `--name` when they are the program's flags."""

import subprocess
import sys
import textwrap

from absl import flags

from electra_tf.cli import message_for_command_line
from electra_tf.errors import CheckpointError, ConfigError, ElectraError
from tests.conftest import REPO_ROOT


def _flag_values(*names):
    flag_values = flags.FlagValues()
    for name in names:
        flags.DEFINE_string(name, None, "test flag", flag_values=flag_values)
    return flag_values


def test_listed_arguments_that_are_flags_become_flags():
    error = CheckpointError("init_checkpoint=/x does not exist; pass init_checkpoint=<model_dir>/pretrained",
                            arguments=("init_checkpoint",))
    assert message_for_command_line(error, _flag_values("init_checkpoint")) == \
        "--init_checkpoint=/x does not exist; pass --init_checkpoint=<model_dir>/pretrained"


def test_only_whole_words_outside_paths_and_identifiers_are_rewritten():
    error = ConfigError("data_dir is required: not /tmp/data_dir/x, data_dir.txt, my_data_dir, data_dir_2, or "
                        "--data_dir; set data_dir.", arguments=("data_dir",))
    assert message_for_command_line(error, _flag_values("data_dir")) == \
        ("--data_dir is required: not /tmp/data_dir/x, data_dir.txt, my_data_dir, data_dir_2, or --data_dir; "
         "set --data_dir.")


def test_values_that_look_like_arguments_stay_values():
    error = ConfigError("strategy=tpu needs tpu=<TPU name>; 'tpu' and \"tpu\" are values",
                        arguments=("strategy", "tpu"))
    assert message_for_command_line(error, _flag_values("strategy", "tpu")) == \
        "--strategy=tpu needs --tpu=<TPU name>; 'tpu' and \"tpu\" are values"


def test_arguments_that_are_not_flags_and_unlisted_names_stay_plain():
    error = ConfigError("num_layers=0 with model_size=tiny", arguments=("num_layers",))
    assert message_for_command_line(error, _flag_values("num_layers_x", "model_size")) == \
        "num_layers=0 with model_size=tiny"
    assert ElectraError("plain").arguments == ()
    assert message_for_command_line(ValueError("model_size"), _flag_values("model_size")) == "model_size"


def test_entry_point_prints_the_translated_message_on_one_line(tmp_path):
    script = tmp_path / "entry.py"
    script.write_text(textwrap.dedent("""
        from electra_tf import cli
        from absl import flags
        from electra_tf.errors import ConfigError

        flags.DEFINE_string("output_dir", None, "where")

        def main(argv):
            raise ConfigError("output_dir is required (num_layers is not a flag)",
                              arguments=("output_dir", "num_layers"))

        cli.run(main)
    """))
    result = subprocess.run([sys.executable, str(script)], cwd=REPO_ROOT, capture_output=True, text=True,
                            env={"PYTHONPATH": str(REPO_ROOT), "PATH": ""}, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == \
        "error: --output_dir is required (num_layers is not a flag)"
