"""The compute-matched experiment's tables and plots, on a synthetic results dict."""

import math
import os

from electra_studies.compute_matched import report
from tests.electra_studies.compute_matched.common import assert_png, table_rows


def _synthetic_results():
    def curve(flops_per_step, steps, names, every=5):
        return [
            dict(
                {"step": step, "flops": step * flops_per_step, "wall_seconds": 0.2 * step},
                **{name: 1.0 / (step + index) for index, name in enumerate(names)},
            )
            for step in range(1, steps + 1, every)
        ]

    def summary(scores):
        values = [value for value in scores.values() if value is not None]  # None: an undefined metric (NaN)
        median = sorted(values)[len(values) // 2]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return {"scores": scores, "median": median, "mean": mean, "std": std}

    def point(fraction, step, flops, scores, cola_scores):
        return {
            "fraction": fraction,
            "step": step,
            "flops": flops,
            "downstream": {"SST-2": summary(scores), "CoLA": summary(cola_scores)},
        }

    electra = {
        "steps": 40,
        "flops_per_step": 3.0,
        "total_flops": 120.0,
        "pretraining_seconds": 10,
        "finetuning_seconds": 20,
        "pretraining_curve": curve(3.0, 40, ["loss", "masked_lm_loss", "disc_loss", "disc_auc"]),
        "heldout_curve": curve(3.0, 40, ["loss", "masked_lm_accuracy", "disc_auc", "disc_recall"], every=10),
        "eval_points": [
            point(0.5, 20, 60.0, {"0": 60.0, "1": 62.0, "2": 61.0}, {"0": 1.0, "1": 2.0, "2": 3.0}),
            point(1.0, 40, 120.0, {"0": 70.0, "1": 71.0, "2": 69.0}, {"0": 4.0, "1": 5.0, "2": 6.0}),
        ],
    }
    mlm = {
        "steps": 60,
        "flops_per_step": 2.0,
        "total_flops": 120.0,
        "pretraining_curve": curve(2.0, 60, ["loss", "masked_lm_loss"]),
        "heldout_curve": curve(2.0, 60, ["loss", "masked_lm_accuracy"], every=10),
        "eval_points": [
            point(0.5, 30, 60.0, {"0": 58.0, "1": 57.0, "2": None}, {"0": 7.0, "1": 8.0, "2": 9.0}),
            point(1.0, 60, 120.0, {"0": 65.0, "1": 66.0, "2": 64.0}, {"0": 7.0, "1": 7.0, "2": 7.0}),
        ],
    }
    return {
        "settings": {"model_size": "tiny", "seeds": [0, 1, 2]},
        "tasks": {
            "SST-2": {"primary_metric": ["SST-2", "accuracy"], "num_train_examples": 100},
            "CoLA": {"primary_metric": ["CoLA", "mcc"], "num_train_examples": 50},
        },
        "budget_flops": 120.0,
        "budget_source": "--electra_steps=40",
        "heldout": {
            "files": ["/data/z-book.txt"],
            "tfrecords": "/out/data/heldout_tfrecords/*.tfrecord*",
            "num_examples": 300,
            "num_eval_steps": 20,
            "eval_batch_size": 32,
        },
        "command": "python -m electra_studies.commands.compute_matched --electra_steps=40",
        "machine": {"cpu_count": 2, "platform": "Linux", "tensorflow": "2.21.0", "keras": "3.15.1"},
        "wall_seconds": {"total": 600},
        "estimated_seconds": {"total": 700},
        "objectives": {"electra": electra, "mlm": mlm},
        "baseline": {
            "name": "random_init",
            "flops": 0,
            "downstream": {
                "SST-2": summary({"0": 50.0, "1": 51.0, "2": 52.0}),
                "CoLA": summary({"0": 0.0, "1": 0.0, "2": 0.0}),
            },
        },
    }


def test_markdown_table_on_synthetic_results():
    text = report.markdown_table(_synthetic_results())
    rows = table_rows(text, "## SST-2 dev accuracy (100 training examples)")
    assert set(rows) == {"objective", "electra", "mlm"}
    assert rows["electra"].startswith("| electra | 40 | 120 | loss ")
    assert "51.00 (51.00 ± 0.82)" in rows["electra"]  # the random-init column, FLOPs 0
    assert "61.00 (61.00 ± 0.82)" in rows["electra"] and "70.00 (70.00 ± 0.82)" in rows["electra"]
    assert rows["mlm"].startswith("| mlm | 60 | 120 |")
    rows = table_rows(text, "## CoLA dev mcc (50 training examples)")
    assert "2.00 (2.00 ± 0.82)" in rows["electra"] and "| 7.00 (7.00 ± 0.00) |" in rows["mlm"]
    # The last held-out evaluation of each objective (step 31 of electra's, 51 of mlm's), metrics it lacks as "–".
    assert "20 batches of 32 from z-book.txt" in text
    rows = table_rows(text, "## Held-out evaluation at the end of pre-training")
    assert rows["objective"] == (
        "| objective | step | FLOPs | wall s | loss | masked_lm_accuracy | disc_recall | disc_auc |"
    )
    assert rows["electra"].startswith("| electra | 31 | 93 | 6 | 0.0323 | 0.0312 | ")
    assert rows["mlm"].endswith("| – | – |")
    # Wall times where the results have them (electra's), "–" where a stage recorded none.
    rows = table_rows(text, "| objective | FLOPs per step |")
    assert rows["electra"] == "| electra | 3 | 20, 40 | 10 | 20 |"
    assert rows["mlm"].endswith("| 30, 60 | – | – |") and rows["random_init"] == "| random_init | 0 | 0 | 0 | – |"
    assert "python -m electra_studies.commands.compute_matched --electra_steps=40" in text
    assert "2 CPUs" in text and "TensorFlow 2.21.0" in text
    assert "This invocation took 10.0 min (the whole experiment's estimate: 11.7;" in text


def test_plots_on_synthetic_results(tmp_path):
    results = _synthetic_results()
    report.write_outputs(results, str(tmp_path))
    for name in (report.CURVES_PNG, report.HELDOUT_PNG, report.DOWNSTREAM_PNG):
        assert_png(tmp_path / name)
    assert sorted(os.listdir(tmp_path)) == sorted(
        [report.CURVES_PNG, report.HELDOUT_PNG, report.DOWNSTREAM_PNG, report.RESULTS_JSON, report.RESULTS_MD]
    )  # no temporary files


def test_heldout_panels_pair_compute_with_wall_time_where_a_run_logged_it(tmp_path):
    results = _synthetic_results()
    for entry in results["objectives"]["mlm"]["heldout_curve"]:  # a run whose times were not logged
        del entry["wall_seconds"]
    both = ("flops", "wall_seconds")
    assert report.curve_panels(results, "heldout_curve", x_axes=both) == [
        (name, x) for name in ("loss", "masked_lm_accuracy", "disc_auc", "disc_recall") for x in both
    ]
    for entry in results["objectives"]["electra"]["heldout_curve"]:
        del entry["wall_seconds"]
    assert report.curve_panels(results, "heldout_curve", lambda name: name.endswith("auc"), both) == [
        ("disc_auc", "flops")
    ]
    report.plot_heldout_curves(results, str(tmp_path / report.HELDOUT_PNG))
    assert_png(tmp_path / report.HELDOUT_PNG)


def test_heldout_curves_against_compute_alone_leave_no_empty_column(tmp_path):
    import matplotlib.image

    def shape(name, results, **x_axes):
        report.plot_heldout_curves(results, str(tmp_path / name), **x_axes)
        return matplotlib.image.imread(tmp_path / name).shape

    results = _synthetic_results()
    both = shape("both.png", results)
    flops = shape("flops.png", results, x_axes=("flops",))
    # Four metrics: one row each against both axes; against compute alone, three a row.
    assert both[1] < flops[1] and both[0] > flops[0]
    for run in results["objectives"].values():
        for entry in run["heldout_curve"]:
            del entry["wall_seconds"]
    assert shape("untimed.png", results) == flops, "no wall times: no column for them"


def test_the_networks_against_each_other_once_every_one_is_fine_tuned():
    results = _synthetic_results()
    assert "## The networks against each other" not in report.markdown_table(results)
    cola = {"median": 2.0, "min": 1.0, "max": 3.0, "trials": 3}
    results["comparison"] = {
        "reference": "electra",
        "tasks": ["CoLA"],
        "confidence": 0.95,
        "num_resamples": 1000,
        "networks": {
            "electra": {"CoLA": cola, "average": 2.0},
            "random_init": {"CoLA": dict(cola, median=0.5), "average": 0.5},
        },
        # As results.json holds it: an interval left open is None.
        "differences": {
            "random_init": {
                "CoLA": {"difference": 1.5, "low": -0.25, "high": None},
                "average": {"difference": 1.5, "low": -0.25, "high": None},
            }
        },
    }
    text = report.markdown_table(results)
    rows = table_rows(text, "## The networks against each other")
    assert rows["electra"] == "| electra | 2.0 (1.0-3.0) | 2.0 |"
    assert "(1000 times, the same rows for every seed and network)" in text
    rows = table_rows(text.split("## The networks against each other", 1)[1], "| electra minus |")
    assert rows["random_init"] == "| random_init | +1.5 [-0.2, n/a] | +1.5 [-0.2, n/a] |"
    # Before the held-out evaluation, after the last task's table.
    assert text.index("## CoLA dev mcc") < text.index("## The networks against") < text.index("## Held-out")
