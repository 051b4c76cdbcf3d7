"""`export_model.py --model=squad`: a fine-tuned SQuAD model served by token ids and by question/context strings."""

import os

import keras
import numpy as np

from electra_tf.config import ElectraConfig
from electra_tf.models import build_discriminator
from finetune.models.squad_model import ElectraSquadModel
from tests.console_commands import run_command
from tests.serving_session import serve_in_fresh_process


def test_squad_model_serves_like_keras_under_tf_servings_loader(pretraining_data, tmp_path, capfd):
    """Exported by the command in this process (`tests.console_commands`), served in a fresh one."""
    vocab = pretraining_data[1]
    config = ElectraConfig.from_preset("tiny", vocab_size=200, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    model = ElectraSquadModel(build_discriminator(config).backbone, head="joint", version_2=True, beam_size=3)
    model_file = str(tmp_path / "trial_0" / "model.keras")
    os.makedirs(os.path.dirname(model_file))
    model.save(model_file)
    export_dir = str(tmp_path / "export" / "1")
    status = run_command(
        "electra-export",
        "--model=squad",
        f"--init_checkpoint={model_file}",
        f"--vocab_file={vocab}",
        f"--output_dir={export_dir}",
        "--max_seq_length=16",
        "--max_query_length=3",
    )
    assert status == 0, capfd.readouterr().err[-3000:]

    # The question is cut to 3 pieces: [CLS] w1 w2 w3 [SEP] w5 w6 w7 w8 [SEP], padded to 16.
    ids = np.array([[2, 6, 7, 8, 3, 10, 11, 12, 13, 3] + [0] * 6], np.int32)
    features = {
        "input_ids": ids,
        "input_mask": (ids > 0).astype(np.int32),
        "segment_ids": np.array([[0] * 5 + [1] * 5 + [0] * 6], np.int32),
    }
    served, by_ids = serve_in_fresh_process(
        export_dir,
        [
            ("session", "serve_text", {"question": ["w1 w2 w3 w4"], "context": ["w5 w6 w7 w8"]}),
            ("session", "serving_default", {name: value.tolist() for name, value in features.items()}),
        ],
    )
    for name, value in features.items():
        assert served[name] == value.tolist(), name
    expected = keras.saving.load_model(model_file, compile=False)(features, training=False)
    assert set(expected) <= set(served)
    for name, value in expected.items():
        np.testing.assert_allclose(served[name], np.asarray(value), atol=1e-5, err_msg=name)
        np.testing.assert_allclose(by_ids[name], np.asarray(value), atol=1e-5, err_msg=name)


def test_squad_export_errors_are_one_line(tmp_path, capfd):
    """The command in this process (`tests.console_commands`): what it prints, not its start-up, is checked here."""
    (tmp_path / "model.h5").write_text("not a keras file")
    for args, message in (
        [f"--init_checkpoint={tmp_path / 'model.h5'}", "is not a .keras file"],
        [f"--init_checkpoint={tmp_path / 'missing.keras'}", "missing.keras does not exist: a SQuAD model is read from"],
    ):
        status = run_command("electra-export", "--model=squad", args, f"--output_dir={tmp_path / 'out'}")
        stderr = capfd.readouterr().err
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert status == 2 and len(errors) == 1 and message in errors[0], stderr[-1500:]
        assert not (tmp_path / "out").exists()
