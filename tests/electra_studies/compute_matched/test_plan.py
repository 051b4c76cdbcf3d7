"""The compute-matched experiment's plan: steps of equal FLOPs, warm-up and evaluation intervals, the wall-time
budget and its time model, ELECTRA started from the masked-LM run, the corpus split and the GLUE subsets."""

import dataclasses
import os

import pytest

from electra_studies.compute_matched import finetuning_stage, pretraining_stage
from electra_studies.compute_matched import plan as planning
from electra_studies.compute_matched import settings as experiment_settings
from electra_tf import flops as flops_lib
from electra_tf.errors import ConfigError, DataError
from tests.electra_studies.compute_matched.common import experiment_settings_with


def test_steps_for_flops_picks_the_nearest_step():
    assert planning.steps_for_flops(lambda n: 10 * n, 0) == 0
    assert planning.steps_for_flops(lambda n: 10 * n, 4) == 0
    assert planning.steps_for_flops(lambda n: 10 * n, 5) == 1
    assert planning.steps_for_flops(lambda n: 10 * n, 1234) == 123
    assert planning.steps_for_flops(lambda n: 10 * n, 1236) == 124
    # Non-linear (two-stage) cumulative counts too.
    assert planning.steps_for_flops(lambda n: n * n, 50) == 7


def test_seed_groups():
    assert planning.seed_groups([0, 1, 2]) == [(0, 3)]
    assert planning.seed_groups([3, 0, 1, 7]) == [(3, 1), (0, 2), (7, 1)]


def _configs(settings):
    return {name: planning.objective_config(settings, name, 8000) for name in settings.objectives}


def test_plan_matches_flops_and_gives_mlm_more_steps(tmp_path):
    settings = experiment_settings_with(
        tmp_path,
        objectives=["electra", "mlm", "replace_mlm", "all_tokens_mlm"],
        electra_steps=1000,
        eval_fractions=[0.25, 0.5, 1.0],
    )
    plan = planning.plan_runs(settings, _configs(settings))
    runs = plan["objectives"]
    assert runs["electra"]["steps"] == 1000
    assert plan["budget_flops"] == pytest.approx(1000 * runs["electra"]["flops_per_step"])
    assert runs["mlm"]["steps"] > runs["electra"]["steps"] > runs["all_tokens_mlm"]["steps"]
    for run in runs.values():
        assert [point["fraction"] for point in run["eval_points"]] == [0.25, 0.5, 1.0]
        assert run["eval_points"][-1]["step"] == run["steps"]
        for point in run["eval_points"]:
            # Nearest step: within half a step of the fraction of the budget.
            assert abs(point["flops"] - point["fraction"] * plan["budget_flops"]) <= run["flops_per_step"] / 2 + 1


def test_plan_warmup_and_heldout_evaluation_intervals(tmp_path):
    settings = experiment_settings_with(
        tmp_path, objectives=["electra", "mlm"], electra_steps=1000, eval_fractions=[1.0]
    )
    runs = planning.plan_runs(settings, _configs(settings))["objectives"]
    for run in runs.values():  # by default: warm-up a tenth of the steps, held-out evaluation at each log
        assert run["warmup_steps"] == round(0.1 * run["steps"])
        assert run["eval_every_steps"] == run["log_every_steps"] == round(run["steps"] / planning.LOG_POINTS)
    settings = dataclasses.replace(settings, warmup_steps=50, eval_every_steps=100)
    runs = planning.plan_runs(settings, _configs(settings))["objectives"]
    assert {(run["warmup_steps"], run["eval_every_steps"]) for run in runs.values()} == {(50, 100)}
    settings = dataclasses.replace(settings, heldout_files=0)
    assert {
        run["eval_every_steps"] for run in planning.plan_runs(settings, _configs(settings))["objectives"].values()
    } == {0}
    with pytest.raises(ConfigError, match=r"^warmup_steps=1001 is more than objective 'electra''s 1000 steps"):
        planning.plan_runs(dataclasses.replace(settings, warmup_steps=1001), _configs(settings))


def test_budget_minutes_becomes_the_electra_steps_of_that_estimated_time(tmp_path):
    settings = experiment_settings_with(tmp_path, objectives=["electra", "mlm"], budget_minutes=10.0)
    plan = planning.plan_runs(settings, _configs(settings))
    steps = plan["objectives"]["electra"]["steps"]
    step_flops = plan["electra_step_flops"]
    assert plan["budget_flops"] == pytest.approx(steps * step_flops)
    assert planning.pretraining_seconds(settings, steps, step_flops) == pytest.approx(600, abs=5)
    assert plan["budget_source"].startswith(f"--budget_minutes=10: {steps} ELECTRA steps")
    assert plan["objectives"]["mlm"]["steps"] > steps  # still matched in FLOPs
    with pytest.raises(ConfigError, match="^budget_minutes=0.1 leaves no time for a pre-training step"):
        planning.plan_runs(dataclasses.replace(settings, budget_minutes=0.1), _configs(settings))
    bfloat16 = dataclasses.replace(settings, mixed_precision="mixed_bfloat16")
    faster = planning.plan_runs(bfloat16, _configs(bfloat16))["objectives"]["electra"]["steps"]
    assert faster > steps and planning.pretraining_seconds(bfloat16, faster, step_flops) == pytest.approx(600, abs=5)


def test_fine_tuning_batches_are_sized_from_the_tasks_words(tmp_path, shared_data):
    """Measured with the project's tokenizer and a 16k vocabulary learned from Wikipedia: CoLA's training examples
    are 14.5 pieces long on average, RTE's 76.3 (their first 2,000); batches are about as wide as their examples."""
    settings = experiment_settings_with(tmp_path, glue_dir=str(shared_data / "glue"))
    cola = planning.finetuning_width("CoLA", finetuning_stage.mean_train_words(settings, "CoLA"), 128)
    rte = planning.finetuning_width("RTE", finetuning_stage.mean_train_words(settings, "RTE"), 128)
    assert 14.5 <= cola <= 14.5 * 1.2 and 76.3 <= rte <= 76.3 * 1.2
    assert planning.finetuning_width("RTE", finetuning_stage.mean_train_words(settings, "RTE"), 64) == 64


def test_the_time_model_predicts_the_cpu_recipes_measured_phases(tmp_path):
    """docs/cpu_budget.md sections 6-7 (16,186-piece vocabulary, mixed_bfloat16, evaluations of 20 batches every 250
    steps): 1,185 s for the masked-LM phase's 1,750 steps, 5,645 s for the ELECTRA phase's 6,000."""
    settings = experiment_settings_with(
        tmp_path, model_size="cpu", mixed_precision="mixed_bfloat16", eval_every_steps=250, num_eval_steps=20
    )
    for objective, steps, measured in (("mlm", 1750, 1185), ("electra", 6000, 5645)):
        config = planning.objective_config(settings, objective, vocab_size=16186)
        step_flops = flops_lib.objective_pretraining_flops(config, 128, 32)
        assert planning.pretraining_seconds(settings, steps, step_flops) == pytest.approx(measured, rel=0.1)


def test_electra_from_the_masked_lm_run_counts_its_steps_in_the_budget(tmp_path):
    """With electra_from_mlm_step=300 the budget is 300 masked-LM steps and then 1000 ELECTRA steps; ELECTRA's
    cumulative FLOPs start at those masked-LM steps', its fractions of the budget fall after them, and the masked-LM
    run, which gets the whole budget, keeps its step 300 for ELECTRA to start from."""
    settings = experiment_settings_with(
        tmp_path, objectives=["electra", "mlm"], electra_steps=1000, electra_from_mlm_step=300, eval_fractions=[0.5, 1]
    )
    configs = _configs(settings)
    plan = planning.plan_runs(settings, configs)
    runs = plan["objectives"]
    mlm_step, electra_step = runs["mlm"]["flops_per_step"], runs["electra"]["flops_per_step"]
    assert electra_step == plan["electra_step_flops"] > mlm_step
    assert plan["budget_flops"] == pytest.approx(300 * mlm_step + 1000 * electra_step)
    assert plan["budget_source"] == "--electra_steps=1000 after 300 masked-LM steps"
    assert runs["electra"]["starts_from"] == {"objective": "mlm", "step": 300, "flops": pytest.approx(300 * mlm_step)}
    assert (runs["electra"]["steps"], runs["electra"]["total_flops"]) == (1000, pytest.approx(plan["budget_flops"]))
    half = runs["electra"]["eval_points"][0]
    assert half["step"] == round((0.5 * plan["budget_flops"] - 300 * mlm_step) / electra_step)
    assert half["flops"] == pytest.approx(300 * mlm_step + half["step"] * electra_step)
    assert runs["mlm"]["steps"] == round(plan["budget_flops"] / mlm_step)
    assert runs["mlm"]["handover_steps"] == [300] and "starts_from" not in runs["mlm"]

    records, vocab = "data/*.tfrecord", "vocab.txt"
    electra = pretraining_stage.pretraining_job(settings, "electra", runs["electra"], records, None, vocab)
    mlm = pretraining_stage.pretraining_job(settings, "mlm", runs["mlm"], records, None, vocab)
    assert electra.init_checkpoint == os.path.join(settings.output_dir, "pretraining", "mlm", "kept-300")
    assert mlm.init_checkpoint is None
    assert 300 in mlm.checkpoint_steps and mlm.checkpoint_steps == tuple(sorted(mlm.checkpoint_steps))
    # Checkpoints at every log point: an interrupted run resumes from there.
    assert [job.save_checkpoints_steps for job in (electra, mlm)] == [runs[name]["log_every_steps"] for name in runs]

    # A budget in minutes counts the masked-LM steps' estimated time first.
    timed = planning.plan_runs(dataclasses.replace(settings, budget_minutes=30.0), configs)
    steps = timed["objectives"]["electra"]["steps"]
    seconds = planning.pretraining_seconds(settings, 300, mlm_step) + planning.pretraining_seconds(
        settings, steps, electra_step
    )
    assert seconds == pytest.approx(1800, abs=5)
    assert timed["budget_source"].startswith(f"--budget_minutes=30: {steps} ELECTRA steps after 300 masked-LM steps")


def test_electra_from_the_masked_lm_run_needs_both_objectives_and_a_budget_past_its_step(tmp_path):
    settings = experiment_settings_with(tmp_path, objectives=["electra"], electra_from_mlm_step=300)
    with pytest.raises(ConfigError, match=r"^electra_from_mlm_step=300 starts ELECTRA from the masked-LM run: .*"):
        experiment_settings.validate(settings)
    settings = experiment_settings_with(tmp_path, objectives=["electra", "mlm"], electra_from_mlm_step=-1)
    with pytest.raises(ConfigError, match=r"^electra_from_mlm_step must be >= 0"):
        experiment_settings.validate(settings)
    # 5 ELECTRA steps after 300 masked-LM steps: at a tenth of that budget ELECTRA has no step (the masked-LM steps it
    # starts from take more).
    settings = experiment_settings_with(
        tmp_path, objectives=["electra", "mlm"], electra_steps=5, electra_from_mlm_step=300, eval_fractions=[0.1, 1]
    )
    with pytest.raises(
        ConfigError, match=r"gives objective 'electra' no step at evaluation fraction 0.1 .* the masked-LM steps it "
    ):
        planning.plan_runs(settings, _configs(settings))


def test_wall_seconds_at_a_step_between_logged_steps():
    from electra_studies.compute_matched.results import wall_seconds_at

    curve = [{"step": 1}, {"step": 10, "wall_seconds": 20.0}, {"step": 20, "wall_seconds": 40.0}]
    assert wall_seconds_at(curve, 5) == pytest.approx(10.0)
    assert wall_seconds_at(curve, 15) == pytest.approx(30.0)
    assert wall_seconds_at(curve, 20) == 40.0 and wall_seconds_at(curve, 25) == 40.0


def test_split_corpus_holds_out_the_last_files_by_name():
    files = ["b/2.txt", "a/3.txt", "c/1.txt"]
    assert experiment_settings.split_corpus(files, 1) == (["b/2.txt", "c/1.txt"], ["a/3.txt"])
    assert experiment_settings.split_corpus(files, 2) == (["c/1.txt"], ["b/2.txt", "a/3.txt"])
    assert experiment_settings.split_corpus(files, 0) == (files, [])
    with pytest.raises(DataError, match=r"^heldout_files=3 needs at least 4 files .* corpus has 3"):
        experiment_settings.split_corpus(files, 3)


def test_plan_refuses_a_budget_too_small(tmp_path):
    settings = experiment_settings_with(tmp_path, objectives=["electra"], electra_steps=1, eval_fractions=[0.1, 1.0])
    with pytest.raises(ConfigError, match="no step at evaluation fraction 0.1"):
        planning.plan_runs(settings, _configs(settings))


def test_task_subset_samples_rows_and_keeps_the_header(tmp_path, shared_data):
    settings = experiment_settings_with(
        tmp_path, glue_dir=str(shared_data / "glue"), train_examples=50, eval_examples=0
    )
    directory, count = finetuning_stage.task_subset(settings, "sst-2")
    assert count == 50
    train = (tmp_path / "out" / directory / "SST-2" / "train.tsv").read_text(encoding="utf-8").splitlines()
    assert train[0] == "sentence\tlabel" and len(train) == 51
    dev = (tmp_path / "out" / directory / "SST-2" / "dev.tsv").read_bytes()
    assert dev == (shared_data / "glue" / "SST-2" / "dev.tsv").read_bytes()
