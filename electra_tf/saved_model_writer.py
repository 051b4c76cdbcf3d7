"""A serving module saved as a SavedModel that TF Serving loads: the one writer every export goes through."""

import tensorflow as tf

from electra_tf.io_utils import staged_directory


def write_serving_model(module, output_dir, signatures):
    """Save `module` with `signatures` ({name: tf.function}) to `output_dir` atomically (staged, then renamed).

    The tf.Variables the signatures capture are tracked explicitly, as Keras's own `model.export` does: reached only
    through Keras 3 layers they are saved as other objects, and TF Serving's session loader (`saved_model_cli run`
    too) then finds the captured variables uninitialised ("Could not find variable ..."), while `tf.saved_model.load`
    still works.
    """
    captured = {}
    for function in signatures.values():
        for variable in function.get_concrete_function().variables:
            captured.setdefault(id(variable), variable)
    module.captured_variables = list(captured.values())
    with staged_directory(output_dir) as staging:
        tf.saved_model.save(module, staging, signatures=signatures)
    return output_dir
