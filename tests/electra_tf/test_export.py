import dataclasses
import os
import subprocess
import sys

import numpy as np

from electra_tf.config import ElectraConfig
from electra_tf.export import export_discriminator
from electra_tf.models import backbone_inputs, build_discriminator
from electra_tf.tokenizer import ElectraTokenizer
from tests.serving_session import serve_in_fresh_process


def test_saved_model_in_a_fresh_process_matches_keras(pretraining_data, tmp_path):
    _, vocab = pretraining_data
    tokenizer = ElectraTokenizer(vocab)
    model = build_discriminator(
        ElectraConfig.from_preset(
            "tiny", vocab_size=tokenizer.vocab_size, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4
        )
    )
    export_dir = str(tmp_path / "export" / "1")
    export_discriminator(model, tokenizer, export_dir, max_seq_length=16)
    texts = ["w1 w2 w3", "w7 w9 w1 w100 w2 w3"]
    ids = np.array([[2, 6, 7, 8, 3, 0, 0, 0], [2, 12, 14, 6, 105, 7, 8, 3]], np.int32)
    features = {"input_ids": ids, "input_mask": (ids > 0).astype(np.int32), "segment_ids": np.zeros_like(ids)}
    # TF Serving loads with the TF1 session loader, which must find the variables restored (regression test).
    by_ids, by_text, by_session = serve_in_fresh_process(
        export_dir,
        [
            ("saved_model", "serving_default", {name: value.tolist() for name, value in features.items()}),
            ("saved_model", "serve_text", {"texts": texts}),
            ("session", "serve_text", {"texts": texts}),
        ],
    )

    keras_logits = model(backbone_inputs(features)).numpy()
    np.testing.assert_allclose(by_ids["logits"], keras_logits, atol=1e-5)
    text_ids = np.array(by_text["input_ids"])
    assert text_ids.shape == (2, 16) and text_ids[:, :8].tolist() == ids.tolist()  # in-graph tokenisation
    keras_text_logits = model(
        backbone_inputs(
            {
                "input_ids": text_ids,
                "input_mask": (text_ids > 0).astype(np.int32),
                "segment_ids": np.zeros_like(text_ids),
            }
        )
    ).numpy()
    np.testing.assert_allclose(by_text["logits"], keras_text_logits, atol=1e-5)

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    listing = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "saved_model_cli"), "show", "--dir", export_dir, "--all"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert "signature_def['serving_default']" in listing.stdout and "signature_def['serve_text']" in listing.stdout
    np.testing.assert_allclose(by_session["logits"], by_text["logits"], atol=1e-5)


def test_an_alibi_model_exports_with_its_attention_bias(pretraining_data, tmp_path):
    import tensorflow as tf

    _, vocab = pretraining_data
    tokenizer = ElectraTokenizer(vocab)
    config = ElectraConfig.from_preset(
        "tiny", vocab_size=tokenizer.vocab_size, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4, alibi=True
    )
    model = build_discriminator(config)
    export_dir = str(tmp_path / "export" / "1")
    export_discriminator(model, tokenizer, export_dir, max_seq_length=16)
    ids = np.array([[2, 6, 7, 8, 3, 0, 0, 0], [2, 12, 14, 6, 105, 7, 8, 3]], np.int32)
    features = {"input_ids": ids, "input_mask": (ids > 0).astype(np.int32), "segment_ids": np.zeros_like(ids)}
    served = tf.saved_model.load(export_dir).signatures["serving_default"](
        **{name: tf.constant(value) for name, value in features.items()}
    )
    keras_logits = model(backbone_inputs(features)).numpy()
    np.testing.assert_allclose(served["logits"].numpy(), keras_logits, atol=1e-5)
    # The same weights without the bias give other logits: the export computed the bias, not only the weights.
    plain = build_discriminator(dataclasses.replace(config, alibi=False))
    plain.set_weights(model.get_weights())
    assert np.abs(plain(backbone_inputs(features)).numpy() - keras_logits).max() > 1e-4
