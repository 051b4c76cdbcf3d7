"""Studies of the pre-trained discriminator and of the paper's claims, built on the library (`electra_tf`), the data
builders (`data_prep`) and the fine-tuning package (`finetune`): the compute-matched comparison of pre-training
objectives (`compute_matched`), the discriminator as an instrument for error detection, calibration, part of speech,
disfluencies, BLiMP and its representations (`discriminator_analysis`), and the re-ranking of speech-recognition
n-best lists with its sentence scores (`rerank`). Each study's program is a module of `electra_studies.commands`; the
library packages never import this one."""

# First: importing electra_tf quiets TensorFlow before anything here loads it (electra_tf.native_logs).
import electra_tf  # noqa: F401
