"""The project installs as a package: the wheel of `pip install .` holds exactly electra_tf (with the shipped flag
files), data_prep, finetune and electra_studies (the checkout's launcher scripts stay out), and the console commands,
which point into them. Installed without dependencies into a fresh virtual environment (the project's environment on
PYTHONPATH for TensorFlow and the rest, but not the checkout), each command answers --help from a directory outside
the checkout with exit 0 and no CUDA notices, and `--flagfile=configs/<name>.flags` reads the installed copy there."""

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile

import pytest

from tests.conftest import REPO_ROOT

PACKAGES = ("electra_tf", "data_prep", "finetune", "electra_studies")
COMMANDS = {
    "electra-pretrain": "electra_tf.commands.pretrain:console_main",
    "electra-convert": "electra_tf.commands.convert:console_main",
    "electra-score": "electra_tf.commands.score:console_main",
    "electra-finetune": "finetune.commands.finetune:console_main",
    "electra-export": "finetune.commands.export:console_main",
    "electra-analyze": "electra_studies.commands.analyze:console_main",
    "electra-rerank": "electra_studies.commands.rerank:console_main",
    "electra-compute-matched": "electra_studies.commands.compute_matched:console_main",
    "electra-build-vocab": "data_prep.commands.build_vocab:console_main",
    "electra-build-data": "data_prep.commands.build_data:console_main",
}


def _run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, the fresh environment's bin directory, its site-packages, the environment to run it with, a working
    directory outside the checkout)."""
    root = tmp_path_factory.mktemp("install")
    # A copy of the sources: setuptools builds in the source tree (build/, *.egg-info), which stays untouched.
    source = root / "source"
    shutil.copytree(
        REPO_ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", "runs", "demo_output", "__pycache__", "build", "*.egg-info", "tests"
        ),
    )
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(root / "dist"),
            str(source),
        ],
        cwd=root,
    )
    (wheel,) = (root / "dist").glob("electra_tf-*.whl")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            str(wheel),
        ],
        cwd=root,
    )
    (site_packages,) = venv.glob("lib/python*/site-packages")
    # The project's environment provides the dependencies; its editable install of the checkout is a .pth file, which
    # Python reads in site directories only, not on PYTHONPATH.
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "TF_CPP_MIN_LOG_LEVEL")}
    env["PYTHONPATH"] = sysconfig.get_paths()["purelib"]
    workdir = root / "elsewhere"
    workdir.mkdir()
    return wheel, venv / "bin", site_packages, env, workdir


def test_the_wheel_holds_the_four_packages_the_flag_files_and_the_console_commands(installed):
    wheel, _, site_packages, _, _ = installed
    with open(REPO_ROOT / "pyproject.toml", "rb") as handle:
        assert tomllib.load(handle)["project"]["scripts"] == COMMANDS
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (dist_info,) = {name.split("/")[0] for name in names if ".dist-info/" in name}
        assert {name.split("/")[0] for name in names} - {dist_info} == set(PACKAGES)
        assert archive.read(f"{dist_info}/top_level.txt").decode().split() == sorted(PACKAGES)
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
        shipped = {name.removeprefix("electra_tf/") for name in names if name.startswith("electra_tf/configs/")}
        for config in (REPO_ROOT / "configs").iterdir():
            assert archive.read(f"electra_tf/configs/{config.name}") == config.read_bytes()
    assert shipped == {f"configs/{config.name}" for config in (REPO_ROOT / "configs").iterdir()}
    for name, target in COMMANDS.items():
        assert f"{name} = {target}\n" in entry_points
    assert {path.name for path in site_packages.iterdir()} == {*PACKAGES, dist_info}


def test_installed_commands_answer_help_outside_the_checkout(installed):
    _, bin_dir, site_packages, env, workdir = installed
    where = _run(
        [
            str(bin_dir / "python"),
            "-c",
            f"import {', '.join(PACKAGES)}; print({', '.join(f'{package}.__file__' for package in PACKAGES)})",
        ],
        cwd=workdir,
        env=env,
    )
    directories = [os.path.dirname(os.path.dirname(path)) for path in where.stdout.split()]
    assert directories == [str(site_packages)] * len(PACKAGES)
    # --helpfull lists the flags of every module the command imports, --help the command's own.
    running = {
        name: subprocess.Popen(
            [str(bin_dir / name), "--helpfull" if name == "electra-pretrain" else "--help"],
            cwd=workdir,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in COMMANDS
    }
    for name, process in running.items():
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, (name, stderr[-2000:])
        module = COMMANDS[name].split(":")[0]
        assert "\nflags:\n" in stdout and f"{module}:" in stdout, (name, stdout[:500])
        assert ("\nelectra_tf.cli:\n" in stdout) == (name == "electra-pretrain"), name
        noisy = [line for line in stderr.splitlines() if "cuda" in line.lower() or "cuinit" in line.lower()]
        assert not noisy, (name, noisy)


def test_installed_commands_read_the_shipped_flag_files_outside_the_checkout(installed):
    _, bin_dir, site_packages, env, workdir = installed
    checkpoint = workdir / "checkpoint"
    checkpoint.mkdir()
    # configs/glue_mrpc.flags sets --task=MRPC: the command goes on to look for MRPC's training file.
    read = subprocess.run(
        [
            str(bin_dir / "electra-finetune"),
            "--flagfile=configs/glue_mrpc.flags",
            f"--init_checkpoint={checkpoint}",
            "--output_dir=out",
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert read.returncode == 2 and "MRPC/train.tsv" in read.stderr, read.stderr[-2000:]
    assert "flagfile" not in read.stderr
    mistyped = subprocess.run(
        [str(bin_dir / "electra-pretrain"), "--flagfile=configs/smal.flags"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert mistyped.returncode == 2
    names = ",".join(path.stem for path in sorted((site_packages / "electra_tf" / "configs").iterdir()))
    assert mistyped.stderr.splitlines() == [
        f"error: flag file configs/smal.flags does not exist (from {workdir}) and is none of the shipped flag files "
        f"configs/{{{names}}}.flags: pass an existing file or one of those"
    ]
