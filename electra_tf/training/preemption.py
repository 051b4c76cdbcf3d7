"""Graceful stop on SIGTERM (what schedulers and preemptible VMs send before killing a job).

The handler only records the request; the callback acts at the next batch boundary by stopping training, and
`CheckpointSaver.on_train_end` then writes the checkpoint of that step. A kill -9 cannot be caught: it is covered by
resuming from the last complete checkpoint (see `pretraining_job.run`).
"""

import signal
import threading

import keras

PREEMPTED_EXIT_CODE = 143  # 128 + SIGTERM, what a shell reports for a process ended by SIGTERM


class TrainingPreempted(Exception):
    """Training stopped on SIGTERM after checkpointing `step`; starting the job again resumes there."""

    def __init__(self, step, model_dir):
        super().__init__(
            f"SIGTERM received: saved the checkpoint of step {step} in {model_dir} and stopped; "
            "run the same command again to resume"
        )
        self.step = step


class StopOnSigterm(keras.callbacks.Callback):
    """Stop training at the end of the batch during which SIGTERM arrived; `requested` tells `run()` it happened."""

    def __init__(self):
        super().__init__()
        self.requested = False
        self._previous_handler = None

    def _handle(self, signum, frame):
        self.requested = True

    def on_train_begin(self, logs=None):
        # Signal handlers can only be installed from the main thread (not, e.g., under some test runners' threads).
        if threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(signal.SIGTERM, self._handle)

    def on_train_batch_end(self, batch, logs=None):
        if self.requested:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self._previous_handler is not None:
            signal.signal(signal.SIGTERM, self._previous_handler)
            self._previous_handler = None
