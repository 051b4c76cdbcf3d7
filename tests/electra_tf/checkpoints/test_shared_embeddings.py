"""A discriminator and a generator whose copies of the shared embeddings differ are not one pre-training run's pair:
every command that reads a pair refuses it with one message, naming each differing weight and its largest difference,
and reads it with the discriminator's copy under --allow_embedding_mismatch. The commands run in this process."""

import json

import numpy as np
import pytest

from electra_tf.checkpoints.matching import check_shared_embeddings
from electra_tf.errors import CheckpointError
from electra_tf.models.format_registry import read_source
from tests import synthetic_data
from tests.console_commands import run_command
from tests.electra_tf.checkpoints import fixtures

REFUSAL = (
    "the shared embeddings differ between {copies}: electra/embeddings/word_embeddings (largest difference 1); "
    "ELECTRA shares them, so these are not one pre-training run's pair (pass --allow_embedding_mismatch=True to "
    "keep the discriminator's)"
)
WORD_EMBEDDINGS = "electra.embeddings.word_embeddings.weight"
# The pair's position table is fixtures.MAX_POSITIONS long: a longer sequence is the check that comes after reading it.
TOO_LONG = fixtures.MAX_POSITIONS + 1
AFTER_READING = (
    f"error: --max_seq_length={TOO_LONG} exceeds the model's max_position_embeddings="
    f"{fixtures.MAX_POSITIONS}; use --max_seq_length<={fixtures.MAX_POSITIONS}"
)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("pair")
    built = fixtures.build_hf_pair(root)
    fixtures.differ_generator_embeddings(root)
    return built


def test_the_refusal_names_every_differing_weight_with_its_largest_difference():
    table = np.zeros((4, 2), np.float32)
    discriminator = {
        "electra/embeddings/word_embeddings": table,
        "electra/embeddings/position_embeddings": table,
        "electra/embeddings/LayerNorm/gamma": np.ones(2, np.float32),
        "electra/encoder/layer_0/output/dense/kernel": table,
    }
    generator = {
        "electra/embeddings/word_embeddings": table - np.array([[0, 0.25]], np.float32),
        "electra/embeddings/position_embeddings": np.zeros((5, 2), np.float32),
        "electra/embeddings/LayerNorm/gamma": np.ones(2, np.float32),
        "electra/encoder/layer_0/output/dense/kernel": table + 1,
    }  # not an embedding: the generator's own
    with pytest.raises(CheckpointError) as refused:
        check_shared_embeddings(
            discriminator,
            generator,
            "/x/pair",
            "discriminator/ and generator/",
            arguments=("init_checkpoint",),
            without_flag={"allow_embedding_mismatch": "convert"},
        )
    assert str(refused.value) == (
        "/x/pair: the shared embeddings differ between discriminator/ and generator/: "
        "electra/embeddings/word_embeddings (largest difference 0.25), electra/embeddings/position_embeddings (shapes "
        "(4, 2) and (5, 2)); ELECTRA shares them, so these are not one pre-training run's pair (pass "
        "allow_embedding_mismatch=True to keep the discriminator's)"
    )
    assert refused.value.arguments == ("init_checkpoint", "allow_embedding_mismatch")
    assert refused.value.without_flag == {"allow_embedding_mismatch": "convert"}
    check_shared_embeddings(
        discriminator, generator, "/x/pair", "discriminator/ and generator/", allow_embedding_mismatch=True
    )
    check_shared_embeddings(discriminator, dict(discriminator), "/x/pair", "discriminator/ and generator/")


def _arguments(program, root, tmp_path):
    """`program`'s arguments to read the pair at `root` (and write under `tmp_path`)."""
    if program == "electra-convert":
        return [f"--from={root}", f"--to={tmp_path / 'converted'}"]
    if program == "electra-score":
        return [f"--model_dir={root}", "w1 w2 w3"]
    if program == "electra-rerank":
        nbest = tmp_path / "lists.jsonl"
        nbest.write_text(
            "".join(json.dumps({"hypotheses": ["w1 w2", "w1 w3"], "reference": "w1 w2"}) + "\n" for _ in range(2)),
            encoding="utf-8",
        )
        return [
            f"--nbest={nbest}",
            f"--init_checkpoint={root}",
            f"--output_dir={tmp_path / 'reranked'}",
            "--scorers=disc_sum",
            "--max_seq_length=16",
            "--bootstrap_resamples=10",
        ]
    if program == "electra-analyze":
        (tmp_path / "data" / "blimp").mkdir(parents=True)
        (tmp_path / "data" / "blimp" / "paradigm.jsonl").write_text(
            "".join(
                json.dumps(
                    {"UID": "paradigm", "pairID": index, "sentence_good": "w1 w2 w3", "sentence_bad": "w3 w2 w1"}
                )
                + "\n"
                for index in range(2)
            ),
            encoding="utf-8",
        )
        return [
            f"--init_checkpoint={root}",
            f"--data_dir={tmp_path / 'data'}",
            f"--output_dir={tmp_path / 'analysis'}",
            "--analyses=blimp",
            "--max_seq_length=16",
        ]
    if program == "electra-export":
        return [f"--init_checkpoint={root}", f"--output_dir={tmp_path / 'exported'}", f"--max_seq_length={TOO_LONG}"]
    if program == "electra-finetune":
        rows = "text,label\n" + "".join(f"w{i} w{i + 1},{i % 2}\n" for i in range(4))
        (tmp_path / "own.csv").write_text(rows, encoding="utf-8")
        return [
            "--task=classification",
            f"--init_checkpoint={root}",
            f"--output_dir={tmp_path / 'finetuned'}",
            f"--train_file={tmp_path / 'own.csv'}",
            f"--dev_file={tmp_path / 'own.csv'}",
            "--text_column=text",
            f"--max_seq_length={TOO_LONG}",
        ]
    assert program == "electra-pretrain"
    records = synthetic_data.write_tfrecords(tmp_path / "train.tfrecord", max_seq_length=TOO_LONG)
    return [
        f"--pretrain_tfrecords={records}",
        f"--model_dir={tmp_path / 'model'}",
        f"--init_checkpoint={root}",
        f"--max_seq_length={TOO_LONG}",
    ]


# Commands whose work after reading the pair is long: the next check, on the sequence length, stops them.
STOPPED_AFTER_READING = ("electra-export", "electra-finetune", "electra-pretrain")
# Every command that reads a checkpoint, and so a Hugging Face discriminator/ + generator/ pair.
COMMANDS = ("electra-convert", "electra-score", "electra-rerank", "electra-analyze", *STOPPED_AFTER_READING)


def _check_what_it_made_of_the_pair(program, pair, tmp_path, stdout, errors):
    if program in STOPPED_AFTER_READING:
        assert errors == [AFTER_READING]
        return
    assert errors == []
    if program == "electra-convert":  # the discriminator's copy is kept
        converted = read_source(str(tmp_path / "converted")).weights["electra/embeddings/word_embeddings"]
        np.testing.assert_array_equal(converted, pair["discriminator"][WORD_EMBEDDINGS])
    elif program == "electra-score":
        assert json.loads(stdout)["tokens"] == ["w1", "w2", "w3"]
    elif program == "electra-rerank":
        assert json.loads((tmp_path / "reranked" / "summary.json").read_text())["scorers"] == ["disc_sum"]
    else:
        results = json.loads((tmp_path / "analysis" / "results.json").read_text())
        assert results["has_generator"] and "blimp" in results


@pytest.mark.parametrize("program", COMMANDS)
def test_a_command_refuses_the_pair_and_reads_it_with_allow_embedding_mismatch(program, pair, tmp_path, capfd):
    arguments = _arguments(program, pair["root"], tmp_path)
    inputs = {path.name for path in tmp_path.iterdir()}
    assert run_command(program, *arguments) == 2
    prefix = "--scorers=disc_sum needs the checkpoint's discriminator: " if program == "electra-rerank" else ""
    refusal = REFUSAL.format(copies="discriminator/ and generator/")
    assert _errors(capfd.readouterr().err) == [f"error: {prefix}{pair['root']}: {refusal}"]
    assert {path.name for path in tmp_path.iterdir()} == inputs  # nothing written

    status = run_command(program, *arguments, "--allow_embedding_mismatch")
    captured = capfd.readouterr()
    assert status == (2 if program in STOPPED_AFTER_READING else 0), captured.err
    _check_what_it_made_of_the_pair(program, pair, tmp_path, captured.out, _errors(captured.err))


def test_pretraining_refuses_a_generator_beside_a_discriminator_of_another_run(pair, tmp_path, capfd):
    discriminator, generator = f"{pair['root']}/discriminator", f"{pair['root']}/generator"
    records = synthetic_data.write_tfrecords(tmp_path / "train.tfrecord", max_seq_length=TOO_LONG)
    arguments = [
        f"--pretrain_tfrecords={records}",
        f"--model_dir={tmp_path / 'model'}",
        f"--init_checkpoint={discriminator}",
        f"--init_generator_checkpoint={generator}",
        f"--max_seq_length={TOO_LONG}",
    ]
    assert run_command("electra-pretrain", *arguments) == 2
    refusal = REFUSAL.format(copies=f"--init_checkpoint={discriminator} and it")
    assert _errors(capfd.readouterr().err) == [f"error: --init_generator_checkpoint={generator}: {refusal}"]
    assert not (tmp_path / "model").exists()
    assert run_command("electra-pretrain", *arguments, "--allow_embedding_mismatch") == 2
    assert _errors(capfd.readouterr().err) == [AFTER_READING]


def _errors(stderr):
    return [line for line in stderr.splitlines() if line.startswith("error:")]
