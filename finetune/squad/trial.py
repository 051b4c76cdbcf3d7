"""One SQuAD fine-tuning trial: a fresh span model from the pre-trained encoder, trained, then the dev questions
answered, the official output files written and scored."""

import os

import keras
import numpy as np
import tensorflow as tf

from electra_tf.data.keras_input import keras_input_options
from finetune.optimization import create_finetuning_optimizer, num_train_steps
from finetune.squad.metrics import evaluate_v1, evaluate_v2
from electra_tf.models import clone_backbone
from finetune.squad.model import ElectraSquadModel
from finetune.squad.postprocess import beam_pairs, postprocess, top_k_pairs


def training_dataset(model, features, batch_size, shuffle_seed):
    """(inputs, labels) batches; the joint head also sees the gold starts as an input (teacher forcing)."""
    inputs = features.inputs()
    if model.uses_teacher_forcing:
        inputs = dict(inputs, start_positions=features.start_positions)
    dataset = tf.data.Dataset.from_tensor_slices((inputs, features.labels()))
    dataset = dataset.shuffle(len(features), seed=shuffle_seed).batch(batch_size)
    return dataset.with_options(keras_input_options())


def span_candidates(model, features, batch_size):
    """The model's candidate spans for every window of `features` (`postprocess.SpanCandidates`)."""
    outputs = model.predict(features.inputs(), batch_size=batch_size, verbose=0)
    if model.head_name == "simple":
        return top_k_pairs(outputs["start_logits"], outputs["end_logits"], k=model.beam_size)
    return beam_pairs(outputs["start_top_log_probs"], outputs["start_top_index"], outputs["end_top_log_probs"],
                      outputs["end_top_index"], outputs.get("impossible_logits"))


def score(dev_json, answers, version):
    """The official evaluation dict of `answers` (a `SquadPredictions`)."""
    if version == "1.1":
        return evaluate_v1(dev_json, answers.predictions)
    return evaluate_v2(dev_json, answers.predictions, answers.null_odds)


def run_squad_trial(job, trial, pretrained, data, hyperparameters, strategy):
    """Fine-tunes one model with seed `job.seed + trial`; writes trial_<k>/{predictions,nbest_predictions,
    null_odds}.json and returns {eval key: official metrics} plus the training losses per epoch."""
    seed = job.seed + trial
    trial_dir = os.path.join(job.output_dir, f"trial_{trial}")
    keras.utils.set_random_seed(seed)
    batch_size = hyperparameters.train_batch_size
    train_steps = num_train_steps(len(data.train_features), batch_size, hyperparameters.num_train_epochs)
    with strategy.scope():
        model = ElectraSquadModel(clone_backbone(pretrained.model.backbone), head=job.squad_head,
                                                     version_2=data.version == "2.0", beam_size=job.n_best_size)
        model.compile(optimizer=create_finetuning_optimizer(
            model.num_layers, hyperparameters.learning_rate, train_steps,
            layerwise_lr_decay=hyperparameters.layerwise_lr_decay, layerwise_lr_variant=job.layerwise_lr_variant,
            warmup_fraction=job.warmup_fraction, weight_decay=job.weight_decay, epsilon=job.adam_epsilon,
            bias_correction=job.bias_correction))
    print(f"trial {trial} (seed {seed}): {len(data.train.questions)} questions in {len(data.train_features)} "
          f"windows, {train_steps} steps", flush=True)
    history = model.fit(training_dataset(model, data.train_features, batch_size, seed),
                        epochs=hyperparameters.num_train_epochs, shuffle=False, verbose=1 if job.progress_bar else 2)

    candidates = span_candidates(model, data.dev_features, job.eval_batch_size)
    answers = postprocess(data.dev, data.dev_features, candidates, n_best_size=job.n_best_size,
                          max_answer_length=job.max_answer_length, null_score_threshold=job.null_score_threshold)
    answers.write(trial_dir)
    if job.save_models:
        model.save(os.path.join(trial_dir, "model.keras"))
    metrics = {f"SQuAD{data.version}": score(data.dev_json, answers, data.version)}
    return metrics, [float(value) for value in np.asarray(history.history["loss"])]
