"""The project installs as a package: `pip install .` puts electra_tf, data_prep, finetune and the entry points on the
path and the console commands on PATH; each answers --help from any directory with exit 0 and no CUDA notices."""

import os
import shutil
import subprocess
import sys
import tomllib

from tests.conftest import REPO_ROOT


def test_pip_install_gives_console_commands_that_answer_help_anywhere(tmp_path):
    # A copy of the sources: setuptools builds in the source tree (build/, *.egg-info), which stays untouched.
    source = tmp_path / "source"
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "runs", "demo_output", "__pycache__", "build", "*.egg-info", "tests"))
    target = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                              "--target", str(target), str(source)], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path)
    assert install.returncode == 0, install.stderr[-3000:]
    with open(REPO_ROOT / "pyproject.toml", "rb") as handle:
        commands = tomllib.load(handle)["project"]["scripts"]
    assert set(commands) == {"electra-pretrain", "electra-finetune", "electra-export", "electra-convert",
                             "electra-score", "electra-build-vocab", "electra-build-data"}
    for package in ("electra_tf", "data_prep", "finetune"):
        assert (target / package / "__init__.py").is_file()
    # The installed copy, not the checkout: run from an empty directory with only the install on the path.
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "TF_CPP_MIN_LOG_LEVEL")}
    env["PYTHONPATH"] = str(target)
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    running = {name: subprocess.Popen([str(target / "bin" / name), "--help"], cwd=workdir, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE) for name in commands}
    for name, process in running.items():
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, (name, stderr[-2000:])
        module = commands[name].split(":")[0]
        assert "\nflags:\n" in stdout and f"{module}:" in stdout, (name, stdout[:500])
        noisy = [line for line in stderr.splitlines() if "cuda" in line.lower() or "cuinit" in line.lower()]
        assert not noisy, (name, noisy)
