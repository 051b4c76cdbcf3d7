"""One fine-tuning trial: a fresh classifier from the pre-trained encoder, trained, then its predictions written."""

import os

import keras
import numpy as np

from finetune.glue.features import features_to_dataset
from finetune.glue.metrics import score_key, task_metrics
from finetune.glue.predictions import write_predictions
from finetune.glue.tasks import get_task
from electra_tf.models import clone_backbone
from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor
from finetune.optimization import create_finetuning_optimizer, num_train_steps
from finetune.task_data import submission_file_name


def predict_labels(classifier, features, batch_size):
    """Class ids (argmax of the logits) or, for regression, the scores of `features`."""
    outputs = classifier.predict(features.inputs(), batch_size=batch_size, verbose=0)
    return outputs if classifier.regression else np.argmax(outputs, axis=-1)


def dev_predictions_name(split):
    return f"{split}_predictions.tsv"


def run_trial(job, trial, pretrained, data, hyperparameters, strategy):
    """Fine-tunes one model from `pretrained` with seed `job.seed + trial`; returns its dev metrics by eval key."""
    spec = get_task(job.task)
    seed = job.seed + trial
    trial_dir = os.path.join(job.output_dir, f"trial_{trial}")
    os.makedirs(trial_dir, exist_ok=True)
    keras.utils.set_random_seed(seed)
    batch_size = hyperparameters.train_batch_size
    train_steps = num_train_steps(len(data.train), batch_size, hyperparameters.num_train_epochs)
    with strategy.scope():
        classifier = ElectraTextClassifier(clone_backbone(pretrained.model.backbone), num_classes=spec.num_labels,
                                           regression=spec.is_regression)
        optimizer = create_finetuning_optimizer(
            classifier.num_layers, hyperparameters.learning_rate, train_steps,
            layerwise_lr_decay=hyperparameters.layerwise_lr_decay, layerwise_lr_variant=job.layerwise_lr_variant,
            warmup_fraction=job.warmup_fraction, weight_decay=job.weight_decay, epsilon=job.adam_epsilon,
            bias_correction=job.bias_correction)
        if spec.is_regression:
            loss, metrics = keras.losses.MeanSquaredError(), []
        else:
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            metrics = [keras.metrics.SparseCategoricalAccuracy("accuracy")]
        classifier.compile(optimizer=optimizer, loss=loss, metrics=metrics)
    dataset = features_to_dataset(data.train, batch_size, shuffle_seed=seed)
    print(f"trial {trial} (seed {seed}): {len(data.train)} train examples, {train_steps} steps", flush=True)
    classifier.fit(dataset, epochs=hyperparameters.num_train_epochs, shuffle=False,  # shuffled by the dataset
                   verbose=1 if job.progress_bar else 2)

    results = {}
    for split, features in data.dev.items():
        predictions = predict_labels(classifier, features, job.eval_batch_size)
        results[score_key(spec.name, split)] = task_metrics(spec.name, features.label_ids, predictions)
        write_predictions(os.path.join(trial_dir, dev_predictions_name(split)), predictions, spec.name)
    for split, features in data.test.items():
        predictions = predict_labels(classifier, features, job.eval_batch_size)
        write_predictions(os.path.join(trial_dir, "submission", submission_file_name(spec.name, split)),
                          predictions, spec.name)
    if job.save_models:
        classifier.preprocessor = ElectraTextClassifierPreprocessor(
            pretrained.vocab_file, max_seq_length=hyperparameters.max_seq_length, do_lower_case=job.do_lower_case)
        classifier.save(os.path.join(trial_dir, "model.keras"))
    return results
