"""`python -m finetune.commands.squad_eval`: the official scripts' JSON for v1.1 and v2.0 (version from the data
file), one-line errors; and the dev evaluation path on a real dev slice writing the official files it scores."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from finetune.squad_eval import evaluate_files
from tests.conftest import REPO_ROOT
from tests.finetune.squad import official_eval
from tests.finetune.squad.squad_v2_data import make_v2


def _eval(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "finetune.commands.squad_eval", *map(str, args)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def dev_slice(shared_data, tmp_path_factory):
    """The first two articles of dev 1.1, and a v2.0 file derived from them."""
    directory = tmp_path_factory.mktemp("squad_eval")
    dev = json.loads((shared_data / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    dev["data"] = dev["data"][:2]
    (directory / "dev-v1.1.json").write_text(json.dumps(dev))
    (directory / "dev-v2.0.json").write_text(json.dumps(make_v2(dev, seed=3)))
    return directory


def _predictions(dataset, seed):
    rng = np.random.default_rng(seed)
    predictions = {}
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = qa["answers"] or qa["plausible_answers"]
                predictions[qa["id"]] = "" if rng.random() < 0.3 else answers[0]["text"][: int(rng.integers(1, 20))]
    return predictions


def test_v1_prints_the_official_object(dev_slice, tmp_path):
    dataset = json.loads((dev_slice / "dev-v1.1.json").read_text())
    predictions = _predictions(dataset, 0)
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    result = _eval(dev_slice / "dev-v1.1.json", tmp_path / "p.json")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert list(printed) == ["exact_match", "f1"]
    assert printed == pytest.approx(official_eval.v1_evaluate(dataset["data"], predictions))


def test_v2_with_null_odds_prints_the_official_object(dev_slice, tmp_path):
    dataset = json.loads((dev_slice / "dev-v2.0.json").read_text())
    predictions = _predictions(dataset, 1)
    rng = np.random.default_rng(2)
    na_probs = {qid: float(rng.random()) for qid in predictions}
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    (tmp_path / "na.json").write_text(json.dumps(na_probs))
    result = _eval(dev_slice / "dev-v2.0.json", tmp_path / "p.json", f"--na_prob_file={tmp_path / 'na.json'}")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    official = official_eval.v2_main(dataset["data"], predictions, na_probs)
    assert list(printed) == list(official)
    assert printed == pytest.approx(dict(official))
    without = json.loads(_eval(dev_slice / "dev-v2.0.json", tmp_path / "p.json").stdout)
    assert "best_f1" not in without and without["total"] == len(predictions)


def test_predictions_of_the_first_questions_only_are_scored_against_those(dev_slice, tmp_path, capsys):
    from finetune.squad.readers import restrict_dataset_json

    dataset = json.loads((dev_slice / "dev-v1.1.json").read_text())
    every = _predictions(dataset, 4)
    ids = list(every)
    first = {qid: every[qid] for qid in ids[:30]}
    (tmp_path / "first.json").write_text(json.dumps(first))
    result = _eval(dev_slice / "dev-v1.1.json", tmp_path / "first.json")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"{tmp_path / 'first.json'} answers the first 30 of the {len(ids)} questions of {dev_slice / 'dev-v1.1.json'} "
        "(a run with --max_eval_examples=30): scoring those 30"
    ]
    assert json.loads(result.stdout) == pytest.approx(
        official_eval.v1_evaluate(restrict_dataset_json(dataset, ids[:30])["data"], first)
    )

    # The library says nothing itself: it tells its caller how many questions it scored.
    heard = []
    scored = evaluate_files(
        str(dev_slice / "dev-v1.1.json"), str(tmp_path / "first.json"), on_first_questions=lambda *n: heard.append(n)
    )
    assert heard == [(30, len(ids))] and capsys.readouterr().err == ""
    assert scored == pytest.approx(json.loads(result.stdout))

    # A question missing among the answered ones: the whole file is scored, the missing one as 0 (official).
    gap = {qid: text for qid, text in every.items() if qid != ids[5]}
    (tmp_path / "gap.json").write_text(json.dumps(gap))
    result = _eval(dev_slice / "dev-v1.1.json", tmp_path / "gap.json")
    assert result.stderr.splitlines() == [f"Unanswered question {ids[5]} will receive score 0."]
    assert json.loads(result.stdout) == pytest.approx(official_eval.v1_evaluate(dataset["data"], gap))


@pytest.mark.parametrize(
    "args, message",
    [
        (["{dir}/missing.json", "{tmp}/p.json"], "missing.json does not exist"),
        (["{dir}/dev-v1.1.json", "{tmp}/bad.json"], "is not valid JSON"),
    ],
)
def test_errors_are_one_line(dev_slice, tmp_path, args, message):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "p.json").write_text("{}")
    result = _eval(*[arg.format(dir=dev_slice, tmp=tmp_path) for arg in args])
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_dev_evaluation_path_on_real_text_writes_scorable_files(shared_data, dev_slice, tmp_path):
    """A (random) tiny model with the BERT vocabulary answers a real dev 2.0 slice at full length 512: windows,
    joint-head beam, post-processing and the official files, which the CLI then scores."""
    import dataclasses

    from electra_tf.config import PRESETS
    from electra_tf.models import build_discriminator
    from electra_tf.tokenizer import ElectraTokenizer
    from finetune.models.squad_model import ElectraSquadModel
    from finetune.squad.features import featurize
    from finetune.squad.postprocess import postprocess
    from finetune.squad.readers import read_squad_json, restrict_dataset_json
    from finetune.squad.task import span_candidates

    tokenizer = ElectraTokenizer(str(shared_data / "vocab" / "bert-uncased-vocab.txt"))
    data = read_squad_json(str(dev_slice / "dev-v2.0.json")).sliced(24)
    features = featurize(data, tokenizer)
    config = dataclasses.replace(PRESETS["tiny"], vocab_size=tokenizer.vocab_size)
    model = ElectraSquadModel(build_discriminator(config).backbone, head="joint", version_2=True)
    answers = postprocess(data, features, span_candidates(model, features, batch_size=16))
    answers.write(str(tmp_path / "out"))
    assert set(answers.predictions) == {q.qas_id for q in data.questions}
    full = json.loads((dev_slice / "dev-v2.0.json").read_text())
    (tmp_path / "slice.json").write_text(json.dumps(restrict_dataset_json(full, list(answers.predictions))))
    result = _eval(
        tmp_path / "slice.json",
        tmp_path / "out" / "predictions.json",
        f"--na_prob_file={tmp_path / 'out' / 'null_odds.json'}",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total"] == 24
