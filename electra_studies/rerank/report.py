"""One Markdown table of many `electra-rerank` runs (`python -m electra_studies.commands.rerank_report --runs=DIR`).

DIR holds `<model>/<set>/summary.json` (one `electra-rerank` output directory per model and n-best file). The table
has a row per n-best file, model and scorer (`wer_table`). A second table gives each scorer's cost.
"""

import json
import os

SUMMARY = "summary.json"


def read_runs(runs_dir):
    """{model: {set: summary}} of every `<model>/<set>/summary.json` under `runs_dir`, in name order."""
    runs = {}
    for model in sorted(os.listdir(runs_dir)):
        model_dir = os.path.join(runs_dir, model)
        if not os.path.isdir(model_dir):
            continue
        for name in sorted(os.listdir(model_dir)):
            path = os.path.join(model_dir, name, SUMMARY)
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as file:
                    runs.setdefault(model, {})[name] = json.load(file)
    return runs


def _wer(value):
    return "–" if value is None else f"{value:.2f}"


def _interval(interval):
    return f"{interval['difference']:+.2f} [{interval['low']:+.2f}, {interval['high']:+.2f}]"


def wer_table(runs):
    """The Markdown WER table of `read_runs`' result, the test halves: per n-best file the first hypothesis, the
    oracle, the length-only baseline, then per model and scorer the re-ranked WER, its difference from the first
    hypothesis and from the length-only baseline (paired bootstrap 95 % intervals), and the scorer choosing alone."""
    columns = [(model, scorer) for model, sets in runs.items() for scorer in next(iter(sets.values()))["scorers"]]
    sets = sorted({name for model_sets in runs.values() for name in model_sets})
    header = [
        "n-best file",
        "model",
        "scorer",
        "utterances (test)",
        "first",
        "oracle",
        "length only",
        "re-ranked",
        "re-ranked - first",
        "re-ranked - length only",
        "scorer alone",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in sets:
        for model, scorer in columns:
            summary = runs[model].get(name)
            if summary is None:
                continue
            row = [
                name,
                model,
                scorer,
                str(summary["utterances_test"]),
                _wer(summary["wer_first_test"]),
                _wer(summary["wer_oracle_test"]),
                _wer(summary.get("wer_length_only_test")),
                _wer(summary["wer_reranked_test"][scorer]),
                _interval(summary["bootstrap_test"][scorer]),
                _interval(summary["bootstrap_test_vs_length_only"][scorer])
                if "bootstrap_test_vs_length_only" in summary
                else "–",
                _wer(summary.get("wer_scorer_alone_test", {}).get(scorer)),
            ]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def cost_table(runs):
    """Per model and scorer: forward passes and milliseconds per distinct hypothesis, over every file."""
    lines = [
        "| model | scorer | hypotheses | forward passes per hypothesis | ms per hypothesis |",
        "|---|---|---|---|---|",
    ]
    for model, sets in runs.items():
        for scorer in next(iter(sets.values()))["scorers"]:
            costs = [summary["cost"][scorer] for summary in sets.values()]
            hypotheses = sum(cost["distinct_hypotheses"] for cost in costs)
            passes = sum(cost["forward_passes_per_hypothesis"] * cost["distinct_hypotheses"] for cost in costs)
            seconds = sum(cost["seconds"] for cost in costs)
            lines.append(
                f"| {model} | {scorer} | {hypotheses} | {passes / hypotheses:.2f} | {1000 * seconds / hypotheses:.2f} |"
            )
    return "\n".join(lines)
