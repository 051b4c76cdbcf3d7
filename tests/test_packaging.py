"""The project installs as a package: `pip install .` puts exactly electra_tf, data_prep and finetune on the path (the
checkout's launcher scripts stay out) and the console commands, which point into them, on PATH; each answers --help
from any directory with exit 0 and no CUDA notices."""

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
    assert commands == {
        "electra-pretrain": "electra_tf.commands.pretrain:console_main",
        "electra-convert": "electra_tf.commands.convert:console_main",
        "electra-score": "electra_tf.commands.score:console_main",
        "electra-finetune": "finetune.commands.finetune:console_main",
        "electra-export": "finetune.commands.export:console_main",
        "electra-analyze": "finetune.experiments.discriminator_analysis.__main__:console_main",
        "electra-rerank": "finetune.experiments.rerank.__main__:console_main",
        "electra-build-vocab": "data_prep.build_vocab:console_main",
        "electra-build-data": "data_prep.build_pretraining_dataset:console_main",
    }
    (dist_info,) = target.glob("electra_tf-*.dist-info")
    installed = {path.name for path in target.iterdir()} - {"bin", dist_info.name}
    assert installed == {"electra_tf", "data_prep", "finetune"}
    assert set((dist_info / "top_level.txt").read_text().split()) == installed
    # RECORD lists the console scripts as ../../bin/<name>, outside the import path.
    recorded = {line.split("/")[0] for line in (dist_info / "RECORD").read_text().splitlines()
                if not line.startswith("../")}
    assert recorded - {dist_info.name} == installed
    for package in installed:
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
