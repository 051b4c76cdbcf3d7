import json
import os
import subprocess
import sys

import numpy as np

from electra_tf.config import ElectraConfig
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.pretrained import save_pretrained
from electra_tf.scoring import score_texts
from electra_tf.tokenizer import ElectraTokenizer
from tests.conftest import REPO_ROOT


def _model(tokenizer):
    return ElectraDiscriminator(ElectraConfig.from_preset("tiny", vocab_size=tokenizer.vocab_size, pad_id=0, unk_id=1,
                                                          cls_id=2, sep_id=3, mask_id=4))


def test_scores_are_the_discriminator_probabilities(pretraining_data):
    tokenizer = ElectraTokenizer(pretraining_data[1])
    model = _model(tokenizer)
    results = score_texts(model, tokenizer, ["w1 w2 w3", "w4 " * 20], max_seq_length=8)
    logits = model({"input_ids": np.array([[2, 6, 7, 8, 3, 0, 0, 0]], np.int32),
                    "input_mask": np.array([[1, 1, 1, 1, 1, 0, 0, 0]], np.int32),
                    "segment_ids": np.zeros((1, 8), np.int32)}).numpy()[0, 1:4]
    first = results[0]
    assert first["tokens"] == ["w1", "w2", "w3"] and not first["truncated"]
    np.testing.assert_allclose(first["replaced_probability"], 1 / (1 + np.exp(-logits)), atol=1e-5)
    np.testing.assert_allclose(first["score"], np.mean(np.log(1 - 1 / (1 + np.exp(-logits)))), atol=1e-5)
    assert results[1]["truncated"] and len(results[1]["tokens"]) == 6


def test_cli_prints_json_lines_and_one_line_errors(pretraining_data, tmp_path):
    tokenizer = ElectraTokenizer(pretraining_data[1])
    save_pretrained(_model(tokenizer), str(tmp_path / "pretrained"), pretraining_data[1])
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, "-m", "electra_tf.score", f"--model_dir={tmp_path / 'pretrained'}"]
    result = subprocess.run(command + ["w1 w2", "w3"], capture_output=True, text=True, cwd=REPO_ROOT, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["text"] for line in lines] == ["w1 w2", "w3"]
    missing = subprocess.run([sys.executable, "-m", "electra_tf.score", f"--model_dir={tmp_path}", "w1"],
                             capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=300)
    assert missing.returncode == 2 and "vocab.txt is missing" in missing.stderr and "Traceback" not in missing.stderr
