"""The fine-tuning job in-process on a regression task (STS-B layout): squared error, scores, swap augmentation."""

import json

import numpy as np

from finetune.finetuning_job import FinetuningJob, run
from finetune.glue_eval import evaluate_predictions_file


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
            rows.append(f"{index}\tg\tf\t2012\t{index}\ts1\ts2\t{' '.join(words_a)}\t{' '.join(words_b)}\t"
                        f"{5.0 * shared / 5:.1f}")
        (task_dir / f"{split}.tsv").write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")


def test_regression_task_trains_with_swapped_pairs_and_writes_scores(pretrained_tiny, tmp_path):
    _write_stsb(tmp_path / "glue", np.random.default_rng(0))
    job = FinetuningJob(task="STS-B", init_checkpoint=pretrained_tiny, data_dir=str(tmp_path / "glue"),
                        output_dir=str(tmp_path / "out"), model_size="tiny", num_train_epochs=1, train_batch_size=16,
                        max_seq_length=16, progress_bar=False)
    results = run(job)
    assert results["num_train_examples"] == 96, "train doubled with (B, A) pairs"
    assert results["hyperparameters"]["num_train_epochs"] == 1
    metrics = results["trials"][0]["metrics"]["STS-B"]
    assert set(metrics) == {"pearson", "spearman"}
    lines = (tmp_path / "out" / "trial_0" / "dev_predictions.tsv").read_text().splitlines()
    assert len(lines) == 25 and all(np.isfinite(float(line.split("\t")[1])) for line in lines[1:])
    scored = evaluate_predictions_file("STS-B", str(tmp_path / "glue"),
                                       str(tmp_path / "out" / "trial_0" / "dev_predictions.tsv"))
    np.testing.assert_allclose(scored["pearson"], metrics["pearson"], rtol=1e-6)
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["summary"]["STS-B"]["spearman"]["values"] == [metrics["spearman"]]
    assert not (tmp_path / "out" / "trial_0" / "submission").exists(), "no test.tsv, no submission file"
