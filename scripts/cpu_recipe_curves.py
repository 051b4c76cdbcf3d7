"""The held-out curves of the two-phase CPU recipe (docs/cpu_budget.md), against pre-training FLOPs and wall time.

    python scripts/cpu_recipe_curves.py --mlm_dir=runs/cpu_mlm --electra_dir=runs/cpu_electra \
        --twin_dir=runs/cpu_mlm_twin --output=docs/cpu_budget/heldout_curves.png

The recipe's masked-LM phase (`--mlm_dir`, up to `--handover_step`) and its ELECTRA phase (`--electra_dir`, whose
FLOPs and wall time start where the masked-LM phase handed over), and optionally the masked-LM twin of equal FLOPs
(`--twin_dir`; drawn against FLOPs only unless `--twin_wall_time`: a twin resumed from a copy of the masked-LM phase
or run beside other work has wall times that are not the budget's). The FLOPs are the project's accounting
(`electra_tf.flops.objective_pretraining_flops` of each run's electra_config.json). Draws with the compute-matched
experiment's plot (`electra_studies.compute_matched.report.plot_heldout_curves`) and prints the curves as JSON lines.
"""

import json
import os

from absl import flags

from electra_tf import cli

FLAGS = flags.FLAGS
flags.DEFINE_string("mlm_dir", None, "Model directory of the recipe's masked-LM phase.")
flags.DEFINE_string("electra_dir", None, "Model directory of the recipe's ELECTRA phase.")
flags.DEFINE_integer("handover_step", 1750, "The masked-LM step the ELECTRA phase started from.")
flags.DEFINE_string("twin_dir", None, "Model directory of the masked-LM twin of equal FLOPs (optional).")
flags.DEFINE_boolean("twin_wall_time", False, "Draw the twin against wall time too.")
flags.DEFINE_string("output", None, "The PNG to write.")


def _run_curve(argument, first_flops=0.0, wall_offset=0.0, last_step=None, wall_time=True):
    """The held-out curve of the run in the directory flag `argument` names (read_metrics), its FLOPs from
    `first_flops` on."""
    from electra_studies.compute_matched.plan import flops_after
    from electra_studies.compute_matched.results import read_metrics
    from electra_tf.config import ElectraConfig
    from electra_tf.errors import DataError
    from electra_tf.training.evaluation import EVAL_METRICS_FILE
    from electra_tf.training.pretraining_job import CONFIG_FILE, JOB_FILE

    model_dir = FLAGS[argument].value
    for name in (CONFIG_FILE, JOB_FILE, EVAL_METRICS_FILE):
        if not os.path.isfile(os.path.join(model_dir, name)):
            raise DataError(
                f"{argument}={model_dir} holds no {name}: pass the model_dir of a pre-training run made with "
                "eval_tfrecords",
                arguments=(argument,),
            )
    config = ElectraConfig.load(os.path.join(model_dir, CONFIG_FILE))
    with open(os.path.join(model_dir, JOB_FILE), encoding="utf-8") as handle:
        job = json.load(handle)
    cumulative = flops_after(config, job["max_seq_length"], job["train_batch_size"], first_flops)
    curve = read_metrics(model_dir, cumulative, heldout=True, wall_offset=wall_offset)
    curve = [entry for entry in curve if last_step is None or entry["step"] <= last_step]
    if not wall_time:
        for entry in curve:
            entry.pop("wall_seconds", None)
    return curve, cumulative


def main(argv):
    cli.require_flags("mlm_dir", "electra_dir", "output")
    from electra_studies.compute_matched.report import plot_heldout_curves
    from electra_studies.compute_matched.results import read_metrics, wall_seconds_at

    mlm_curve, mlm_cumulative = _run_curve("mlm_dir", last_step=FLAGS.handover_step)
    # The hand-over's wall time from the masked-LM phase's training log (its last step's time).
    mlm_training = read_metrics(FLAGS.mlm_dir, mlm_cumulative)
    handover_seconds = wall_seconds_at(mlm_training, FLAGS.handover_step)
    electra_curve, _ = _run_curve(
        "electra_dir", first_flops=mlm_cumulative(FLAGS.handover_step), wall_offset=handover_seconds
    )
    objectives = {}
    if FLAGS.twin_dir:  # drawn first: up to the hand-over it is the masked-LM phase, drawn over it
        twin_curve, _ = _run_curve("twin_dir", wall_time=FLAGS.twin_wall_time)
        objectives["masked LM, equal FLOPs"] = {"heldout_curve": twin_curve}
    objectives[f"masked-LM phase (to step {FLAGS.handover_step})"] = {"heldout_curve": mlm_curve}
    objectives["ELECTRA phase"] = {"heldout_curve": electra_curve}
    for name, run in objectives.items():
        for entry in run["heldout_curve"]:
            print(json.dumps({"run": name, **entry}))
    os.makedirs(os.path.dirname(os.path.abspath(FLAGS.output)), exist_ok=True)
    plot_heldout_curves({"settings": {"model_size": "cpu recipe"}, "objectives": objectives}, FLAGS.output)
    print(f"wrote {FLAGS.output}")


if __name__ == "__main__":
    cli.run(main)
