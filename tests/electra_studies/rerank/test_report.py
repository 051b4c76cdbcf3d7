"""The report of many electra-rerank runs: a row per n-best file, a column per model and scorer, and the costs
summed over the files."""

import json
import subprocess
import sys

from electra_studies.rerank.report import cost_table, read_runs, wer_table
from tests.conftest import REPO_ROOT


def _summary(first, reranked, alone, seconds):
    return {
        "scorers": ["pll"],
        "utterances_test": 3,
        "wer_first_test": first,
        "wer_oracle_test": 1.0,
        "wer_reranked_test": {"pll": reranked},
        "wer_scorer_alone_test": {"pll": alone},
        "wer_length_only_test": first - 0.5,
        "bootstrap_test": {"pll": {"difference": reranked - first, "low": -1.5, "high": 0.25}},
        "bootstrap_test_vs_length_only": {"pll": {"difference": reranked - first + 0.5, "low": -1.0, "high": 0.75}},
        "cost": {"pll": {"distinct_hypotheses": 10, "forward_passes_per_hypothesis": 4.0, "seconds": seconds}},
    }


def test_tables_hold_every_run(tmp_path):
    for model, name, summary in (
        ("mlm", "ls_clean", _summary(5.0, 4.0, 9.0, 1.0)),
        ("mlm", "wsj", _summary(6.0, 6.5, 8.0, 3.0)),
    ):
        (tmp_path / model / name).mkdir(parents=True)
        (tmp_path / model / name / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (tmp_path / "mlm" / "unfinished").mkdir()  # no summary.json: not a run
    runs = read_runs(tmp_path)
    assert list(runs["mlm"]) == ["ls_clean", "wsj"]
    rows = wer_table(runs).splitlines()
    assert rows[0] == (
        "| n-best file | model | scorer | utterances (test) | first | oracle | length only | "
        "re-ranked | re-ranked - first | re-ranked - length only | scorer alone |"
    )
    assert rows[2] == (
        "| ls_clean | mlm | pll | 3 | 5.00 | 1.00 | 4.50 | 4.00 | -1.00 [-1.50, +0.25] | -0.50 [-1.00, +0.75] | 9.00 |"
    )
    assert rows[3] == (
        "| wsj | mlm | pll | 3 | 6.00 | 1.00 | 5.50 | 6.50 | +0.50 [-1.50, +0.25] | +1.00 [-1.00, +0.75] | 8.00 |"
    )
    # 20 hypotheses, 4 passes each, 4 seconds in all.
    assert cost_table(runs).splitlines()[2] == "| mlm | pll | 20 | 4.00 | 200.00 |"


def test_the_program_prints_both_tables_or_says_what_the_directory_lacks(tmp_path):
    (tmp_path / "runs" / "electra" / "wsj").mkdir(parents=True)
    (tmp_path / "runs" / "electra" / "wsj" / "summary.json").write_text(json.dumps(_summary(6.0, 5.0, 7.0, 2.0)))
    (tmp_path / "empty").mkdir()
    printed = {}
    for name in ("runs", "empty"):
        printed[name] = subprocess.run(
            [sys.executable, "-m", "electra_studies.commands.rerank_report", f"--runs={tmp_path / name}"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    runs = read_runs(tmp_path / "runs")
    assert (printed["runs"].returncode, printed["runs"].stdout) == (0, f"{wer_table(runs)}\n\n{cost_table(runs)}\n")
    assert (printed["empty"].returncode, printed["empty"].stderr.splitlines()[-1]) == (
        1,
        f"--runs={tmp_path / 'empty'} holds no <model>/<set>/summary.json: pass the directory of electra-rerank "
        "outputs",
    )
