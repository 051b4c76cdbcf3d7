"""GLUE fine-tuning: task specs, TSV/tfds readers, feature encoding, metrics, predictions files and `task.GlueTask`.

Only `task.GlueTask.build_model` builds a Keras model. Importing these modules does not import TensorFlow;
`readers.read_tfds` imports tensorflow-datasets and `features.features_to_dataset` TensorFlow when called.
"""
