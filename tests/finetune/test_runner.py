"""The fine-tuning runner in-process: a regression task (STS-B layout) with squared error, scores and swap
augmentation; job validation in Python terms."""

import dataclasses
import json

import numpy as np
import pytest

from electra_tf.errors import CheckpointError, ConfigError, DataError
from finetune import runner
from finetune.finetuning_spec import FinetuningJob
from finetune.glue_eval import evaluate_predictions_file
from finetune.runner import run


def _write_stsb(glue_dir, rng):
    """STS-B files (10 columns, score last) whose score is 5 x the share of B's words that occur in A."""
    task_dir = glue_dir / "STS-B"
    task_dir.mkdir(parents=True)
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    for split, count in (("train", 48), ("dev", 24)):
        rows = []
        for index in range(count):
            words_a = [f"w{i}" for i in rng.choice(195, size=5, replace=False)]
            shared = int(rng.integers(0, 5))
            words_b = words_a[:shared] + [f"w{i}" for i in rng.choice(195, size=5 - shared)]
            rows.append(
                f"{index}\tg\tf\t2012\t{index}\ts1\ts2\t{' '.join(words_a)}\t{' '.join(words_b)}\t"
                f"{5.0 * shared / 5:.1f}"
            )
        (task_dir / f"{split}.tsv").write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")


def test_regression_task_trains_with_swapped_pairs_and_writes_scores(pretrained_tiny, tmp_path, capsys, monkeypatch):
    _write_stsb(tmp_path / "glue", np.random.default_rng(0))
    job = FinetuningJob(
        task="STS-B",
        init_checkpoint=pretrained_tiny,
        data_dir=str(tmp_path / "glue"),
        output_dir=str(tmp_path / "out"),
        model_size="tiny",
        num_train_epochs=1,
        train_batch_size=16,
        max_seq_length=16,
        progress_bar=False,
    )
    results = run(job)
    assert results["num_train_examples"] == 96, "train doubled with (B, A) pairs"
    assert results["hyperparameters"]["num_train_epochs"] == 1
    metrics = results["trials"][0]["metrics"]["STS-B"]
    assert set(metrics) == {"pearson", "spearman"}
    assert results["trials"][0]["seconds"] > 0
    lines = (tmp_path / "out" / "trial_0" / "dev_predictions.tsv").read_text().splitlines()
    assert len(lines) == 25 and all(np.isfinite(float(line.split("\t")[1])) for line in lines[1:])
    scored = evaluate_predictions_file(
        "STS-B", str(tmp_path / "glue"), str(tmp_path / "out" / "trial_0" / "dev_predictions.tsv")
    )
    np.testing.assert_allclose(scored["pearson"], metrics["pearson"], rtol=1e-6)
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["summary"]["STS-B"]["spearman"]["values"] == [metrics["spearman"]]
    assert saved["job"]["task"] == "STS-B" and saved["job"]["max_seq_length"] == 16 and saved["complete"] is True
    assert "doc_stride" not in saved["job"] and "squad_head" not in saved["job"], "SQuAD's options only in its runs"
    assert not (tmp_path / "out" / "trial_0" / "submission").exists(), "no test.tsv, no submission file"

    # Finished: the results are read back without training, for this job (settings that change nothing may differ;
    # a field the record predates counts as its default), not for another.
    assert runner.finished_results(job) == saved
    assert runner.finished_results(dataclasses.replace(job, progress_bar=True, model_size=None)) == saved
    assert runner.finished_results(dataclasses.replace(job, learning_rate=1e-3)) is None
    assert runner.finished_results(dataclasses.replace(job, output_dir=str(tmp_path / "elsewhere"))) is None
    older = {**saved, "job": {k: v for k, v in saved["job"].items() if k != "concurrent_micro_batches"}}
    (tmp_path / "out" / "results.json").write_text(json.dumps(older))
    assert runner.finished_results(job) == older
    assert runner.finished_results(dataclasses.replace(job, concurrent_micro_batches=2)) is None

    # The same job again: the finished trial is not trained again, its results are read back.
    logs = sorted((tmp_path / "out" / "trial_0" / "logs" / "train").iterdir())
    capsys.readouterr()
    again = run(job)
    assert again["trials"] == results["trials"]
    assert (
        f"trial 0: finished earlier, results from {tmp_path / 'out' / 'trial_0' / 'trial.json'}"
        in capsys.readouterr().out
    )
    assert sorted((tmp_path / "out" / "trial_0" / "logs" / "train").iterdir()) == logs, "no new TensorBoard events"
    with pytest.raises(
        ConfigError,
        match=f"^{tmp_path / 'out' / 'trial_0'} holds a trial made with other settings "
        r"\(learning_rate: .* -> 0.001, seed: .* -> 4\); use another output_dir, or "
        "the settings of that run to resume it$",
    ):
        run(dataclasses.replace(job, learning_rate=1e-3, seed=4, num_trials=2))

    # Two trials, the second interrupted: results.json holds the first and says the run is not complete.
    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_run_trial", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(dataclasses.replace(job, num_trials=2))
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["complete"] is False and saved["trials"] == json.loads(json.dumps(results["trials"]))
    assert runner.finished_results(dataclasses.replace(job, num_trials=2)) is None


def test_validation_errors_name_python_arguments(pretrained_tiny, tmp_path):
    def job(**fields):
        return FinetuningJob(
            **{
                "task": "SST-2",
                "init_checkpoint": pretrained_tiny,
                "data_dir": str(tmp_path),
                "output_dir": str(tmp_path / "out"),
                **fields,
            }
        )

    with pytest.raises(
        CheckpointError, match="^init_checkpoint=/nonexistent does not exist: pass a model directory"
    ) as raised:
        job(init_checkpoint="/nonexistent").validate()
    assert raised.value.arguments == ("init_checkpoint",)
    # A TF1 checkpoint prefix (the released electra_small/electra_small) is not itself a file, but it exists.
    (tmp_path / "model.ckpt.index").write_bytes(b"")
    for init_checkpoint in (str(tmp_path / "model.ckpt"), pretrained_tiny):
        with pytest.raises(DataError, match=r"SST-2/train\.tsv does not exist: pass data_dir=<directory") as raised:
            job(init_checkpoint=init_checkpoint).validate()
    assert raised.value.arguments == ("data_dir",)
    with pytest.raises(ConfigError, match="^unknown data_source='json'; choose one of tsv, tfds$"):
        job(data_source="json").validate()
    with pytest.raises(ConfigError, match="^num_trials must be positive, got 0$") as raised:
        job(data_source="tfds", num_trials=0).validate()
    assert raised.value.arguments == ("num_trials",)


def test_squad_options_are_validated_by_the_squad_task(pretrained_tiny, tmp_path):
    for name in ("train-v1.1.json", "dev-v1.1.json"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
    job = FinetuningJob(
        task="squadv1",
        init_checkpoint=pretrained_tiny,
        output_dir=str(tmp_path / "out"),
        data_dir=str(tmp_path),
        doc_stride=0,
    )
    with pytest.raises(ConfigError, match="^doc_stride must be positive, got 0$"):
        job.validate()
    job.doc_stride, job.squad_head = 128, "pointer"
    with pytest.raises(ConfigError, match="^unknown squad_head='pointer'; choose one of simple, joint$"):
        job.validate()
    job.squad_head, job.data_dir = "simple", str(tmp_path / "missing")
    with pytest.raises(DataError, match="train-v1.1.json does not exist: pass data_dir="):
        job.validate()


def test_a_lora_job_trains_the_factors_and_saves_merged_kernels(pretrained_tiny, tmp_path):
    import keras

    import finetune.models  # noqa: F401  (registers the saved model's classes)
    from finetune.models.pretrained_parts import load_pretrained

    _write_stsb(tmp_path / "glue", np.random.default_rng(1))
    job = FinetuningJob(
        task="STS-B",
        init_checkpoint=pretrained_tiny,
        data_dir=str(tmp_path / "glue"),
        output_dir=str(tmp_path / "out"),
        model_size="tiny",
        num_train_epochs=1,
        train_batch_size=16,
        max_seq_length=16,
        progress_bar=False,
        save_models=True,
        lora_rank=2,
        lora_alpha=4,
        learning_rate=1e-2,
    )
    results = run(job)
    assert results["job"]["lora_rank"] == 2 and results["job"]["lora_alpha"] == 4
    saved = keras.saving.load_model(str(tmp_path / "out" / "trial_0" / "model.keras"), compile=False)
    pretrained = {
        variable.path: variable.numpy() for variable in load_pretrained(pretrained_tiny).model.backbone.weights
    }
    adapted = set()
    for variable in saved.backbone.weights:
        assert "lora" not in variable.path, "saved with the factors merged"
        if not np.array_equal(variable.numpy(), pretrained[variable.path]):
            adapted.add(variable.path)
    # Only the query and value kernels moved (by the merged product); their biases, the rest and the embeddings
    # are the pre-trained weights.
    assert adapted == {f"transformer_layer_{i}/{name}/kernel" for i in range(2) for name in ("query", "value")}

    with pytest.raises(ConfigError, match=r"holds a trial made with other settings \(lora_rank: 2 -> 4\)"):
        run(dataclasses.replace(job, lora_rank=4))


def test_lora_settings_are_validated_in_python_terms(pretrained_tiny, tmp_path):
    (tmp_path / "STS-B").mkdir()
    for split in ("train", "dev"):
        (tmp_path / "STS-B" / f"{split}.tsv").write_text("header\n", encoding="utf-8")
    job = FinetuningJob(
        task="STS-B", init_checkpoint=pretrained_tiny, data_dir=str(tmp_path), output_dir=str(tmp_path / "out")
    )
    for fields, message, arguments in (
        ({"lora_rank": 0}, "^lora_rank must be a positive integer, got 0$", ("lora_rank",)),
        ({"lora_rank": 2.5}, "^lora_rank must be a positive integer, got 2.5$", ("lora_rank",)),
        (
            {"lora_alpha": 8.0},
            "^lora_alpha scales LoRA's weights: pass lora_rank=<rank> with it",
            ("lora_alpha", "lora_rank"),
        ),
        ({"lora_rank": 4, "lora_alpha": -1.0}, "^lora_alpha must be positive, got -1.0$", ("lora_alpha",)),
    ):
        with pytest.raises(ConfigError, match=message) as raised:
            dataclasses.replace(job, **fields).validate()
        assert raised.value.arguments == arguments
    dataclasses.replace(job, lora_rank=4, lora_alpha=8.0).validate()
