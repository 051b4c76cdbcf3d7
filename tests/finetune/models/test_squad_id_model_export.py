"""LiteRT and ONNX files of a fine-tuned SQuAD model (the paper's joint head with its beam, SQuAD 2.0): run by their
own runtimes, they give the Keras model's outputs."""

import numpy as np
import pytest

from electra_tf.models import build_discriminator
from finetune.models.squad_model import ElectraSquadModel
from finetune.models.squad_serving import export_squad
from tests.electra_tf.checkpoints.models import TINY
from tests.id_model_runtimes import RUNTIMES, converter_or_skip, fixed_inputs, with_trained_scale

MAX_SEQ_LENGTH = 16


@pytest.mark.parametrize("export_format", ["litert", "onnx"])
def test_squad_file_matches_keras(export_format, tmp_path):
    converter_or_skip(export_format)
    model = ElectraSquadModel(build_discriminator(TINY).backbone, head="joint", version_2=True, beam_size=3)
    inputs = fixed_inputs(2, MAX_SEQ_LENGTH, TINY.vocab_size)
    model(inputs, training=False)  # builds the head's weights, to be randomised with the backbone's
    with_trained_scale(model)
    path = export_squad(model, None, str(tmp_path / "export"), MAX_SEQ_LENGTH, export_format=export_format)

    served = RUNTIMES[export_format](path, inputs)
    expected = model(inputs, training=False)
    assert set(served) == set(expected)
    for name, value in expected.items():
        value = np.asarray(value)
        if value.dtype.kind == "f":
            np.testing.assert_allclose(served[name], value, rtol=0, atol=1e-5, err_msg=name)
        else:  # the beam's start and end positions
            assert served[name].tolist() == value.tolist(), name
