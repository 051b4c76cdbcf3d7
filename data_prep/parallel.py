"""Building shard groups in several processes: this one plus spawned workers, pulling groups from a queue.

Each group is built in one pass over the corpus (see `shard_builder.build_shards`). Groups are handed out on demand,
so this process, which has TensorFlow loaded already, keeps building while the workers start (importing TensorFlow
takes seconds), and a small corpus may be finished before they arrive. What a shard contains never depends on who
builds it. Workers are spawned, not forked: a fork would copy TensorFlow's runtime threads' locks in whatever state
they happen to be.
"""

import multiprocessing
import queue as queue_lib

import tensorflow as tf

from data_prep import shard_builder

_POLL_SECONDS = 0.5


def shard_groups(num_shards, num_processes):
    """Shard groups, round-robin: one for a single process, else two per process (more passes over the corpus, but
    work for the processes that start first)."""
    num_groups = 1 if num_processes <= 1 else min(num_shards, 2 * num_processes)
    return [list(range(g, num_shards, num_groups)) for g in range(num_groups)]


def _worker_main(config, tasks, results):
    # One thread per worker: the processes are the parallelism, and oversubscribed cores only slow them down.
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:  # TensorFlow already initialised: the worker body running in a live process (tests)
        pass
    try:
        while (task := tasks.get()) is not None:
            index, shards = task
            entries = shard_builder.build_shards(
                config, shards, on_progress=lambda examples, num_bytes: results.put(("progress", examples, num_bytes))
            )
            results.put(("done", index, entries))
    except BaseException as error:  # Reported to the parent, which raises it (a DataError keeps its message).
        results.put(("error", error))


def build_groups(config, groups, num_processes, on_progress, build_here=True):
    """Builds every shard group; returns their manifest entries, group by group. Raises the first worker error.

    With `build_here=False` this process only coordinates and `num_processes` spawned workers build (for tests).
    """
    if build_here and (num_processes <= 1 or len(groups) == 1):
        return [shard_builder.build_shards(config, shards, on_progress=on_progress) for shards in groups]
    context = multiprocessing.get_context("spawn")
    # SimpleQueue puts synchronously, so everything (tasks, then one stop sign per consumer) is queued before anyone
    # reads and a consumer can simply block on get().
    tasks, results = context.SimpleQueue(), context.Queue()
    for task in enumerate(groups):
        tasks.put(task)
    num_workers = num_processes - 1 if build_here else num_processes
    for _ in range(num_workers + int(build_here)):
        tasks.put(None)
    workers = [
        context.Process(target=_worker_main, args=(config, tasks, results), daemon=True) for _ in range(num_workers)
    ]
    for worker in workers:
        worker.start()
    done = {}

    def handle(message):
        kind, *payload = message
        if kind == "progress":
            on_progress(*payload)
        elif kind == "done":
            done[payload[0]] = payload[1]
        else:
            raise payload[0]

    def drain():
        while True:
            try:
                handle(results.get_nowait())
            except queue_lib.Empty:
                return

    def own_progress(examples, num_bytes):
        on_progress(examples, num_bytes)
        drain()

    try:
        while build_here and (task := tasks.get()) is not None:
            index, shards = task
            done[index] = shard_builder.build_shards(config, shards, on_progress=own_progress)
        while len(done) < len(groups):
            try:
                handle(results.get(timeout=_POLL_SECONDS))
            except queue_lib.Empty:
                dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
                if dead or all(w.exitcode == 0 for w in workers):
                    drain()
                    if len(done) < len(groups):
                        raise RuntimeError(
                            f"a worker process ended (exit codes {dead}) before finishing its shards"
                        ) from None
        return [done[index] for index in range(len(groups))]
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()
