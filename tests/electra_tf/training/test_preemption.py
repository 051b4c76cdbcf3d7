"""SIGTERM stops training at the end of the batch it arrived in, and the handler in place before training comes back.
The whole path in fresh processes (checkpoint of that step, exit code 143, the restart ends as an uninterrupted run)
is the benchmark tests/test_kill_resume.py."""

import os
import signal

import keras
import numpy as np

from electra_tf.training.preemption import PREEMPTED_EXIT_CODE, StopOnSigterm, TrainingPreempted


class _SigtermAfterBatch(keras.callbacks.Callback):
    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.batches_ended = 0

    def on_train_batch_end(self, batch, logs=None):
        self.batches_ended += 1
        if batch == self.batch:
            os.kill(os.getpid(), signal.SIGTERM)


def test_sigterm_stops_training_after_its_batch_and_restores_the_previous_handler():
    received = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        sender, stop = _SigtermAfterBatch(batch=2), StopOnSigterm()
        features, targets = np.ones((40, 3), "float32"), np.zeros((40, 1), "float32")
        model.fit(features, targets, batch_size=4, epochs=3, verbose=0, callbacks=[sender, stop])

        assert stop.requested and received == []
        assert sender.batches_ended == 3, "training ends with the batch during which SIGTERM arrived"
        os.kill(os.getpid(), signal.SIGTERM)
        assert received == [signal.SIGTERM], "after training, SIGTERM goes to the handler in place before it"
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_stop_names_the_step_and_the_directory_and_exits_as_a_shell_reports_sigterm():
    error = TrainingPreempted(step=12, model_dir="/runs/small")
    assert error.step == 12
    assert str(error) == (
        "SIGTERM received: saved the checkpoint of step 12 in /runs/small and stopped; "
        "run the same command again to resume"
    )
    assert PREEMPTED_EXIT_CODE == 128 + signal.SIGTERM
