import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
DETECTOR_TRAIN_STEPS = 400


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



@pytest.fixture(scope="session")
def pretrained_tiny(pretraining_data, tmp_path_factory):
    """`<model_dir>/pretrained` of a tiny model pre-trained briefly by the pre-training job (as run_pretraining.py)."""
    from electra_tf.training.pretraining_job import PretrainingJob, run

    records, vocab = pretraining_data
    model_dir = tmp_path_factory.mktemp("pretrained_tiny")
    run(PretrainingJob(pretrain_tfrecords=records, model_dir=str(model_dir), model_size="tiny", max_seq_length=32,
                       train_batch_size=8, learning_rate=1e-3, num_train_steps=20, num_warmup_steps=2,
                       save_checkpoints_steps=0, log_every_steps=10, vocab_file=vocab, bias_correction=True,
                       progress_bar=False))
    return str(model_dir / "pretrained")


@pytest.fixture(scope="session")
def pretrained_detector(pretraining_data, tmp_path_factory):
    """`<model_dir>/pretrained` of a tiny model whose discriminator has learnt replaced-token detection on the topic
    corpus (the tiny preset's recipe at max_seq_length 32; test_run_pretraining shows AUC ~0.9 by step 600)."""
    from electra_tf.training.pretraining_job import PretrainingJob, run

    records, vocab = pretraining_data
    model_dir = tmp_path_factory.mktemp("pretrained_detector")
    run(PretrainingJob(pretrain_tfrecords=records, model_dir=str(model_dir), model_size="tiny", max_seq_length=32,
                       train_batch_size=32, learning_rate=1e-3, num_train_steps=DETECTOR_TRAIN_STEPS,
                       num_warmup_steps=60, save_checkpoints_steps=0, log_every_steps=100, vocab_file=vocab,
                       bias_correction=True, progress_bar=False))
    return str(model_dir / "pretrained")


@pytest.fixture(scope="session")
def keyword_glue_dir(tmp_path_factory):
    """A GLUE directory whose SST-2 is the synthetic keyword task (train 480, dev 200, test 20)."""
    from tests.finetune.synthetic_glue import write_sst2_task

    glue_dir = tmp_path_factory.mktemp("glue")
    write_sst2_task(glue_dir)
    return glue_dir
