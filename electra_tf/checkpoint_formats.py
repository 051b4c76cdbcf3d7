"""The names of the checkpoint formats `electra_tf.checkpoints` reads and writes, importable without TensorFlow: the
entry points list them in their flags (`--init_checkpoint_format`, electra-convert's `--from_format`/`--to_format`)."""

# Ours, the reference's TF1 checkpoints, Hugging Face, keras-hub.
CHECKPOINT_FORMATS = ("ours", "tf1", "hf", "keras_hub")
