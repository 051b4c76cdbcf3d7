import keras

from electra_tf.layers.dropout import ElectraDropout
from electra_tf.layers.encoder import ElectraEncoder
from electra_tf.layers.flat_projections import FlatEinsumDense


def test_built_encoder_uses_flat_projections_and_electra_dropout():
    encoder = ElectraEncoder(embedding_size=8, hidden_size=16, num_layers=2, num_heads=2, intermediate_size=32)
    encoder.build((None, None, 8))
    sublayers = list(encoder._flatten_layers(include_self=False))
    assert sum(type(layer) is FlatEinsumDense for layer in sublayers) == 2 * 4
    assert not [layer for layer in sublayers if type(layer) in (keras.layers.EinsumDense, keras.layers.Dropout)]
    assert sum(type(layer) is ElectraDropout for layer in sublayers) == 2 * 3
    assert [variable.path.split("/")[-1] for variable in encoder.transformer_layer_0._self_attention_layer.weights] \
        == ["kernel", "bias"] * 4
