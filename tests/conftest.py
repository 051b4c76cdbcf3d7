import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """Path to ../shared/data (real vocab, GLUE, SQuAD, corpus); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def pretraining_data(tmp_path_factory):
    """(tfrecord path, vocab path) of a small learnable corpus at max_seq_length 32."""
    from tests import synthetic_data

    directory = tmp_path_factory.mktemp("pretraining_data")
    return (synthetic_data.write_tfrecords(directory / "train.tfrecord"),
            synthetic_data.write_vocab(directory / "vocab.txt"))
