"""Progress lines for the steps of a command that can take a while and have no bar of their own (loading a
checkpoint, writing a SavedModel, scoring a list of texts): a line when the step starts and one with its wall time
when it ends, printed and flushed like the commands' other progress lines (electra-finetune's "trial 0 (seed 0): ...",
electra-build-vocab's "... in 0.7s")."""

import contextlib
import sys
import time


@contextlib.contextmanager
def step(description, stream=None):
    """Prints "`description` ..." now and "`description`: done in N.Ns" when the block ends without an error (an
    error leaves no end line: it propagates, for the command to report). `stream` defaults to stdout; a command whose
    stdout is its result (electra-score's JSON lines) passes `sys.stderr`."""
    stream = sys.stdout if stream is None else stream
    print(f"{description} ...", file=stream, flush=True)
    start = time.monotonic()
    yield
    print(f"{description}: done in {time.monotonic() - start:.1f}s", file=stream, flush=True)
