"""GLUE fine-tuning data: task registry, TSV/tfds readers, feature encoding, metrics and predictions files.

Model-independent: nothing here builds a Keras model. Importing these modules does not import TensorFlow;
`readers.read_tfds` imports tensorflow-datasets and `features.features_to_dataset` TensorFlow when called.
"""
