"""convert_checkpoint.py and export_model.py from other formats, run as the user runs them (subprocesses), and their
commands run in the test process where a process of their own is not what a test is about (`tests.console_commands`)."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.checkpoints import collect_weights
from electra_tf.models import backbone_inputs, load_checkpoint, save_checkpoint
from tests.command_output import unexpected_lines, unexpected_program_lines, users_environment
from tests.console_commands import run_command
from tests.electra_tf.checkpoints import fixtures
from tests.electra_tf.checkpoints.models import tiny_model
from tests.serving_session import run_like_tf_serving

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script, *args, as_a_user=False):
    """`script` with `args` in a subprocess; `as_a_user`: in a user's environment (without the tests' TensorFlow log
    level)."""
    env = dict(users_environment() if as_a_user else dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), PYTHONPATH=REPO)
    return subprocess.run(
        [sys.executable, os.path.join(REPO, script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )


@pytest.fixture(scope="module")
def tf1_pretrainer(tmp_path_factory):
    """A TF1 pre-training checkpoint (with vocab.txt beside it) written from a randomised tiny pretrainer."""
    directory = tmp_path_factory.mktemp("tf1")
    vocab = fixtures.write_vocab(directory / "vocab.txt")
    model = tiny_model("pretrainer", seed=7)
    save_checkpoint(model, str(directory / "model.ckpt"), "tf1", vocab_file=vocab)
    return str(directory / "model.ckpt"), collect_weights(model, "pretrainer")


def test_cli_converts_tf1_to_ours_to_hf_and_back(tf1_pretrainer, tmp_path, capfd):
    """The first conversion as the user runs it, the others in the test process (`tests.console_commands`)."""
    prefix, weights = tf1_pretrainer
    steps = [
        (prefix, tmp_path / "ours", "ours"),
        (tmp_path / "ours", tmp_path / "hf", "hf"),
        (tmp_path / "hf", tmp_path / "back" / "model.ckpt", "tf1"),
    ]
    for source, target, to_format in steps:
        arguments = (f"--from={source}", f"--to={target}", f"--to_format={to_format}", "--num_heads=2")
        if source == prefix:
            result = _run("convert_checkpoint.py", *arguments, as_a_user=True)
            status, stdout, stderr = result.returncode, result.stdout, result.stderr
            unexpected = unexpected_lines(stderr)
        else:
            status = run_command("electra-convert", *arguments)
            stdout, stderr = capfd.readouterr()
            unexpected = unexpected_program_lines(stderr)
        assert status == 0, stderr
        assert unexpected == [], stderr[-3000:]
        assert "converted the pretrainer" in stdout
    # A pre-training model in our format is a run directory: its config, a checkpoint and its pretrained/ preset.
    assert sorted(os.listdir(tmp_path / "ours")) == [
        "checkpoint",
        "ckpt-1.data-00000-of-00001",
        "ckpt-1.index",
        "electra_config.json",
        "pretrained",
    ]
    assert {"tokenizer.json", "vocab.txt"} <= set(os.listdir(tmp_path / "ours" / "pretrained"))
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".staging")]
    reader = tf.train.load_checkpoint(str(tmp_path / "back" / "model.ckpt"))
    assert sorted(reader.get_variable_to_shape_map()) == sorted(weights)
    for name, value in weights.items():
        assert np.array_equal(reader.get_tensor(name), value), name


def test_cli_reports_a_missing_path_in_one_line(tmp_path, capfd):
    status = run_command("electra-convert", f"--from={tmp_path / 'nowhere'}", f"--to={tmp_path / 'out'}")
    stderr = capfd.readouterr().err
    assert status == 2
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "nowhere" in errors[0] and "does not exist" in errors[0], stderr[-2000:]
    assert "Traceback" not in stderr
    assert not os.path.exists(tmp_path / "out")


@pytest.fixture(scope="module")
def hf_pair(tmp_path_factory):
    return fixtures.build_hf_pair(tmp_path_factory.mktemp("hf_pair"))


def _serving_inputs():
    features = fixtures.batch()
    return {name: tf.constant(value) for name, value in features.items()}, features


def test_export_discriminator_from_hf_directory(hf_pair, tmp_path):
    directory = os.path.join(hf_pair["root"], "discriminator")
    output_dir = tmp_path / "export" / "1"
    result = _run(
        "export_model.py",
        f"--init_checkpoint={directory}",
        f"--output_dir={output_dir}",
        "--max_seq_length=16",
        as_a_user=True,
    )
    assert result.returncode == 0, result.stderr
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]
    # A line as each long step starts, one with its time as it ends, then what was exported.
    steps = [f"loading {directory}", f"writing the SavedModel to {output_dir}"]
    expected = [
        pattern
        for step in steps
        for pattern in (re.escape(f"{step} ..."), re.escape(f"{step}: done in ") + r"\d+\.\ds")
    ]
    lines = result.stdout.splitlines()
    assert len(lines) == len(expected) + 1, result.stdout
    for line, pattern in zip(lines, expected):
        assert re.fullmatch(pattern, line), (line, pattern)
    assert lines[-1].startswith(f"exported the discriminator of {directory}"), result.stdout
    serving = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    inputs, features = _serving_inputs()
    logits = serving(**inputs)["logits"].numpy()
    expected = np.asarray(load_checkpoint(directory, "discriminator").model(backbone_inputs(features), training=False))
    np.testing.assert_allclose(logits, expected, atol=1e-5, rtol=0)


def test_export_generator_from_tf1_prefix(tf1_pretrainer, tmp_path, capfd):
    """The command in this process (`tests.console_commands`; the discriminator's export above runs as users run it),
    what it wrote served in a process of its own."""
    prefix, _ = tf1_pretrainer
    status = run_command(
        "electra-export",
        f"--init_checkpoint={prefix}",
        "--model=generator",
        "--num_heads=2",
        f"--output_dir={tmp_path / 'export' / '1'}",
        "--max_seq_length=16",
    )
    assert status == 0, capfd.readouterr().err[-3000:]
    loaded = tf.saved_model.load(str(tmp_path / "export" / "1"))
    inputs, features = _serving_inputs()
    logits = loaded.signatures["serving_default"](**inputs)["logits"].numpy()
    assert logits.shape == (2, 10, fixtures.VOCAB_SIZE)
    generator = load_checkpoint(prefix, "generator", num_heads=2).model
    positions = np.tile(np.arange(10, dtype=np.int32), (2, 1))
    expected = np.asarray(generator(dict(backbone_inputs(features), mask_positions=positions), training=False))
    np.testing.assert_allclose(logits, expected, atol=1e-5, rtol=0)
    text = loaded.signatures["serve_text"](tf.constant(["w1 w2 w3"]))
    assert text["logits"].shape == (1, 16, fixtures.VOCAB_SIZE)
    # The generator served: a fresh process with only tensorflow + tensorflow-text, loading as TF Serving does.
    served = run_like_tf_serving(str(tmp_path / "export" / "1"), "serve_text", {"texts": ["w1 w2 w3"]})
    text_ids = np.array(served["input_ids"], np.int32)
    text_features = {
        "token_ids": text_ids,
        "padding_mask": np.array(served["input_mask"], np.int32),
        "segment_ids": np.zeros_like(text_ids),
        "mask_positions": np.arange(16, dtype=np.int32)[None],
    }
    np.testing.assert_allclose(
        served["logits"], np.asarray(generator(text_features, training=False)), atol=1e-4, rtol=0
    )  # graph vs eager kernels differ by ~2e-5 on these logits


@pytest.fixture(scope="module")
def transformers_directories(tmp_path_factory):
    """{4: dir, 5: dir}: one cased tiny discriminator as Hugging Face directories with the tokenizer files of
    transformers 4 (vocab.txt, tokenizer_config.json, special_tokens_map.json, tokenizer.json) and of transformers 5
    (tokenizer.json and tokenizer_config.json only)."""
    from electra_tf.tokenizer import TokenizerSettings
    from tests.electra_tf.checkpoints.models import tiny_model

    root = tmp_path_factory.mktemp("transformers")
    vocab = fixtures.write_vocab(root / "vocab.txt")
    discriminator = tiny_model("discriminator", seed=11)
    directories = {}
    for major in (4, 5):
        directories[major] = str(root / f"transformers{major}")
        save_checkpoint(discriminator, directories[major], "hf")
        fixtures.write_transformers_tokenizer(
            directories[major], vocab, TokenizerSettings(do_lower_case=False), transformers_major=major
        )
    return directories, vocab


# "W1" is no token of the cased vocabulary ([UNK]) but "w1" is: lower-casing would change the pieces and the scores.
SCORED_TEXTS = ["w1 W1 w2 w3", "w7 w8 W9"]


def _scores(path):
    from electra_tf.scoring import load_scorer, score_texts

    return score_texts(*load_scorer(path), SCORED_TEXTS, max_seq_length=16)


def test_a_transformers_5_directory_converts_and_scores_as_the_one_with_vocab_txt(
    transformers_directories, tmp_path, capfd
):
    directories, vocab = transformers_directories
    assert "vocab.txt" not in os.listdir(directories[5])
    expected = _scores(directories[4])
    assert expected[0]["tokens"] == ["w1", "[UNK]", "w2", "w3"]
    assert _scores(directories[5]) == expected

    status = run_command("electra-convert", f"--from={directories[5]}", f"--to={tmp_path / 'ours'}")
    stderr = capfd.readouterr().err
    assert status == 0, stderr
    assert "note:" not in stderr
    with open(tmp_path / "ours" / "vocab.txt", encoding="utf-8") as converted, open(vocab, encoding="utf-8") as given:
        assert converted.read() == given.read()
    assert load_checkpoint(str(tmp_path / "ours")).tokenizer_settings.do_lower_case is False
    assert _scores(str(tmp_path / "ours")) == expected

    status = run_command("electra-score", f"--model_dir={directories[5]}", "--max_seq_length=16", *SCORED_TEXTS)
    scored = capfd.readouterr()
    assert status == 0, scored.err
    assert [json.loads(line) for line in scored.out.splitlines()] == expected


def test_converting_a_model_without_a_vocabulary_says_the_tokenizer_stayed_behind(
    transformers_directories, tmp_path, capfd
):
    import shutil

    directories, _ = transformers_directories
    bare = tmp_path / "bare"
    shutil.copytree(directories[5], bare)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        os.remove(bare / name)
    status = run_command("electra-convert", f"--from={bare}", f"--to={tmp_path / 'ours'}")
    stderr = capfd.readouterr().err
    assert status == 0, stderr
    assert (
        f"note: {tmp_path / 'ours'} has no tokenizer: {bare} holds no vocabulary (no vocab.txt, nor a "
        "tokenizer.json holding one); convert again with --vocab_file=<the vocab.txt it was trained with> to "
        "write one" in stderr.splitlines()
    )
    assert "vocab.txt" not in os.listdir(tmp_path / "ours")
