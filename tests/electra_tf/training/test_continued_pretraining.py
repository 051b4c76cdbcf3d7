"""Continued pre-training (`init_checkpoint`) and held-out evaluation (`eval_tfrecords`) of the pre-training job."""

import json
import os

import numpy as np
import pytest

from data_prep.pipeline import build_pretraining_data
from electra_tf.checkpoints import collect_weights
from electra_tf.errors import CheckpointError, ConfigError, DataError
from electra_tf.models import load_checkpoint, save_checkpoint
from electra_tf.training.pretraining_job import run
from electra_tf.training.pretraining_spec import PretrainingJob
from tests.electra_tf.checkpoints import fixtures

MAX_SEQ_LENGTH = 16  # the fixtures' position table


def _corpus(path, seed, num_documents=40):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(fixtures.VOCAB_SIZE - len(fixtures.SPECIAL_TOKENS))]
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(num_documents):
            for _ in range(3):
                handle.write(" ".join(rng.choice(words, size=6)) + "\n")
            handle.write("\n")
    return str(path)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Training and held-out TFRecords built (with manifests) with the fixtures' 50-token vocabulary."""
    root = tmp_path_factory.mktemp("continued_data")
    vocab = fixtures.write_vocab(root / "vocab.txt")
    for name, seed in (("train", 0), ("eval", 1)):
        build_pretraining_data(
            _corpus(root / f"{name}.txt", seed),
            vocab,
            str(root / name),
            max_seq_length=MAX_SEQ_LENGTH,
            num_shards=1,
            show_progress=False,
        )
    return {"vocab": vocab, "train": str(root / "train" / "*.tfrecord*"), "eval": str(root / "eval" / "*.tfrecord*")}


@pytest.fixture(scope="module")
def tf1_checkpoint(hf_pair, tmp_path_factory):
    """The HF pair's weights as a reference TF1 checkpoint (tf.compat.v1 variables, Adam slots, global_step)."""
    directory = tmp_path_factory.mktemp("tf1")
    arrays = {
        **fixtures.tf1_arrays(hf_pair["discriminator"]),
        **fixtures.tf1_arrays(hf_pair["generator"], generator=True),
    }
    fixtures.write_vocab(directory / "vocab.txt")
    return fixtures.write_tf1_checkpoint(str(directory / "model.ckpt"), arrays), arrays


def _job(data, model_dir, **overrides):
    settings = dict(
        pretrain_tfrecords=data["train"],
        model_dir=str(model_dir),
        model_size="tiny",
        max_seq_length=MAX_SEQ_LENGTH,
        train_batch_size=4,
        learning_rate=0.0,
        num_train_steps=1,
        num_warmup_steps=0,
        save_checkpoints_steps=0,
        log_every_steps=1,
        progress_bar=False,
    )
    settings.update(overrides)
    return PretrainingJob(**settings)


def _evaluations(model_dir):
    with open(os.path.join(model_dir, "eval_metrics.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _assert_weights_equal(actual, expected):
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert np.array_equal(actual[name], value), name


def _discriminator_part(arrays):
    return {
        name: value
        for name, value in arrays.items()
        if not name.startswith(("generator", "discriminator_pred")) or name.startswith("discriminator_predictions")
    }


def test_tf1_checkpoint_starts_both_networks_and_pretrained_equals_its_discriminator(
    data, tf1_checkpoint, tmp_path, capsys
):
    prefix, arrays = tf1_checkpoint
    run(_job(data, tmp_path / "run", init_checkpoint=prefix))
    assert f"initialised from {prefix} (tf1" in capsys.readouterr().out
    pretrained = load_checkpoint(str(tmp_path / "run" / "pretrained"), "discriminator")
    _assert_weights_equal(collect_weights(pretrained.model, "discriminator"), _discriminator_part(arrays))
    # The run's own checkpoint holds both networks as the source had them (one step at learning rate 0).
    pretrainer = load_checkpoint(str(tmp_path / "run"), "pretrainer")
    _assert_weights_equal(collect_weights(pretrainer.model, "pretrainer"), arrays)
    # The step and the optimizer start fresh: the source's global_step 1000 is not the run's.
    assert [json.loads(line)["step"] for line in open(tmp_path / "run" / "metrics.jsonl")] == [1]


# A benchmark (`pytest -m benchmark`): what it converts is the TF1 checkpoint the test above starts from, and what it
# starts from is a run directory of ours, as test_continued_run_first_evaluation_equals_the_source_evaluated_directly
# does.
@pytest.mark.benchmark
def test_a_pretrainer_written_by_convert_checkpoint_is_read_back(data, tf1_checkpoint, tmp_path):
    """convert_checkpoint.py --model=pretrainer --to_format=ours writes a run directory: a run starts from it."""
    prefix, arrays = tf1_checkpoint
    save_checkpoint(
        load_checkpoint(prefix, "pretrainer", num_heads=2).model,
        str(tmp_path / "converted"),
        "ours",
        vocab_file=data["vocab"],
    )
    run(_job(data, tmp_path / "run", init_checkpoint=str(tmp_path / "converted")))
    _assert_weights_equal(
        collect_weights(load_checkpoint(str(tmp_path / "run"), "pretrainer").model, "pretrainer"), arrays
    )
    assert load_checkpoint(str(tmp_path / "run"), "pretrainer").model.electra_config.num_heads == 2


def test_a_hugging_face_pair_whose_embedding_copies_differ_is_refused_unless_allowed(data, hf_pair, tmp_path):
    """A Hugging Face discriminator with its generator starts both networks; their shared embeddings must be one table
    (the discriminator's is kept when `allow_embedding_mismatch`)."""
    import shutil

    shutil.copytree(hf_pair["root"], tmp_path / "pair")
    root = fixtures.differ_generator_embeddings(tmp_path / "pair")
    sources = dict(
        init_checkpoint=os.path.join(root, "discriminator"), init_generator_checkpoint=os.path.join(root, "generator")
    )
    with pytest.raises(
        CheckpointError,
        match=r"init_generator_checkpoint=.*generator: the shared embeddings differ "
        r"between init_checkpoint=.*discriminator and it: electra/embeddings/"
        r"word_embeddings .*pass allow_embedding_mismatch=True",
    ):
        run(_job(data, tmp_path / "refused", **sources))
    # The same rule for the pair as one directory.
    with pytest.raises(CheckpointError, match="differ between discriminator/ and generator/"):
        run(_job(data, tmp_path / "refused", init_checkpoint=root))
    assert not (tmp_path / "refused").exists()
    run(_job(data, tmp_path / "run", allow_embedding_mismatch=True, **sources))
    # The discriminator's copy of the embeddings is kept (hf_pair's generator holds the same one).
    expected = {
        **fixtures.tf1_arrays(hf_pair["discriminator"]),
        **fixtures.tf1_arrays(hf_pair["generator"], generator=True),
    }
    pretrainer = load_checkpoint(str(tmp_path / "run"), "pretrainer")
    _assert_weights_equal(collect_weights(pretrainer.model, "pretrainer"), expected)
    # The heads recorded by Hugging Face's config are kept (no TF1-style guess from the width).
    assert pretrainer.model.electra_config.num_heads == fixtures.DISCRIMINATOR_SIZES["num_attention_heads"]


def test_a_lone_discriminator_gets_a_new_generator_sharing_its_embeddings(data, hf_pair, tmp_path, capsys):
    run(_job(data, tmp_path / "run", init_checkpoint=os.path.join(hf_pair["root"], "discriminator")))
    assert "holds no generator: a new generator (hidden 8, 2 layers" in capsys.readouterr().out
    pretrainer = load_checkpoint(str(tmp_path / "run"), "pretrainer")
    weights = collect_weights(pretrainer.model, "pretrainer")
    expected = fixtures.tf1_arrays(hf_pair["discriminator"])
    _assert_weights_equal({name: weights[name] for name in expected}, expected)
    assert not np.array_equal(
        weights["generator/encoder/layer_0/intermediate/dense/kernel"],
        fixtures.tf1_arrays(hf_pair["generator"], generator=True)[
            "generator/encoder/layer_0/intermediate/dense/kernel"
        ],
    )


@pytest.fixture(scope="module")
def source_run(data, tmp_path_factory):
    """A run of ours (tiny, a few steps) evaluated along the way."""
    model_dir = tmp_path_factory.mktemp("source_run")
    run(
        _job(
            data,
            model_dir,
            vocab_file=data["vocab"],
            learning_rate=1e-3,
            num_train_steps=4,
            num_warmup_steps=1,
            eval_tfrecords=data["eval"],
            eval_every_steps=2,
            num_eval_steps=3,
        )
    )
    return str(model_dir)


def test_evaluations_land_every_eval_every_steps_with_the_reference_metrics(source_run):
    evaluations = _evaluations(source_run)
    assert [entry["step"] for entry in evaluations] == [2, 4]
    assert {
        "masked_lm_loss",
        "masked_lm_accuracy",
        "sampled_masked_lm_accuracy",
        "disc_loss",
        "disc_accuracy",
        "disc_precision",
        "disc_recall",
        "disc_auc",
    } <= set(evaluations[0])
    assert evaluations[0]["eval_batches"] == 3
    assert evaluations[0]["disc_loss"] != evaluations[1]["disc_loss"], "the model trained in between"
    assert os.listdir(os.path.join(source_run, "eval")), "TensorBoard eval/ scalars"


def test_two_evaluations_of_one_checkpoint_are_identical(data, source_run, tmp_path):
    model_dir = tmp_path / "copy"
    import shutil

    shutil.copytree(source_run, model_dir)
    for _ in range(2):
        run(_job(data, model_dir, mode="eval", eval_tfrecords=data["eval"], num_eval_steps=3))
    first, second = _evaluations(model_dir)[-2:]
    assert first == second and first["step"] == 4
    # The same numbers as the evaluation the run made at that step during training.
    assert first == _evaluations(source_run)[-1]


def test_continued_run_first_evaluation_equals_the_source_evaluated_directly(data, source_run, tmp_path):
    run(
        _job(
            data,
            tmp_path / "continued",
            init_checkpoint=source_run,
            eval_tfrecords=data["eval"],
            eval_every_steps=1,
            num_eval_steps=3,
        )
    )
    continued = _evaluations(tmp_path / "continued")[0]
    source = _evaluations(source_run)[-1]
    assert continued["step"] == 1 and source["step"] == 4
    for name, value in source.items():
        if name != "step":
            np.testing.assert_allclose(continued[name], value, rtol=1e-6, err_msg=name)
    # Ours in both shapes: the run directory (both networks) and its pretrained/ discriminator.
    expected = collect_weights(load_checkpoint(source_run, "pretrainer").model, "pretrainer")
    actual = collect_weights(load_checkpoint(str(tmp_path / "continued"), "pretrainer").model, "pretrainer")
    _assert_weights_equal(actual, expected)


def test_from_a_pretrained_directory_and_at_a_longer_sequence_length(data, source_run, tmp_path):
    """A source trained at length 16 continues at 32 (its position table has 512 rows)."""
    root = tmp_path / "long"
    build_pretraining_data(
        _corpus(tmp_path / "long.txt", 2),
        data["vocab"],
        str(root),
        max_seq_length=32,
        num_shards=1,
        show_progress=False,
    )
    pretrained = os.path.join(source_run, "pretrained")
    run(
        _job(
            data,
            tmp_path / "run",
            init_checkpoint=pretrained,
            pretrain_tfrecords=str(root / "*.tfrecord*"),
            max_seq_length=32,
        )
    )
    expected = collect_weights(load_checkpoint(pretrained, "discriminator").model, "discriminator")
    actual = collect_weights(
        load_checkpoint(str(tmp_path / "run" / "pretrained"), "discriminator").model, "discriminator"
    )
    _assert_weights_equal(actual, expected)


def test_resuming_wins_over_init_checkpoint(data, tf1_checkpoint, source_run, tmp_path, caplog):
    import shutil

    model_dir = tmp_path / "run"
    shutil.copytree(source_run, model_dir)
    run(
        _job(
            data,
            model_dir,
            vocab_file=data["vocab"],
            learning_rate=1e-3,
            num_warmup_steps=1,
            num_train_steps=5,
            init_checkpoint=tf1_checkpoint[0],
        )
    )  # the source run's training settings, one step more
    # A notice in the library's words, with the arguments an entry point shows as its flags.
    (notice,) = [record for record in caplog.records if "was not used" in record.getMessage()]
    assert notice.getMessage() == (
        f"model_dir={model_dir} holds {model_dir}/ckpt-4: resuming from it; "
        f"init_checkpoint={tf1_checkpoint[0]} was not used (to start from "
        "init_checkpoint, use a new model_dir)"
    )
    assert notice.arguments == ("model_dir", "init_checkpoint")
    # Resumed from step 4 (the source's tiny architecture, not the TF1 checkpoint's).
    assert load_checkpoint(str(model_dir), "pretrainer").model.electra_config.hidden_size == 128


@pytest.mark.parametrize(
    "case, error, message",
    [
        ("missing", CheckpointError, "init_checkpoint=.*missing does not exist: pass a model directory"),
        (
            "vocabulary",
            DataError,
            "built with a vocabulary of .* tokens .* but init_checkpoint=.* has 50: rebuild the "
            "data with electra-build-data --vocab_file=",
        ),
        (
            "generator_width",
            CheckpointError,
            "init_generator_checkpoint=.* has word embeddings of shape \\(50, 24\\) but "
            "init_checkpoint=.* has \\(50, 16\\)",
        ),
        ("generator_alone", ConfigError, "init_generator_checkpoint pairs a generator with init_checkpoint"),
    ],
)
def test_bad_sources_fail_in_one_line_and_write_nothing(
    data, hf_pair, pretraining_data, tmp_path, monkeypatch, case, error, message
):
    discriminator = os.path.join(hf_pair["root"], "discriminator")
    overrides = {
        "missing": dict(init_checkpoint=str(tmp_path / "missing")),
        "vocabulary": dict(init_checkpoint=discriminator, pretrain_tfrecords=pretraining_data[0], max_seq_length=32),
    }.get(case, {})
    if case == "generator_width":
        monkeypatch.setattr(fixtures, "EMBEDDING_SIZE", 24)
        other = fixtures.build_hf_pair(tmp_path / "other")
        overrides = dict(
            init_checkpoint=discriminator, init_generator_checkpoint=os.path.join(other["root"], "generator")
        )
    if case == "generator_alone":
        overrides = dict(init_generator_checkpoint=os.path.join(hf_pair["root"], "generator"))
    if case == "vocabulary":
        # Data built with another vocabulary, recorded in a manifest.
        build_pretraining_data(
            _corpus(tmp_path / "c.txt", 3),
            pretraining_data[1],
            str(tmp_path / "other_data"),
            max_seq_length=MAX_SEQ_LENGTH,
            num_shards=1,
            show_progress=False,
        )
        overrides["pretrain_tfrecords"] = str(tmp_path / "other_data" / "*.tfrecord*")
        overrides["max_seq_length"] = MAX_SEQ_LENGTH
    with pytest.raises(error, match=message) as raised:
        run(_job(data, tmp_path / "run", **overrides))
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "run").exists()


def test_init_checkpoint_names_the_variant_whose_variables_it_cannot_start(data, hf_pair, tmp_path):
    discriminator = os.path.join(hf_pair["root"], "discriminator")
    job = _job(data, tmp_path / "run", init_checkpoint=discriminator, model_overrides={"uniform_generator": True})
    with pytest.raises(ConfigError) as raised:
        run(job)
    assert str(raised.value) == (
        "init_checkpoint starts the reference's generator and discriminator; it does not combine with uniform_generator"
    )
    assert raised.value.arguments == ("init_checkpoint", "uniform_generator")
    assert not (tmp_path / "run").exists()


def test_eval_mode_without_a_checkpoint_and_eval_steps_without_data_are_refused(data, tmp_path):
    with pytest.raises(ConfigError, match="mode=eval evaluates a checkpoint, and model_dir=.* holds none"):
        run(_job(data, tmp_path / "empty", mode="eval", eval_tfrecords=data["eval"]))
    with pytest.raises(ConfigError, match="eval_every_steps needs eval_tfrecords"):
        _job(data, tmp_path / "x", eval_every_steps=2).validate()
    assert not (tmp_path / "empty").exists()


def test_a_masked_lm_run_kept_checkpoint_starts_the_discriminator(data, tmp_path, capsys):
    mlm_dir = tmp_path / "mlm"
    run(
        _job(
            data,
            mlm_dir,
            vocab_file=data["vocab"],
            learning_rate=1e-3,
            num_train_steps=3,
            save_checkpoints_steps=1,
            keep_checkpoint_max=1,
            checkpoint_steps=(2,),
            model_overrides={"objective": "mlm"},
        )
    )
    kept = str(mlm_dir / "kept-2")
    assert os.path.exists(kept + ".index") and not os.path.exists(str(mlm_dir / "ckpt-2.index"))
    masked_lm = load_checkpoint(kept, "discriminator")
    final = load_checkpoint(str(mlm_dir), "discriminator")
    backbone = collect_weights(masked_lm.model, "discriminator")
    assert not all(
        np.array_equal(value, collect_weights(final.model, "discriminator")[name]) for name, value in backbone.items()
    )

    run(_job(data, tmp_path / "electra", vocab_file=data["vocab"], init_checkpoint=kept))
    assert f"initialised from {kept} (ours: a discriminator" in capsys.readouterr().out
    started = load_checkpoint(str(tmp_path / "electra" / "pretrained"), "discriminator")
    weights = collect_weights(started.model, "discriminator")
    # After one step at learning rate 0 the encoder is still the masked LM's at step 2.
    encoder = {name: value for name, value in backbone.items() if not name.startswith("discriminator_predictions")}
    _assert_weights_equal({name: weights[name] for name in encoder}, encoder)
