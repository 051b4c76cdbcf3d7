"""`--flagfile=configs/<name>.flags` reads the checkout's (or the current directory's) file where there is one and the
shipped copy from anywhere else; absl then reads the flags it holds. (tests/test_packaging.py runs the installed
commands with it.)"""

import pytest
from absl import flags

from electra_tf.errors import ConfigError
from electra_tf.flag_files import resolve_flagfile, resolve_flagfile_arguments, shipped_flag_files
from tests.conftest import REPO_ROOT


def test_the_shipped_flag_files_are_the_checkouts_configs():
    shipped = shipped_flag_files()
    assert list(shipped) == [f"configs/{path.name}" for path in sorted((REPO_ROOT / "configs").iterdir())]
    for name, path in shipped.items():
        assert open(path, "rb").read() == (REPO_ROOT / name).read_bytes()


def test_a_shipped_name_is_read_from_any_directory_and_a_local_file_comes_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = shipped_flag_files()["configs/small.flags"]
    assert resolve_flagfile("configs/small.flags") == resolve_flagfile("./configs//small.flags") == shipped
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "small.flags").write_text("--model_size=tiny\n")
    (tmp_path / "mine.flags").write_text("--model_size=base\n")
    assert resolve_flagfile("configs/small.flags") == "configs/small.flags"
    assert resolve_flagfile_arguments(
        [
            "--flagfile=mine.flags",
            "--flagfile",
            "configs/tiny.flags",
            "-flagfile=configs/base.flags",
            "--model_dir=configs/base.flags",
            "--",
            "--flagfile=configs/nothing.flags",
        ]
    ) == [
        "--flagfile=mine.flags",
        "--flagfile",
        shipped_flag_files()["configs/tiny.flags"],
        f"-flagfile={shipped_flag_files()['configs/base.flags']}",
        "--model_dir=configs/base.flags",
        "--",
        "--flagfile=configs/nothing.flags",
    ]


def test_absl_reads_the_flags_of_the_shipped_file_in_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["program", *resolve_flagfile_arguments(["--flagfile=configs/small.flags", "--num_train_steps=5"])]
    expanded = flags.FlagValues().read_flags_from_files(args, force_gnu=True)
    lines = (REPO_ROOT / "configs" / "small.flags").read_text().splitlines()
    assert expanded == ["program", *[line for line in lines if line.startswith("--")], "--num_train_steps=5"]
    assert "--model_size=small" in expanded


def test_a_flag_file_that_is_neither_here_nor_shipped_is_refused_naming_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        resolve_flagfile_arguments(["--flagfile=configs/smal.flags"])
    assert str(raised.value) == (
        f"flag file configs/smal.flags does not exist (from {tmp_path}) and is none of the shipped flag files "
        "configs/{base,compute_matched_cpu,cpu,glue_cola,glue_mnli,glue_mrpc,glue_qnli,glue_qqp,glue_rte,glue_sst2,glue_stsb,glue_wnli,"
        "large,small++,small,squad,squadv1,tiny}.flags: pass an existing file or one of those"
    )
