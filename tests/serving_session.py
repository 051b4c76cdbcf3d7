"""Serve SavedModel signatures in a fresh process that imports only tensorflow and tensorflow-text, fed JSON "inputs"
as a REST request's: the way TF Serving does (the TF1 session loader: restore op + signature tensor names) and the
way a TensorFlow 2 client does (`tf.saved_model.load`). One process serves all the requests of a test."""

import json
import os
import subprocess
import sys

_SCRIPT = """
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops of the raw-text signature)
export_dir, requests = sys.argv[1], json.loads(sys.argv[2])


def by_session(signature_name, inputs):
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        signature = tf.compat.v1.saved_model.load(session, ["serve"], export_dir).signature_def[signature_name]
        dtypes = {name: tf.dtypes.as_dtype(info.dtype).as_numpy_dtype for name, info in signature.inputs.items()}
        feed = {signature.inputs[name].name: np.array(value, dtypes[name]) for name, value in inputs.items()}
        return session.run({name: info.name for name, info in signature.outputs.items()}, feed)


def by_saved_model(signature_name, inputs):
    function = tf.saved_model.load(export_dir).signatures[signature_name]
    dtypes = {name: spec.dtype for name, spec in function.structured_input_signature[1].items()}
    return {name: value.numpy() for name, value in function(**{name: tf.constant(value, dtypes[name])
                                                                for name, value in inputs.items()}).items()}


loaders = {"session": by_session, "saved_model": by_saved_model}
served = [loaders[loader](signature_name, inputs) for loader, signature_name, inputs in requests]
# String outputs (TF Serving's REST API returns them as text) come back as bytes.
print(json.dumps([{name: value.tolist() for name, value in outputs.items()} for outputs in served],
                 default=lambda value: value.decode("utf-8")))
"""


def serve_in_fresh_process(export_dir, requests):
    """[{output name: nested list}] of each request (loader, signature name, {input name: nested list}); loader
    "session" loads as TF Serving does, "saved_model" with `tf.saved_model.load`."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, export_dir, json.dumps(requests)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_like_tf_serving(export_dir, signature_name, inputs):
    """{output name: nested list} of `signature_name` on `inputs` under TF Serving's loader."""
    return serve_in_fresh_process(export_dir, [("session", signature_name, inputs)])[0]
