import json
import os
import subprocess
import sys

import numpy as np

from electra_tf.config import ElectraConfig
from electra_tf.export import export_discriminator
from electra_tf.models import backbone_inputs, build_discriminator
from electra_tf.tokenizer import ElectraTokenizer
from tests.serving_session import run_like_tf_serving

_FRESH_PROCESS = """
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops of the raw-text signature)
model = tf.saved_model.load(sys.argv[1])
ids = np.array(json.loads(sys.argv[2]), np.int32)
by_ids = model.signatures["serving_default"](input_ids=tf.constant(ids), input_mask=tf.constant((ids > 0).astype(np.int32)),
                                             segment_ids=tf.zeros_like(tf.constant(ids)))
by_text = model.signatures["serve_text"](tf.constant(json.loads(sys.argv[3])))
print(json.dumps({"ids_logits": by_ids["logits"].numpy().tolist(), "text_logits": by_text["logits"].numpy().tolist(),
                  "text_ids": by_text["input_ids"].numpy().tolist()}))
"""


def test_saved_model_in_a_fresh_process_matches_keras(pretraining_data, tmp_path):
    _, vocab = pretraining_data
    tokenizer = ElectraTokenizer(vocab)
    model = build_discriminator(ElectraConfig.from_preset("tiny", vocab_size=tokenizer.vocab_size, pad_id=0,
                                                           unk_id=1, cls_id=2, sep_id=3, mask_id=4))
    export_dir = str(tmp_path / "export" / "1")
    export_discriminator(model, tokenizer, export_dir, max_seq_length=16)
    texts = ["w1 w2 w3", "w7 w9 w1 w100 w2 w3"]
    ids = [[2, 6, 7, 8, 3, 0, 0, 0], [2, 12, 14, 6, 105, 7, 8, 3]]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-c", _FRESH_PROCESS, export_dir, json.dumps(ids), json.dumps(texts)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])

    ids = np.array(ids, np.int32)
    keras_logits = model(backbone_inputs({"input_ids": ids, "input_mask": (ids > 0).astype(np.int32),
                          "segment_ids": np.zeros_like(ids)})).numpy()
    np.testing.assert_allclose(served["ids_logits"], keras_logits, atol=1e-5)
    text_ids = np.array(served["text_ids"])
    assert text_ids.shape == (2, 16) and text_ids[:, :8].tolist() == ids.tolist()  # in-graph tokenisation
    keras_text_logits = model(backbone_inputs({"input_ids": text_ids, "input_mask": (text_ids > 0).astype(np.int32),
                               "segment_ids": np.zeros_like(text_ids)})).numpy()
    np.testing.assert_allclose(served["text_logits"], keras_text_logits, atol=1e-5)

    listing = subprocess.run([os.path.join(os.path.dirname(sys.executable), "saved_model_cli"), "show", "--dir",
                              export_dir, "--all"], capture_output=True, text=True, env=env, timeout=300)
    assert "signature_def['serving_default']" in listing.stdout and "signature_def['serve_text']" in listing.stdout

    # TF Serving loads with the TF1 session loader, which must find the variables restored (regression test).
    by_session = run_like_tf_serving(export_dir, "serve_text", {"texts": texts})
    np.testing.assert_allclose(by_session["logits"], served["text_logits"], atol=1e-5)
