import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.errors import ConfigError, DataError
from electra_tf.training.pretraining_job import run
from electra_tf.training.pretraining_spec import PretrainingJob

# The tiny preset at one layer: what these runs check does not depend on the depth, and one layer is cheaper to trace.
ONE_LAYER_WITHOUT_DROPOUT = {"num_layers": 1, "hidden_dropout": 0.0, "attention_dropout": 0.0}


def _job(pretraining_data, model_dir, model_overrides=None, **overrides):
    """The job of a 6-step run (checkpoints at steps 3 and 6, a log line every step); `model_overrides` are added to
    ONE_LAYER_WITHOUT_DROPOUT."""
    records, vocab = pretraining_data
    settings = dict(
        pretrain_tfrecords=records,
        model_dir=str(model_dir),
        model_size="tiny",
        max_seq_length=32,
        train_batch_size=8,
        learning_rate=1e-3,
        num_train_steps=6,
        num_warmup_steps=2,
        save_checkpoints_steps=3,
        log_every_steps=1,
        vocab_file=vocab,
        progress_bar=False,
        model_overrides={**ONE_LAYER_WITHOUT_DROPOUT, **(model_overrides or {})},
    )
    settings.update(overrides)
    return PretrainingJob(**settings)


@pytest.fixture(scope="module")
def finished_run(pretraining_data, tmp_path_factory):
    """The model_dir of the uninterrupted run of `_job`, for the tests below to read or copy (each run traces the
    model again)."""
    model_dir = tmp_path_factory.mktemp("finished_run") / "run"
    run(_job(pretraining_data, model_dir))
    return model_dir


def _checkpoint_values(path):
    return {
        name: tf.train.load_variable(path, name)
        for name, _ in tf.train.list_variables(path)
        if name != "_CHECKPOINTABLE_OBJECT_GRAPH"
    }


def _logged_steps(model_dir):
    with open(os.path.join(model_dir, "metrics.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line)["step"] for line in handle]


def _interrupted_copy(finished, target, step):
    """`finished` as it was on disk while it trained past its checkpoint of `step`: no later checkpoint, no exported
    model yet."""

    def not_written_yet(_, names):
        return [
            name
            for name in names
            if name == "pretrained" or (name.startswith("ckpt-") and int(name[5:].split(".")[0]) > step)
        ]

    shutil.copytree(finished, target, ignore=not_written_yet)
    tf.compat.v1.train.update_checkpoint_state(
        str(target), str(target / f"ckpt-{step}"), all_model_checkpoint_paths=[str(target / f"ckpt-{step}")]
    )


def test_resume_continues_from_the_checkpoint_with_identical_optimizer_state(pretraining_data, finished_run, tmp_path):
    """A run killed after its step-3 checkpoint and started again ends where an uninterrupted run ends:
    same step, same weights, same Adam slots, and one consistent metrics history (logged every 2 steps: at the same
    steps as a run that was never stopped)."""
    uninterrupted = finished_run
    assert _logged_steps(uninterrupted) == [1, 2, 3, 4, 5, 6]

    # The interrupted run: what a run logging every 2 steps had on disk when it was at step 4 (checkpoint 3
    # complete, metrics logged up to step 4), with checkpoint 6 never written.
    interrupted = tmp_path / "interrupted"
    _interrupted_copy(uninterrupted, interrupted, 3)
    with open(interrupted / "metrics.jsonl", "w", encoding="utf-8") as handle:
        for step in (1, 2, 4):
            handle.write(json.dumps({"step": step, "loss": -1.0}) + "\n")
    restored_slots = _checkpoint_values(str(interrupted / "ckpt-3"))

    run(_job(pretraining_data, interrupted, log_every_steps=2))

    assert _logged_steps(interrupted) == [1, 2, 4, 6]
    with open(interrupted / "metrics.jsonl", encoding="utf-8") as handle:
        assert [json.loads(line)["loss"] for line in handle][2] != -1.0, "entries after the checkpoint are replaced"
    expected = _checkpoint_values(str(uninterrupted / "ckpt-6"))
    resumed = _checkpoint_values(str(interrupted / "ckpt-6"))
    assert expected.keys() == resumed.keys()
    assert any("adam_m" in name or "_variables" in name for name in expected)
    for name, value in expected.items():
        np.testing.assert_allclose(resumed[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    assert int(resumed["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"]) == 6
    assert int(restored_slots["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"]) == 3


def test_a_resumed_run_with_other_num_train_steps_says_its_schedule_moved(
    pretraining_data, finished_run, tmp_path, capsys
):
    """Extending or shortening a run is allowed; the schedule's end moves with it, and the run says so. Linear decay
    from 1e-3 to 0 at the run's end gives step 3 the rate 1e-3 * (1 - 3/6) in 6 steps and 1e-3 * (1 - 3/5) in 5."""
    shortened = tmp_path / "shortened"
    _interrupted_copy(finished_run, shortened, 3)
    capsys.readouterr()
    run(_job(pretraining_data, shortened, num_train_steps=5))
    assert (
        "num_train_steps changed from 6 to 5: the learning-rate schedule now ends at step 5, and the rate at step 3 "
        "moves from 0.0005 to 0.0004\n"
    ) in capsys.readouterr().out
    assert _logged_steps(shortened) == [1, 2, 3, 4, 5]


def test_a_run_stopped_early_is_the_first_part_of_the_longer_run(pretraining_data, finished_run, tmp_path):
    """stop_at_step=3 of the 6-step schedule ends at step 3 with the weights and Adam slots the 6-step run had there
    (the learning rate followed the 6-step schedule, not one ending at step 3), checkpointed and exported."""
    stopped = tmp_path / "stopped"
    run(_job(pretraining_data, stopped, stop_at_step=3, save_checkpoints_steps=2))
    assert _logged_steps(stopped) == [1, 2, 3]
    assert tf.train.latest_checkpoint(str(stopped)).endswith("ckpt-3")
    expected = _checkpoint_values(str(finished_run / "ckpt-3"))
    reached = _checkpoint_values(str(stopped / "ckpt-3"))
    assert expected.keys() == reached.keys()
    for name, value in expected.items():
        if name.startswith("save_counter"):  # this run also saved at step 2
            continue
        np.testing.assert_allclose(reached[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    assert (stopped / "pretrained").is_dir()


def test_stop_at_step_past_the_run_is_refused(pretraining_data, tmp_path):
    with pytest.raises(ConfigError, match=r"stop_at_step=7 is past the end of the run, num_train_steps=6"):
        run(_job(pretraining_data, tmp_path / "run", stop_at_step=7))
    assert not (tmp_path / "run").exists()


# A benchmark (`pytest -m benchmark`): three runs take twenty seconds; the resume above and accumulation
# (tests/electra_tf/training/test_gradient_accumulation.py) are each checked in the suite.
@pytest.mark.benchmark
def test_run_killed_mid_accumulation_resumes_to_the_updates_of_whole_batches(pretraining_data, finished_run, tmp_path):
    """With 4 micro-batches per step, a run killed while step 4's micro-batches were running (nothing of a step is
    saved before it ends: checkpoint 3 is its last state) resumes past 3 batches of 8 examples, 12 micro-batches, and
    ends where an uninterrupted run ends, and where the run of whole batches of 8 ends."""
    whole_batches, uninterrupted = finished_run, tmp_path / "uninterrupted"
    run(_job(pretraining_data, uninterrupted, gradient_accumulation_steps=4))
    interrupted = tmp_path / "interrupted"
    _interrupted_copy(uninterrupted, interrupted, 3)

    run(_job(pretraining_data, interrupted, gradient_accumulation_steps=4))

    assert _logged_steps(interrupted) == [1, 2, 3, 4, 5, 6]
    resumed = _checkpoint_values(str(interrupted / "ckpt-6"))
    for reference, tolerance in ((uninterrupted, 1e-6), (whole_batches, 1e-5)):
        expected = _checkpoint_values(str(reference / "ckpt-6"))
        assert expected.keys() == resumed.keys()
        for name, value in expected.items():
            np.testing.assert_allclose(resumed[name], value, rtol=tolerance, atol=tolerance, err_msg=name)
    assert int(resumed["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"]) == 6, "the optimizer counts updates"
    with (
        open(interrupted / "metrics.jsonl", encoding="utf-8") as handle,
        open(whole_batches / "metrics.jsonl", encoding="utf-8") as expected_handle,
    ):
        for entry, expected_entry in zip(map(json.loads, handle), map(json.loads, expected_handle)):
            for name in ("loss", "learning_rate", "gradient_norm", "disc_auc"):
                assert entry[name] == pytest.approx(expected_entry[name], rel=1e-5), (entry["step"], name)


def test_finished_run_is_not_trained_again_and_pretrained_model_is_written(pretraining_data, finished_run, tmp_path):
    model_dir = tmp_path / "run"
    shutil.copytree(finished_run, model_dir)  # file times kept
    # A keras-hub preset of the discriminator, with the vocabulary and the tokenizer's casing.
    assert sorted(os.listdir(model_dir / "pretrained")) == [
        "assets",
        "config.json",
        "metadata.json",
        "model.weights.h5",
        "task.json",
        "task.weights.h5",
        "tokenizer.json",
        "vocab.txt",
    ]
    assert os.listdir(model_dir / "pretrained" / "assets" / "tokenizer") == ["vocabulary.txt"]
    before = os.path.getmtime(model_dir / "ckpt-6.index")
    assert run(_job(pretraining_data, model_dir)) == {}
    assert os.path.getmtime(model_dir / "ckpt-6.index") == before


def test_model_dir_of_another_config_or_training_settings_is_refused(pretraining_data, finished_run, tmp_path):
    model_dir = tmp_path / "run"
    shutil.copytree(finished_run, model_dir)
    with pytest.raises(
        ConfigError,
        match=rf"^model_dir={model_dir} holds a run made with other settings "
        r"\(mask_prob: 0.15 -> 0.2\); use another model_dir",
    ):
        run(_job(pretraining_data, model_dir, num_train_steps=7, model_overrides={"mask_prob": 0.2}))
    with pytest.raises(
        ConfigError,
        match=r"other settings \(bias_correction: False -> True, learning_rate: 0.001 -> "
        r"0.0005\); use another model_dir, or the settings of that run to resume it",
    ):
        run(_job(pretraining_data, model_dir, num_train_steps=7, bias_correction=True, learning_rate=5e-4))
    assert not os.path.exists(model_dir / "ckpt-7.index")
    # More steps continue the run (its schedule now spans them); so does another evaluation or logging setting.
    run(_job(pretraining_data, model_dir, num_train_steps=7, log_every_steps=7))
    assert _logged_steps(model_dir)[-1] == 7


def test_overrides_build_an_embedding_block_without_token_types_or_projection_and_alibi(pretraining_data, tmp_path):
    """The embedding block as wide as the hidden states, without a token-type table, and ALiBi attention in both
    networks (docs/cpu_budget.md)."""
    from electra_tf.training.pretrainer import ElectraPretrainer

    config = _job(
        pretraining_data, tmp_path, model_overrides={"embedding_size": 128, "type_vocab_size": 0, "alibi": True}
    ).model_config()
    pretrainer = ElectraPretrainer(config, max_seq_length=32)
    backbone = pretrainer.discriminator.backbone
    assert backbone.embeddings.token_type_embeddings is None and backbone.embeddings_project is None
    assert (backbone.type_vocab_size, backbone.embeddings.embedding_size, backbone.hidden_size) == (0, 128, 128)
    assert backbone.alibi and pretrainer.generator.backbone.alibi


def test_sequence_length_mismatch_is_reported_before_training(pretraining_data, tmp_path):
    with pytest.raises(DataError, match="max_seq_length"):
        run(_job(pretraining_data, tmp_path, max_seq_length=64))
    assert not os.path.exists(tmp_path / "checkpoint")


def test_gdes_run_exports_a_discriminator_with_the_merged_table(pretraining_data, tmp_path):
    """The discriminator saved by a gdes run has E_generator + E_delta as its word table."""
    from electra_tf.models import load_checkpoint
    from electra_tf.training.pretrainer import ElectraPretrainer

    model_dir = tmp_path / "gdes"
    job = _job(pretraining_data, model_dir, model_overrides={"embedding_sharing": "gdes"})
    run(job)
    model = ElectraPretrainer(job.model_config(), max_seq_length=32)
    restored = tf.train.Checkpoint(model=model).restore(str(model_dir / "ckpt-6"))
    restored.expect_partial().assert_existing_objects_matched()
    generator_table = model.embeddings.word_embeddings.embeddings.numpy()
    delta = model.word_embedding_delta.embeddings.numpy()
    assert np.abs(delta).max() > 1e-4, "the delta was trained"
    exported = load_checkpoint(str(model_dir / "pretrained")).model
    np.testing.assert_allclose(
        exported.backbone.embeddings.word_embeddings.embeddings.numpy(), generator_table + delta, rtol=1e-6
    )
    # The run directory gives the same discriminator; its pre-training model has no reference layout, so converting
    # that to the reference's format names the directory to use instead.
    from electra_tf.errors import CheckpointError
    from electra_tf.models import save_checkpoint

    from_run = load_checkpoint(str(model_dir), kind="discriminator").model
    np.testing.assert_allclose(
        from_run.backbone.embeddings.word_embeddings.embeddings.numpy(), generator_table + delta, rtol=1e-6
    )
    with pytest.raises(CheckpointError, match="pretrained directory"):
        save_checkpoint(load_checkpoint(str(model_dir)).model, str(model_dir.parent / "tf1" / "model.ckpt"), "tf1")


@pytest.mark.parametrize(
    "objective, logged, absent",
    [
        ("mlm", {"masked_lm_loss"}, {"disc_loss", "model_mlm_loss", "cloze_loss"}),
        ("all_tokens_mlm", {"masked_lm_loss", "model_mlm_loss"}, {"disc_loss", "cloze_loss"}),
        (
            "electric",
            {"cloze_loss", "cloze_accuracy", "masked_lm_loss", "sampled_masked_lm_accuracy", "disc_loss", "disc_auc"},
            {"model_mlm_loss"},
        ),
    ],
)
def test_other_objectives_run_log_their_metrics_and_save_a_discriminator(
    pretraining_data, tmp_path, objective, logged, absent
):
    from electra_tf.models import load_checkpoint

    model_dir = tmp_path / objective
    logs = run(
        _job(
            pretraining_data,
            model_dir,
            num_train_steps=2,
            save_checkpoints_steps=0,
            log_every_steps=1,
            model_overrides={"objective": objective},
        )
    )
    with open(model_dir / "metrics.jsonl", encoding="utf-8") as handle:
        entry = json.loads(handle.readline())
    assert logged <= set(entry) and not absent & set(entry)
    assert np.isfinite(logs["loss"])
    assert load_checkpoint(str(model_dir / "pretrained")).model.electra_config.objective == objective


def test_two_stage_needs_a_single_device_and_room_for_the_second_stage(pretraining_data, tmp_path):
    with pytest.raises(ConfigError, match="use strategy=default"):
        _job(pretraining_data, tmp_path, strategy="mirrored", model_overrides={"two_stage_steps": 2}).validate()
    with pytest.raises(ConfigError, match="leaves no step for the discriminator"):
        _job(pretraining_data, tmp_path, model_overrides={"two_stage_steps": 6}).validate()


def _corrupt_copy(source, target):
    """`source` with four bytes flipped in the middle: same size, one record failing its checksum."""
    data = bytearray(open(source, "rb").read())
    middle = len(data) // 2
    data[middle : middle + 4] = bytes(255 - byte for byte in data[middle : middle + 4])
    target.write_bytes(bytes(data))
    return str(target)


def test_a_corrupt_record_in_training_names_the_shard_and_keeps_the_last_checkpoint(
    pretraining_data, finished_run, tmp_path
):
    records, _ = pretraining_data
    shard = tmp_path / "data" / "train.tfrecord"
    shard.parent.mkdir()
    _corrupt_copy(records, shard)
    model_dir = tmp_path / "run"
    shutil.copytree(finished_run, model_dir)  # continued on the corrupt copy of its data
    with pytest.raises(
        DataError,
        match=rf"^{shard} holds a corrupt record at byte \d+ \(its checksum does not "
        r"match\): .*; model_dir keeps its last checkpoint .*/ckpt-6$",
    ):
        run(_job(pretraining_data, str(model_dir), pretrain_tfrecords=str(shard), num_train_steps=8))
    assert tf.train.latest_checkpoint(str(model_dir)).endswith("ckpt-6")
    new_dir = tmp_path / "new_run"
    with pytest.raises(DataError, match=rf"^{shard} holds a corrupt record .*; no checkpoint was written$"):
        run(_job(pretraining_data, str(new_dir), pretrain_tfrecords=str(shard)))
    assert not new_dir.exists()


def test_sinusoidal_position_init_starts_the_table_from_scaled_waves(pretraining_data, tmp_path):
    from electra_tf.training.pretraining_job import build_model

    job = _job(pretraining_data, tmp_path / "sinusoidal", model_overrides={"sinusoidal_position_init": True})
    config = job.model_config()
    table = build_model(job, config, tf.distribute.get_strategy()).embeddings.position_embeddings.weights[0].numpy()
    np.testing.assert_allclose(table.std(), config.initializer_range, rtol=1e-4)
    # Sine/cosine pairs: the dot product of two positions' vectors depends only on their offset.
    gram = table @ table.T
    for offset in (1, 5, 40):
        diagonal = np.diagonal(gram, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4 * np.abs(gram).max())
    random_job = _job(pretraining_data, tmp_path / "random")
    random_table = (
        build_model(random_job, random_job.model_config(), tf.distribute.get_strategy())
        .embeddings.position_embeddings.weights[0]
        .numpy()
    )
    assert np.diagonal(random_table @ random_table.T, 1).std() > 10 * np.diagonal(gram, 1).std()
