"""Run a SavedModel signature the way TF Serving does: the TF1 session loader (restore op + signature tensor names),
in a fresh process that imports only tensorflow and tensorflow-text, fed JSON "inputs" as a REST request's."""

import json
import os
import subprocess
import sys

_SCRIPT = """
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops of the raw-text signature)
tf.compat.v1.disable_eager_execution()
export_dir, signature_name, inputs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with tf.compat.v1.Session(graph=tf.Graph()) as session:
    signature = tf.compat.v1.saved_model.load(session, ["serve"], export_dir).signature_def[signature_name]
    dtypes = {name: tf.dtypes.as_dtype(info.dtype).as_numpy_dtype for name, info in signature.inputs.items()}
    feed = {signature.inputs[name].name: np.array(value, dtypes[name]) for name, value in inputs.items()}
    fetched = session.run({name: info.name for name, info in signature.outputs.items()}, feed)
# String outputs (TF Serving's REST API returns them as text) come back as bytes.
print(json.dumps({name: value.tolist() for name, value in fetched.items()},
                 default=lambda value: value.decode("utf-8")))
"""


def run_like_tf_serving(export_dir, signature_name, inputs):
    """{output name: nested list} of `signature_name` on `inputs` ({input name: nested list, as in REST "inputs"})."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-c", _SCRIPT, export_dir, signature_name, json.dumps(inputs)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
