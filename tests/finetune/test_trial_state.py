"""Resumable fine-tuning: a run killed with SIGKILL mid-epoch and rerun ends, under --deterministic, with exactly the
weights, dev results, predictions and TensorBoard history of an uninterrupted run (a benchmark); the data order and
the saved state behind it."""

import json
import os
import signal
import subprocess
import sys
import time
import zipfile

import h5py
import numpy as np
import pytest
import tensorflow as tf

from finetune.trial_state import epoch_seed, training_batches
from tests.conftest import REPO_ROOT

STEPS_PER_EPOCH = 13  # 96 examples in batches of 8 within their length buckets, each bucket's last one partial


def _command(pretrained_tiny, glue_dir, output_dir):
    return [
        sys.executable,
        str(REPO_ROOT / "run_finetuning.py"),
        "--task=SST-2",
        f"--init_checkpoint={pretrained_tiny}",
        f"--data_dir={glue_dir}",
        f"--output_dir={output_dir}",
        "--model_size=tiny",
        "--noprogress_bar",
        "--learning_rate=1e-3",
        "--num_train_epochs=2",
        "--train_batch_size=8",
        "--max_seq_length=16",
        "--max_train_examples=96",
        "--max_eval_examples=40",
        "--save_checkpoints_steps=5",
        "--deterministic",
        "--seed=3",
        "--save_models",
    ]


def _start(command):
    return subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process):
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stdout[-2000:] + stderr[-3000:]
    return stdout


def _weights(model_file):
    """Every array in the .keras file's weights, by its HDF5 path."""
    values = {}
    with (
        zipfile.ZipFile(model_file) as archive,
        archive.open("model.weights.h5") as handle,
        h5py.File(handle, "r") as weights,
    ):
        weights.visititems(
            lambda name, item: values.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None
        )
    return values


def _tensorboard_scalars(log_dir):
    """[(tag, step, value)] over every events file under `log_dir`, sorted."""
    scalars = []
    for events_file in tf.io.gfile.glob(os.path.join(log_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(events_file):
            for value in event.summary.value:
                if value.tag.startswith("epoch_"):
                    scalars.append((value.tag, event.step, float(tf.make_ndarray(value.tensor))))
    return sorted(scalars)


# A benchmark (`pytest -m benchmark`): two fine-tuning runs in fresh processes, one killed and run again, take most of a
# minute. In the suite, a resumed epoch's data order (below), a trial's saved state restored into a model (below), and
# the resume of pre-training from its checkpoint (tests/electra_tf/training/test_pretraining_job.py).
@pytest.mark.benchmark
def test_killed_mid_epoch_and_rerun_ends_as_an_uninterrupted_run(pretrained_tiny, keyword_glue_dir, tmp_path):
    uninterrupted_dir, interrupted_dir = tmp_path / "uninterrupted", tmp_path / "interrupted"
    uninterrupted = _start(_command(pretrained_tiny, keyword_glue_dir, uninterrupted_dir))
    interrupted = _start(_command(pretrained_tiny, keyword_glue_dir, interrupted_dir))
    state_file = interrupted_dir / "trial_0" / "state" / "checkpoint"
    while interrupted.poll() is None and not state_file.exists():
        time.sleep(0.005)
    interrupted.send_signal(signal.SIGKILL)
    interrupted.communicate()
    assert interrupted.returncode == -signal.SIGKILL, "killed before it finished"
    saved_step = int(tf.train.latest_checkpoint(str(state_file.parent)).rsplit("-", 1)[1])
    assert 0 < saved_step < 2 * STEPS_PER_EPOCH and saved_step % STEPS_PER_EPOCH, "a save in the middle of an epoch"
    assert not (interrupted_dir / "trial_0" / "trial.json").exists()

    resumed = _finish(_start(_command(pretrained_tiny, keyword_glue_dir, interrupted_dir)))
    expected = _finish(uninterrupted)
    resumed_lines = [line for line in resumed.splitlines() if "resuming from" in line]
    assert resumed_lines == [
        f"trial 0: resuming from {state_file.parent}/ckpt-{saved_step} (epoch "
        f"{saved_step // STEPS_PER_EPOCH + 1}, batch {saved_step % STEPS_PER_EPOCH} of "
        f"{STEPS_PER_EPOCH})"
    ]
    assert "resuming" not in expected

    results = {
        name: json.loads((directory / "results.json").read_text())
        for name, directory in (("expected", uninterrupted_dir), ("resumed", interrupted_dir))
    }
    assert results["resumed"]["num_train_examples"] == 96
    trial, expected_trial = results["resumed"]["trials"][0], results["expected"]["trials"][0]
    untimed = [{key: value for key, value in entry.items() if key != "seconds"} for entry in (trial, expected_trial)]
    assert untimed[0] == untimed[1]
    assert trial["seconds"] > 0 and expected_trial["seconds"] > 0
    assert len(trial["validation_per_epoch"]["loss"]) == 2
    assert (interrupted_dir / "trial_0" / "dev_predictions.tsv").read_bytes() == (
        uninterrupted_dir / "trial_0" / "dev_predictions.tsv"
    ).read_bytes()
    assert len((interrupted_dir / "trial_0" / "dev_predictions.tsv").read_text().splitlines()) == 1 + 40
    expected_weights = _weights(uninterrupted_dir / "trial_0" / "model.keras")
    resumed_weights = _weights(interrupted_dir / "trial_0" / "model.keras")
    assert expected_weights.keys() == resumed_weights.keys() and len(expected_weights) > 10
    for name, value in expected_weights.items():
        np.testing.assert_array_equal(resumed_weights[name], value, err_msg=name)
    for split in ("train", "validation"):
        history = _tensorboard_scalars(interrupted_dir / "trial_0" / "logs" / split)
        assert history == _tensorboard_scalars(uninterrupted_dir / "trial_0" / "logs" / split)
        assert sorted({step for _, step, _ in history}) == [0, 1], "each epoch once, at its own step"
    assert not (interrupted_dir / "trial_0" / "state").exists(), "a finished trial's state is deleted"


def test_each_epoch_has_its_own_order_and_a_resumed_one_goes_on_where_it_stopped():
    examples = tf.data.Dataset.range(10)
    batches = [batch.numpy().tolist() for batch in training_batches(examples, 4, seed=5, first_epoch=0, num_epochs=3)]
    assert [len(batch) for batch in batches] == [4, 4, 2] * 3, "an epoch's last batch is partial"
    epochs = [sorted(sum(batches[index : index + 3], [])) for index in (0, 3, 6)]
    assert epochs == [list(range(10))] * 3
    assert batches[0:3] != batches[3:6], "reshuffled every epoch"
    resumed = [
        batch.numpy().tolist()
        for batch in training_batches(examples, 4, seed=5, first_epoch=1, num_epochs=3, skip_batches=2)
    ]
    assert resumed == batches[5:]
    assert epoch_seed(5, 1) != epoch_seed(6, 0) != epoch_seed(5, 0)


def _lora_classifier(seed):
    """A LoRA classifier set up as the runner sets up a trial: LoRA, then the optimizer, built before any restore."""
    import keras

    from electra_tf.models import ElectraBackbone
    from finetune.models import ElectraTextClassifier
    from finetune.optimization import create_finetuning_optimizer

    keras.utils.set_random_seed(seed)
    model = ElectraTextClassifier(
        ElectraBackbone(
            vocab_size=40, embedding_size=16, hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64
        ),
        num_classes=2,
    )
    model.enable_lora(2, lora_alpha=4)
    model.compile(
        optimizer=create_finetuning_optimizer(model.num_layers, 1e-2, 10),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    model.optimizer.build(model.trainable_variables)
    return model


def test_a_lora_trial_s_saved_state_restores_into_a_lora_model(tmp_path):
    from finetune.trial_state import TrialState

    model = _lora_classifier(seed=0)
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 40, size=(4, 6)).astype("int32")
    inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": np.ones_like(ids)}
    model.fit(inputs, np.array([0, 1, 1, 0]), epochs=3, verbose=0)
    state = TrialState(str(tmp_path), model, {"lora_rank": 2}, steps_per_epoch=1)
    state.steps.assign(3)
    state.save()

    restored = _lora_classifier(seed=1)  # other initial factors and head
    assert not np.array_equal(restored(inputs).numpy(), model(inputs).numpy())
    assert TrialState(str(tmp_path), restored, {"lora_rank": 2}, steps_per_epoch=1).restore() == 3
    for mine, theirs in zip(model.weights + model.optimizer.variables, restored.weights + restored.optimizer.variables):
        np.testing.assert_array_equal(theirs.numpy(), mine.numpy(), err_msg=mine.path)
    lora_factors = [variable for variable in restored.trainable_variables if "lora_kernel_b" in variable.path]
    assert lora_factors and all(np.abs(variable.numpy()).max() > 0 for variable in lora_factors), "trained factors"
    np.testing.assert_array_equal(restored(inputs).numpy(), model(inputs).numpy())


def _small_model(seed):
    import keras

    keras.utils.set_random_seed(seed)
    network = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    network.compile(optimizer="sgd", loss="mse")
    network.optimizer.build(network.trainable_variables)
    return network


def test_a_resumed_trial_counts_the_seconds_of_the_run_before_it(tmp_path):
    from finetune.trial_state import TrialState

    state = TrialState(str(tmp_path), _small_model(0), {"seed": 0}, steps_per_epoch=1)
    state.started -= 30.0  # the first run trained for 30 s before its save
    state.save()
    resumed = TrialState(str(tmp_path), _small_model(0), {"seed": 0}, steps_per_epoch=1)
    assert resumed.seconds() < 30.0
    resumed.restore()
    assert 30.0 <= resumed.seconds() < 60.0


def test_a_worker_resumes_from_the_chief_s_state_and_saves_its_own_elsewhere(tmp_path):
    """A worker other than the chief: restored from the chief's trial directory (weights, batches trained, history,
    the best epoch's weights), its own saves under its own directory, the chief's left as they were."""
    from finetune.trial_state import BEST_WEIGHTS_FILE, HISTORY_FILE, STATE_DIR, TrialState

    chief_dir, worker_dir = tmp_path / "chief" / "trial_0", tmp_path / "worker" / "trial_0"
    trained = _small_model(0)
    chief = TrialState(str(chief_dir), trained, {"seed": 0}, steps_per_epoch=2)
    chief.steps.assign(3)
    chief.history = {"loss": [0.5], "val_loss": [0.25]}
    os.makedirs(chief.directory)
    trained.save_weights(chief.best_weights_path)
    chief.save()
    saved = sorted(os.listdir(chief_dir / STATE_DIR))

    model = _small_model(1)
    worker = TrialState(str(worker_dir), model, {"seed": 0}, steps_per_epoch=2, resume_from=str(chief_dir))
    assert worker.restore() == 3 and worker.restored_from == str(chief_dir / STATE_DIR / "ckpt-3")
    assert worker.history == {"loss": [0.5], "val_loss": [0.25]}
    for mine, chief_s in zip(model.weights, trained.weights):
        np.testing.assert_array_equal(mine.numpy(), chief_s.numpy())
    assert (worker_dir / STATE_DIR / BEST_WEIGHTS_FILE).read_bytes() == (
        chief_dir / STATE_DIR / BEST_WEIGHTS_FILE
    ).read_bytes()
    worker.steps.assign(4)
    worker.save()
    assert {HISTORY_FILE, "ckpt-4.index"} <= set(os.listdir(worker_dir / STATE_DIR))
    assert sorted(os.listdir(chief_dir / STATE_DIR)) == saved
