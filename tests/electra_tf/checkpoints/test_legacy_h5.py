"""Old `pretrained/` directories (weights files of the models before ElectraBackbone) still load, exactly."""

import h5py
import numpy as np

from electra_tf.checkpoints.naming import collect_weights
from electra_tf.config import ElectraConfig
from electra_tf.checkpoints.presets import CONFIG_NAME, LEGACY_WEIGHTS_NAMES
from electra_tf.pretrained import load_pretrained

CONFIG = ElectraConfig.from_preset("tiny", num_layers=2, max_position_embeddings=32).with_vocab(
    60, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
E, H, HEADS, FFN = 64, 128, 2, 512


def _legacy_discriminator_file(path, rng):
    """A discriminator.weights.h5 laid out as the keras-hub-TransformerEncoder models wrote it; returns the arrays
    under the reference's names (attention kernels flattened to [H, H])."""
    expected = {}

    def put(handle, dataset, array, name=None):
        handle.create_dataset(dataset, data=array)
        if name:
            expected[name] = array

    def rand(*shape):
        return rng.normal(size=shape).astype("float32")

    with h5py.File(path, "w") as handle:
        for table, shape in (("word_embeddings", (60, E)), ("position_embeddings", (32, E)),
                             ("token_type_embeddings", (2, E))):
            put(handle, f"embeddings/{table}/vars/0", rand(*shape), f"electra/embeddings/{table}")
        put(handle, "embeddings/layer_norm/vars/0", rand(E), "electra/embeddings/LayerNorm/gamma")
        put(handle, "embeddings/layer_norm/vars/1", rand(E), "electra/embeddings/LayerNorm/beta")
        put(handle, "encoder/embeddings_project/vars/0", rand(E, H), "electra/embeddings_project/kernel")
        put(handle, "encoder/embeddings_project/vars/1", rand(H), "electra/embeddings_project/bias")
        for i in range(2):
            old, new = f"encoder/transformer_layer_{i}", f"electra/encoder/layer_{i}"
            for part in ("query", "key", "value"):
                kernel, bias = rand(H, HEADS, H // HEADS), rand(HEADS, H // HEADS)
                put(handle, f"{old}/_self_attention_layer/{part}_dense/vars/0", kernel)
                put(handle, f"{old}/_self_attention_layer/{part}_dense/vars/1", bias)
                expected[f"{new}/attention/self/{part}/kernel"] = kernel.reshape(H, H)
                expected[f"{new}/attention/self/{part}/bias"] = bias.reshape(H)
            kernel = rand(HEADS, H // HEADS, H)
            put(handle, f"{old}/_self_attention_layer/output_dense/vars/0", kernel)
            expected[f"{new}/attention/output/dense/kernel"] = kernel.reshape(H, H)
            put(handle, f"{old}/_self_attention_layer/output_dense/vars/1", rand(H),
                f"{new}/attention/output/dense/bias")
            for old_part, new_part, leaves, shapes in (
                    ("_self_attention_layer_norm", "attention/output/LayerNorm", ("gamma", "beta"), ((H,), (H,))),
                    ("_feedforward_intermediate_dense", "intermediate/dense", ("kernel", "bias"), ((H, FFN), (FFN,))),
                    ("_feedforward_output_dense", "output/dense", ("kernel", "bias"), ((FFN, H), (H,))),
                    ("_feedforward_layer_norm", "output/LayerNorm", ("gamma", "beta"), ((H,), (H,)))):
                for index, (leaf, shape) in enumerate(zip(leaves, shapes)):
                    put(handle, f"{old}/{old_part}/vars/{index}", rand(*shape), f"{new}/{new_part}/{leaf}")
        for old_part, new_part, shapes in (("dense", "dense", ((H, H), (H,))),
                                           ("dense_prediction", "dense_1", ((H, 1), (1,)))):
            for index, (leaf, shape) in enumerate(zip(("kernel", "bias"), shapes)):
                put(handle, f"head/{old_part}/vars/{index}", rand(*shape),
                    f"discriminator_predictions/{new_part}/{leaf}")
    return expected


def test_an_old_pretrained_directory_loads_every_array_into_its_variable(tmp_path):
    directory = tmp_path / "pretrained"
    directory.mkdir()
    CONFIG.save(str(directory / CONFIG_NAME))
    expected = _legacy_discriminator_file(str(directory / LEGACY_WEIGHTS_NAMES["discriminator"]), np.random.default_rng(0))
    loaded = collect_weights(load_pretrained(str(directory)), "discriminator")
    assert set(loaded) == set(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(loaded[name], value, err_msg=name)
