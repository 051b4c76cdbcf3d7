import json
import subprocess
import sys

import numpy as np

from electra_tf.config import ElectraConfig
from electra_tf.models import backbone_inputs, build_discriminator, build_generator, save_checkpoint
from electra_tf.scoring import load_scorer, pseudo_log_likelihoods, score_texts
from electra_tf.tokenizer import ElectraTokenizer
from tests import synthetic_data
from tests.command_output import program_lines, unexpected_lines, users_environment
from tests.conftest import REPO_ROOT
from tests.console_commands import run_command


def _model(tokenizer):
    return build_discriminator(
        ElectraConfig.from_preset(
            "tiny", vocab_size=tokenizer.vocab_size, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4
        )
    )


def test_scores_are_the_discriminator_probabilities(pretraining_data):
    tokenizer = ElectraTokenizer(pretraining_data[1])
    model = _model(tokenizer)
    results = score_texts(model, tokenizer, ["w1 w2 w3", "w4 " * 20], max_seq_length=8)
    logits = model(
        backbone_inputs(
            {
                "input_ids": np.array([[2, 6, 7, 8, 3, 0, 0, 0]], np.int32),
                "input_mask": np.array([[1, 1, 1, 1, 1, 0, 0, 0]], np.int32),
                "segment_ids": np.zeros((1, 8), np.int32),
            }
        )
    ).numpy()[0, 1:4]
    first = results[0]
    assert first["tokens"] == ["w1", "w2", "w3"] and not first["truncated"]
    np.testing.assert_allclose(first["replaced_probability"], 1 / (1 + np.exp(-logits)), atol=1e-5)
    np.testing.assert_allclose(first["score"], np.mean(np.log(1 - 1 / (1 + np.exp(-logits)))), atol=1e-5)
    np.testing.assert_allclose(first["score_sum"], np.sum(np.log(1 - 1 / (1 + np.exp(-logits)))), atol=1e-5)
    assert results[1]["truncated"] and len(results[1]["tokens"]) == 6


def test_pseudo_log_likelihood_masks_each_piece_in_turn(pretraining_data):
    from scipy.special import log_softmax

    tokenizer = ElectraTokenizer(pretraining_data[1])
    config = ElectraConfig.from_preset(
        "tiny", vocab_size=tokenizer.vocab_size, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4
    )
    generator = build_generator(config)
    vocabulary = open(pretraining_data[1], encoding="utf-8").read().split()  # whole-word pieces
    texts = ["w1 w2 w3", "", "w4 " * 20, "w5 w1"]
    length = 10
    expected = []
    for text in texts:
        pieces = [vocabulary.index(word) for word in text.split()][: length - 2]
        total = 0.0
        for position in range(1, len(pieces) + 1):
            ids = [tokenizer.cls_id] + pieces + [tokenizer.sep_id]
            masked = list(ids)
            masked[position] = tokenizer.mask_id
            inputs = {
                "token_ids": np.array([masked + [0] * (length - len(ids))], np.int32),
                "segment_ids": np.zeros((1, length), np.int32),
                "padding_mask": np.array([[1] * len(ids) + [0] * (length - len(ids))], np.int32),
                "mask_positions": np.array([[position]], np.int32),
            }
            logits = generator(inputs).numpy()[0, 0].astype(np.float64)
            total += log_softmax(logits)[ids[position]]
        expected.append(total)
    for batch_size in (3, 512):  # copies of one text split across batches, and all in one
        np.testing.assert_allclose(
            pseudo_log_likelihoods(generator, tokenizer, texts, length, batch_size), expected, rtol=1e-5
        )
    assert expected[1] == 0.0 and expected[2] < expected[0] < 0


# The command's runs below are in this process (`tests.console_commands`): what it prints is checked, and
# test_cli_flags_the_off_topic_word_in_json_lines runs it as users do.
def test_cli_prints_json_lines_and_one_line_errors(pretraining_data, tmp_path, capfd):
    tokenizer = ElectraTokenizer(pretraining_data[1])
    save_checkpoint(_model(tokenizer), str(tmp_path / "pretrained"), vocab_file=pretraining_data[1])
    status = run_command("electra-score", f"--model_dir={tmp_path / 'pretrained'}", "w1 w2", "w3")
    result = capfd.readouterr()
    assert status == 0, result.err[-2000:]
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line["text"] for line in lines] == ["w1 w2", "w3"]
    status = run_command("electra-score", f"--model_dir={tmp_path}", "w1")
    missing = capfd.readouterr().err
    assert status == 2 and "Traceback" not in missing
    assert f"--model_dir={tmp_path} is not a checkpoint in a known format" in missing


def test_cli_without_a_vocabulary_names_its_own_vocab_file_flag(pretraining_data, tmp_path, capfd):
    tokenizer = ElectraTokenizer(pretraining_data[1])
    model = _model(tokenizer)
    bare = tmp_path / "hf"
    save_checkpoint(model, str(bare), "hf")  # weights and config.json only
    status = run_command("electra-score", f"--model_dir={bare}", "w1 w2")
    missing = capfd.readouterr().err
    assert status == 2, missing[-2000:]
    assert program_lines(missing) == [
        f"loading {bare} ...",
        f"error: --model_dir={bare} holds no vocabulary (no vocab.txt, nor a tokenizer.json holding one): pass "
        "--vocab_file=<the vocab.txt it was trained with>",
    ]
    status = run_command("electra-score", f"--model_dir={bare}", "w1 w2", f"--vocab_file={pretraining_data[1]}")
    given = capfd.readouterr()
    assert status == 0, given.err[-2000:]
    assert [json.loads(line) for line in given.out.splitlines()] == score_texts(model, tokenizer, ["w1 w2"])


def _topic_sentence(topic, rng, length=12):
    """`length` words of one topic of tests/synthetic_data.py (topic t: w{15t} .. w{15t+14})."""
    size = synthetic_data.NUM_WORDS // synthetic_data.NUM_TOPICS
    return [f"w{topic * size + i}" for i in rng.integers(0, size, size=length)]


def _crafted_pairs():
    """(all on-topic sentence, the same with one word swapped for another topic's, the swapped position) x 6."""
    rng = np.random.default_rng(7)
    pairs = []
    for topic in range(0, 12, 2):
        words = _topic_sentence(topic, rng)
        position = int(rng.integers(1, len(words) - 1))
        corrupted = list(words)
        corrupted[position] = _topic_sentence((topic + 5) % synthetic_data.NUM_TOPICS, rng, length=1)[0]
        pairs.append((" ".join(words), " ".join(corrupted), position))
    return pairs


def test_trained_discriminator_flags_the_off_topic_word(pretrained_detector):
    """After a tiny pre-training run on the topic corpus, the scorer flags the one off-topic word
    of a crafted sentence (highest replaced probability, above 0.5) and ranks the clean sentence above it."""
    discriminator, tokenizer = load_scorer(pretrained_detector)
    pairs = _crafted_pairs()
    results = score_texts(
        discriminator,
        tokenizer,
        [text for clean, corrupted, _ in pairs for text in (clean, corrupted)],
        max_seq_length=32,
    )
    for (_, corrupted, position), clean_result, corrupted_result in zip(pairs, results[::2], results[1::2]):
        probabilities = corrupted_result["replaced_probability"]
        print(
            f"{corrupted}: flagged {corrupted_result['tokens'][int(np.argmax(probabilities))]} "
            f"p={max(probabilities):.3f}; score clean {clean_result['score']:.3f} > {corrupted_result['score']:.3f}"
        )
        assert int(np.argmax(probabilities)) == position and probabilities[position] > 0.5, corrupted_result
        assert clean_result["score"] > corrupted_result["score"], (clean_result, corrupted_result)
        assert max(clean_result["replaced_probability"]) < probabilities[position]


def test_cli_flags_the_off_topic_word_in_json_lines(pretrained_detector):
    """The same verdict through `python -m electra_tf.commands.score`: one valid JSON object per line, the same
    verdict."""
    clean, corrupted, position = _crafted_pairs()[0]
    result = subprocess.run(
        [sys.executable, "-m", "electra_tf.commands.score", f"--model_dir={pretrained_detector}", clean, corrupted],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=users_environment(),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]  # a normal run, in a user's environment
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["text"] for line in lines] == [clean, corrupted]
    assert lines[1]["tokens"] == corrupted.split() and not lines[1]["truncated"]
    assert int(np.argmax(lines[1]["replaced_probability"])) == position and lines[0]["score"] > lines[1]["score"]


def test_electric_pseudo_log_likelihood_sums_the_negative_energies_of_one_pass(pretraining_data):
    import pytest

    from electra_tf.errors import ConfigError
    from electra_tf.scoring import electric_pseudo_log_likelihoods

    tokenizer = ElectraTokenizer(pretraining_data[1])
    config = ElectraConfig.from_preset(
        "tiny", vocab_size=tokenizer.vocab_size, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4, objective="electric"
    )
    discriminator = build_discriminator(config)
    vocabulary = open(pretraining_data[1], encoding="utf-8").read().split()  # whole-word pieces
    texts = ["w1 w2 w3", "", "w4 " * 20, "w5 w1", "w2"]
    length = 10
    expected = []
    for text in texts:  # one text at a time, unpadded: the energies of its pieces, [CLS] and [SEP] left out
        ids = [tokenizer.cls_id] + [vocabulary.index(word) for word in text.split()][: length - 2] + [tokenizer.sep_id]
        energies = discriminator(
            backbone_inputs(
                {
                    "input_ids": np.array([ids], np.int32),
                    "input_mask": np.ones((1, len(ids)), np.int32),
                    "segment_ids": np.zeros((1, len(ids)), np.int32),
                }
            )
        ).numpy()[0]
        expected.append(-energies[1:-1].astype(np.float64).sum())
    scores = electric_pseudo_log_likelihoods(discriminator, tokenizer, texts, max_seq_length=length, batch_size=2)
    assert scores.dtype == np.float64 and scores[1] == 0.0
    np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-5)

    with pytest.raises(ConfigError) as error:
        electric_pseudo_log_likelihoods(_model(tokenizer), tokenizer, texts)
    assert str(error.value) == (
        "the discriminator was pre-trained with objective='electra': its outputs are no "
        "energies; pass the discriminator of an objective=electric run"
    )
