import json

from electra_tf.training.callbacks import truncate_metrics_log


def test_truncate_keeps_one_consistent_history(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": s, "loss": 1.0 / s}) for s in (1, 100, 200, 300)]
    path.write_text("\n".join(lines) + "\n" + '{"step": 40', encoding="utf-8")  # torn last line from a crash
    truncate_metrics_log(str(path), 200)
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 100, 200]
    truncate_metrics_log(str(tmp_path / "absent.jsonl"), 5)  # nothing to do, no error
    assert not (tmp_path / "absent.jsonl").exists()
