"""electra-rerank end to end: a real run on LibriSpeech n-best lists with a tiny pre-training run, its summary
recomputed from utterances.jsonl, and the JSON-lines format with the recogniser's scores."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from electra_studies.rerank.rerank import run_rerank
from tests.command_output import unexpected_lines, users_environment
from tests.conftest import REPO_ROOT
from tests.electra_studies.rerank.test_wer import edit_distance

UTTERANCES = 6


def wer(errors, words):
    return None if sum(words) == 0 else 100.0 * sum(errors) / sum(words)


def recomputed_summary(records):
    """The WERs of summary.json, from the records alone (the edit distance of the tests, not the module's)."""
    errors, words = [], []
    for record in records:
        reference = record["reference"].lower().split()
        errors.append([edit_distance(reference, text.lower().split()) for text in record["hypotheses"]])
        words.append(len(reference))
    test = [index for index, record in enumerate(records) if record["index"] % 2 == 1]
    first = [row[0] for row in errors]
    oracle = [min(row) for row in errors]
    summary = {
        "utterances": len(records),
        "wer_first": wer(first, words),
        "wer_oracle": wer(oracle, words),
        "wer_first_test": wer([first[i] for i in test], [words[i] for i in test]),
        "wer_oracle_test": wer([oracle[i] for i in test], [words[i] for i in test]),
        "wer_reranked": {},
        "wer_reranked_test": {},
        "wer_scorer_alone": {},
        "wer_scorer_alone_test": {},
    }
    for name in records[0]["chosen"]:
        picked = [row[record["chosen"][name]] for row, record in zip(errors, records)]
        summary["wer_reranked"][name] = wer(picked, words)
        summary["wer_reranked_test"][name] = wer([picked[i] for i in test], [words[i] for i in test])
        # The scorer's best hypothesis, the recogniser's earlier one on a tie.
        alone = [row[record["scores"][name].index(max(record["scores"][name]))] for row, record in zip(errors, records)]
        summary["wer_scorer_alone"][name] = wer(alone, words)
        summary["wer_scorer_alone_test"][name] = wer([alone[i] for i in test], [words[i] for i in test])
    return summary


def assert_same_summary(summary, recomputed):
    for key, value in recomputed.items():  # approx compares flat dicts, not nested ones
        assert summary[key] == pytest.approx(value), key


def rechosen(record, name, weights):
    """The hypothesis the combination picks, by the documented formula (ties: the earlier one)."""
    evidence = record["recogniser_scores"] or [-rank for rank in range(len(record["hypotheses"]))]
    combined = [
        weights["lm_weight"] * score + value + weights["length_weight"] * len(text.split())
        for score, value, text in zip(record["scores"][name], evidence, record["hypotheses"])
    ]
    return combined.index(max(combined))


def test_command_reranks_librispeech_lists_and_the_summary_follows_from_the_utterances(
    shared_data, pretrained_tiny, tmp_path
):
    nbest = shared_data / "asr_nbest" / "test_ls_clean.json"
    if not nbest.is_file():
        pytest.skip(f"{nbest} not present")
    run_dir = os.path.dirname(pretrained_tiny)  # the run directory holds the generator as well
    output = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "electra_studies.commands.rerank",
            f"--nbest={nbest}",
            f"--init_checkpoint={run_dir}",
            f"--output_dir={output}",
            f"--max_utterances={UTTERANCES}",
            "--bootstrap_resamples=100",
            "--max_seq_length=32",
        ],
        cwd=REPO_ROOT,
        env=users_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert unexpected_lines(result.stderr) == [], result.stderr[-3000:]  # a normal run, in a user's environment
    summary = json.loads((output / "summary.json").read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (output / "utterances.jsonl").read_text(encoding="utf-8").splitlines()]
    assert summary["scorers"] == ["disc_mean", "disc_sum", "pll"]
    assert set(summary["skipped"]) == {"electric"} or "electric" in summary["scorers"]
    assert [record["index"] for record in records] == list(range(UTTERANCES))
    expected = json.loads(nbest.read_text(encoding="utf-8"))[:UTTERANCES]
    assert [record["hypotheses"] for record in records] == [item["input"] for item in expected]
    assert [record["reference"] for record in records] == [item["output"] for item in expected]
    recomputed = recomputed_summary(records)
    assert_same_summary(summary, recomputed)
    # The length-only baseline: the documented combination with no scorer (lm_weight 0).
    length_only = [
        rechosen(
            {**record, "scores": {"none": [0.0] * len(record["hypotheses"])}},
            "none",
            {"lm_weight": 0.0, "length_weight": summary["weights_length_only"]["length_weight"]},
        )
        for record in records
    ]
    errors = [
        edit_distance(record["reference"].split(), record["hypotheses"][chosen].split())
        for record, chosen in zip(records, length_only)
    ]
    assert summary["wer_length_only"] == pytest.approx(wer(errors, [len(r["reference"].split()) for r in records]))
    for record in records:
        for name in summary["scorers"]:
            assert record["chosen"][name] == rechosen(record, name, summary["weights"][name])
        # A hypothesis repeated in a list has one score per scorer.
        for values in record["scores"].values():
            by_text = {}
            for text, value in zip(record["hypotheses"], values):
                assert by_text.setdefault(text, value) == value
    for name in summary["scorers"]:
        assert summary["cost"][name]["distinct_hypotheses"] == len(
            {text for record in records for text in record["hypotheses"]}
        )
        for intervals in ("bootstrap_test", "bootstrap_test_vs_length_only"):
            interval = summary[intervals][name]
            assert interval["low"] <= interval["difference"] <= interval["high"]
    assert summary["cost"]["disc_mean"]["forward_passes_per_hypothesis"] == 1.0
    assert summary["cost"]["pll"]["forward_passes_per_hypothesis"] > 5  # one per word piece
    assert summary["nbest"] == str(nbest) and summary["init_checkpoint"] == run_dir
    assert "first" in result.stdout and "oracle" in result.stdout


def test_json_lines_with_scores_and_a_missing_reference(pretrained_tiny, tmp_path):
    lines = [
        {
            "hypotheses": ["w1 w2 w3", "w1 w2", "w1 w2 w3"],
            "scores": [-1.0, -0.5, -2.0],
            "reference": "w1 w2 w3",
            "id": "a",
        },
        {"hypotheses": ["w4 w5", "w4 w6"], "reference": "w4 w6"},
        {"hypotheses": ["w7"]},
        {"hypotheses": ["w8 w9", "w8"], "scores": [0.0, 3.0], "reference": "w8 w9"},
    ]
    nbest = tmp_path / "lists.jsonl"
    nbest.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("W1, w2 w3.\nw4 w5 w6\n", encoding="utf-8")
    summary = run_rerank(
        str(nbest),
        pretrained_tiny,
        str(tmp_path / "out"),
        ["disc_sum"],
        max_seq_length=16,
        bootstrap_resamples=50,
        overlap_corpus=str(corpus),
        overlap_min_words=2,
    )
    records = [json.loads(line) for line in (tmp_path / "out" / "utterances.jsonl").read_text().splitlines()]
    assert summary["format"] == "jsonl" and summary["scorers"] == ["disc_sum"]
    assert summary["utterances"] == 4 and summary["utterances_with_reference"] == 3
    assert summary["recogniser_evidence"] == ["file_scores", "negated_rank"]
    assert [record["split"] for record in records] == ["development", "test"] * 2
    assert records[0]["id"] == "a" and "id" not in records[1] and records[2]["reference"] is None
    # The file's scores are the evidence: with the LM off, the recogniser's best is chosen, not the first.
    assert rechosen(records[0], "disc_sum", {"lm_weight": 0.0, "length_weight": 0.0}) == 1
    assert summary["wer_first"] == pytest.approx(100.0 * 1 / 7)  # utterance 1's first has 1 error; 2 has no ref
    assert summary["wer_oracle"] == 0.0
    recomputed = recomputed_summary([record for record in records if record["reference"] is not None])
    assert summary["wer_first_test"] == pytest.approx(recomputed["wer_first_test"])
    for record in records:
        assert record["chosen"]["disc_sum"] == rechosen(record, "disc_sum", summary["weights"]["disc_sum"])
    assert np.isfinite(summary["cost"]["disc_sum"]["seconds_per_hypothesis"])
    assert summary["overlap"]["files"][str(corpus)] == {
        "checked": 3,
        "found": 1,
        "fraction": 1 / 3,
        "examples": ["w1 w2 w3"],
    }
    with pytest.raises(Exception, match="scorers=pll needs the checkpoint's generator"):
        run_rerank(str(nbest), pretrained_tiny, str(tmp_path / "pll"), ["pll"])
    assert not (tmp_path / "pll").exists()
