"""Fine-tune a pre-trained ELECTRA discriminator: a GLUE task, SQuAD (--task=squad for 2.0, squadv1 for 1.1), token
tagging (chunk, ner, pos, ged, tagging) or your own CSV / TSV / JSON-lines files (classification, regression).

    electra-finetune --flagfile=configs/glue_mrpc.flags --model_size=small \\
        --init_checkpoint=<model_dir>/pretrained --data_dir=<GLUE dir> --output_dir=<dir> --num_trials=10

Hyperparameters not given take the reference's values for --task and --model_size. Writes results.json (each
trial's dev metrics; median, mean and std per metric), dev predictions in glue_eval's format and, when the test file
exists, GLUE-submission test predictions; see finetune/runner.py and finetune/glue/task.py for the layout.

    electra-finetune --flagfile=configs/squad.flags --model_size=small \\
        --init_checkpoint=<model_dir>/pretrained --data_dir=<dir with train-v2.0.json, dev-v2.0.json> --output_dir=<dir>

SQuAD writes results.json and per trial the official predictions.json, nbest_predictions.json (and null_odds.json for
2.0); see finetune/squad/task.py.

    electra-finetune --task=chunk --init_checkpoint=<model_dir>/pretrained \\
        --train_file=conll2000/train.txt --dev_file=conll2000/test.txt --output_dir=<dir>

Tagging (chunk, ner, pos, ged, tagging) reads CoNLL-style column files and writes per trial dev_predictions.txt
(word gold predicted); see finetune/tagging/task.py.

    electra-finetune --task=classification --init_checkpoint=<model_dir>/pretrained \\
        --train_file=train.csv --dev_file=dev.csv --text_column=review --label_column=sentiment --output_dir=<dir>

Own files keep their label strings: per trial dev_predictions.tsv (line, label, prediction); see
finetune/own_data/task.py.
"""

from absl import flags

from electra_tf import cli
from electra_tf.job_flags import define_job_flags, job_arguments

# TensorFlow-free, like everything it imports: --help stays fast.
from finetune.finetuning_spec import FinetuningJob

FLAGS = flags.FLAGS

define_job_flags(FinetuningJob)


def _job(argv):
    """The validated `FinetuningJob` of the flags (files and init_checkpoint checked to exist); needs no TensorFlow."""
    from absl import app

    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    job = FinetuningJob(**job_arguments(FinetuningJob))
    job.validate()
    return job


def main(argv):
    from finetune.runner import run

    run(_job(argv), extra_files={"flags.txt": FLAGS.flags_into_string()})


def console_main():
    """The installed console command."""
    cli.run(main, precheck=_job)


if __name__ == "__main__":
    console_main()
