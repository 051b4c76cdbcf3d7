"""bench/int8_accuracy.py: a dev set scored from each exported file."""

import pytest

from tests.bench.bench_runs import run_here


@pytest.mark.benchmark  # three exported files scored: see tests/bench/test_pretrain_throughput.py
def test_int8_accuracy_scores_the_dev_set_from_each_file(shared_data, tmp_path, capsys):
    import csv

    import keras
    import numpy as np

    from electra_tf.config import ElectraConfig
    from electra_tf.models import build_discriminator
    from electra_tf.tokenizer import ElectraTokenizer
    from finetune.models import ElectraTextClassifier, ElectraTextClassifierPreprocessor

    tokenizer = ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))
    config = ElectraConfig.from_preset("tiny").with_vocab(len(tokenizer.vocab), pad_id=tokenizer.pad_id)
    keras.utils.set_random_seed(3)
    classifier = ElectraTextClassifier(
        build_discriminator(config).backbone,
        num_classes=2,
        preprocessor=ElectraTextClassifierPreprocessor.from_tokenizer(tokenizer, 16),
    )
    classifier.save(tmp_path / "model.keras")
    result = run_here(
        "int8_accuracy",
        capsys,
        f"--model={tmp_path / 'model.keras'}",
        "--task=SST-2",
        f"--glue_dir={shared_data / 'glue'}",
        "--max_seq_length=16",
        "--max_examples=24",
        "--runtimes=",
        "--no-keras_int8",
    )
    # The reference, computed here from raw text through the model's own preprocessor.
    with open(shared_data / "glue" / "SST-2" / "dev.tsv", encoding="utf-8") as file:
        rows = list(csv.reader(file, delimiter="\t", quoting=csv.QUOTE_NONE))[1:25]
    predicted = classifier.predict([row[0] for row in rows], verbose=0).argmax(-1)
    expected = 100.0 * float(np.mean(predicted == np.array([int(row[1]) for row in rows])))
    assert result["examples"] == 24 and set(result["paths"]) == {"saved_model_float32"}
    assert result["keras_float32"]["metrics"] == {"accuracy": pytest.approx(expected)}
    saved_model = result["paths"]["saved_model_float32"]
    assert saved_model["changed_predictions"] == 0 and saved_model["max_logit_difference"] < 1e-4
    assert saved_model["metrics"] == result["keras_float32"]["metrics"] and saved_model["mb"] > 0
