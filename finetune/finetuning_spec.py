"""What a fine-tuning run is asked to do (`FinetuningJob`), and its checks: `electra-finetune` turns its flags into
one and `finetune.runner.run` fine-tunes it; tests and notebooks can do the same."""

import dataclasses

from electra_tf.errors import ConfigError
from electra_tf.job_flags import flag_field
from electra_tf.lora_settings import check_lora_settings
from electra_tf.text_files import check_encoding
from electra_tf.training.choices import check_micro_batches, check_worker_hosts, distribution_field
from finetune.hyperparameters import ADAM_EPSILON, WARMUP_FRACTION, WEIGHT_DECAY, check_positive
from finetune.layerwise_lr import VARIANTS as LAYERWISE_LR_VARIANTS
from finetune.layerwise_lr import layerwise_lr_multipliers
from finetune.registry import get_task, reference_hyperparameters, tasks
from finetune.squad.features import DOC_STRIDE, MAX_QUERY_LENGTH
from finetune.squad.postprocess import MAX_ANSWER_LENGTH, N_BEST_SIZE


@dataclasses.dataclass
class FinetuningJob:
    """Everything a fine-tuning run needs; each field is a flag of `electra-finetune` with the field's name, default,
    help and choices (`electra_tf.job_flags`).

    Hyperparameters left as None take the reference's value for `task` and `model_size`
    (`Task.default_hyperparameters`); `model_size` None means the checkpoint's own (`model_size_of` its config).
    The SQuAD options at the end are read by the SQuAD tasks only.
    """

    task: str = flag_field(
        help_text="GLUE task: CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE or WNLI; squad (SQuAD 2.0) or squadv1 "
        "(SQuAD 1.1); a tagging task: chunk, ner, pos, ged or tagging; or classification / regression on your own "
        "--train_file and --dev_file."
    )
    init_checkpoint: str = flag_field(
        help_text="Pre-trained model directory (electra-pretrain writes <model_dir>/pretrained)."
    )
    output_dir: str = flag_field(help_text="Where results.json, predictions and models are written.")
    data_dir: str = flag_field(
        None,
        "GLUE directory holding <TASK>/train.tsv, dev.tsv (and test.tsv), as written by download_glue_data.py.",
    )
    model_size: str = flag_field(
        None,
        "Size whose reference learning rate and layer-wise decay are used (tiny, small, small++, base, large); "
        "default: read from --init_checkpoint's architecture.",
    )
    allow_embedding_mismatch: bool = flag_field(
        False,
        "For a Hugging Face discriminator/ + generator/ pair whose embedding copies differ: keep the discriminator's.",
    )
    num_trials: int = flag_field(
        1,
        "Fine-tuning runs from the same checkpoint with seeds seed, seed+1, ...; the paper reports the median of (at "
        "least) 10.",
    )
    seed: int = flag_field(0, "Seed of the first trial (head initialisation, dropout, data order).")
    learning_rate: float = flag_field(None, "Peak learning rate (default: 3e-4 small, 1e-4 base, 5e-5 large).")
    num_train_epochs: int = flag_field(None, "Epochs (default: 3; RTE and STS-B 10).")
    train_batch_size: int = flag_field(None, "Global batch size of one optimizer update (default 32).")
    # electra_tf.training.gradient_accumulation
    gradient_accumulation_steps: int = flag_field(
        1,
        "Run each batch as this many micro-batches of --train_batch_size / this examples in turn, adding up their "
        "gradients: the update of the whole batch with the activation memory of a micro-batch. Steps and the "
        "learning-rate schedule count updates.",
    )
    concurrent_micro_batches: int = flag_field(
        1,
        "Run each batch as this many micro-batches at once, each computed by its share of the CPUs (TensorFlow's "
        "threads per op divided by this): faster on a CPU at fine-tuning's small batches; the update is the whole "
        "batch's. Not with --gradient_accumulation_steps.",
    )
    eval_batch_size: int = flag_field(128, "Batch size for predictions.")
    max_seq_length: int = flag_field(None, "Sequence length (default 128).")
    layerwise_lr_decay: float = flag_field(None, "Layer-wise learning-rate decay (default 0.8; large 0.9; 1 = none).")
    layerwise_lr_variant: str = flag_field(
        "reference",
        "reference: embeddings get decay^(L+2) as the reference code; paper: decay^(L+1) as the paper.",
        choices=LAYERWISE_LR_VARIANTS,
    )
    weight_decay: float = flag_field(
        WEIGHT_DECAY["reference"],
        "Decoupled weight decay, not on LayerNorm and biases (reference code 0.01; the paper 0).",
    )
    warmup_fraction: float = flag_field(WARMUP_FRACTION, "Fraction of the steps with linear warm-up.")
    adam_epsilon: float = flag_field(ADAM_EPSILON, "Adam epsilon.")
    bias_correction: bool = flag_field(False, "Adam bias correction (the reference has none).")
    # `ElectraBackbone.enable_lora` on the backbone's query and value projections.
    lora_rank: int = flag_field(
        None,
        "LoRA: freeze the pre-trained encoder and train rank-N factors of its query and value projections (and the "
        "task head) instead; saved models and exports hold the merged kernels. Default: full fine-tuning.",
    )
    lora_alpha: float = flag_field(
        None, "LoRA's scale is --lora_alpha / --lora_rank (default --lora_rank: a scale of 1)."
    )
    vocab_file: str = flag_field(None, "Vocabulary (default: vocab.txt of --init_checkpoint).")
    do_lower_case: bool = flag_field(
        None, "Lower-case text (default: what --init_checkpoint records; lower-case if it records nothing)."
    )
    strip_accents: bool = flag_field(
        None, "Strip accents (default: what --init_checkpoint records, else --do_lower_case)."
    )
    data_source: str = flag_field(
        "tsv",
        "Files in --data_dir (GLUE TSV; SQuAD's official JSON with tsv or json) or --train_file/--dev_file (tagging), "
        "or tensorflow-datasets glue / squad / conll2003 (--task=ner, chunk or pos).",
        choices=("tsv", "json", "tfds"),
    )
    tfds_data_dir: str = flag_field(None, "tensorflow-datasets data directory, with --data_source=tfds.")
    tfds_download: bool = flag_field(
        False, "Let tensorflow-datasets download and prepare the dataset (--data_source=tfds)."
    )
    strategy: str = distribution_field("strategy")
    tpu: str = distribution_field("tpu")
    num_cpu_devices: int = distribution_field("num_cpu_devices")
    mixed_precision: str = distribution_field("mixed_precision")
    worker_hosts: str = distribution_field("worker_hosts")
    task_index: int = distribution_field("task_index")
    pad_to_max_length: bool = flag_field(
        False,
        "Pad every batch to --max_seq_length, as the reference, instead of batching examples of similar length cut "
        "to their longest (always on with --strategy=tpu).",
    )
    save_models: bool = flag_field(False, "Save each trial's fine-tuned model (raw text in) as trial_<k>/model.keras.")
    keep_best_epoch: bool = flag_field(
        False,
        "End each trial on the weights of the epoch with the lowest dev loss (the dev split is then also the "
        "selection set: its scores are optimistic).",
    )
    progress_bar: bool = flag_field(True, "Keras progress bar (otherwise one line per epoch).")
    save_checkpoints_steps: int = flag_field(
        None,
        "Also save the trial's state every N batches (it is always saved at the end of every epoch); rerunning the "
        "command resumes an interrupted run from there.",
    )
    deterministic: bool = flag_field(
        False,
        "TensorFlow op determinism: an interrupted and resumed run ends with the weights and dev results of an "
        "uninterrupted one.",
    )
    max_train_examples: int = flag_field(
        None,
        "Train on the first N examples only (SQuAD: questions; tagging: sentences; before MRPC/STS-B's swapped pairs "
        "are added).",
    )
    max_eval_examples: int = flag_field(
        None, "Evaluate on the first N examples of each evaluation split (dev, test) only."
    )
    squad_head: str = flag_field(
        "joint",
        "SQuAD: joint = the paper's start-conditioned end head with a 20 x 20 beam (and for 2.0 an answerability "
        "classifier); simple = independent start/end.",
        choices=("joint", "simple"),
    )
    doc_stride: int = flag_field(DOC_STRIDE, "SQuAD: tokens between the starts of consecutive context windows.")
    max_query_length: int = flag_field(MAX_QUERY_LENGTH, "SQuAD: questions are cut to this many word pieces.")
    n_best_size: int = flag_field(N_BEST_SIZE, "SQuAD: n-best answers kept per question (and the joint head's beam).")
    max_answer_length: int = flag_field(MAX_ANSWER_LENGTH, "SQuAD: longest answer, in word pieces.")
    null_score_threshold: float = flag_field(0.0, 'SQuAD 2.0: answer "" when the null odds exceed this.')
    # Tagging tasks (finetune.tagging.task) and the user's own files (finetune.own_data.task).
    train_file: str = flag_field(
        None,
        "Tagging: training file, CoNLL columns (one word per line, a blank line between sentences; -DOCSTART- lines "
        "are document breaks), .conllu, .pos, or FCE's token TSV for --task=ged. classification/regression: a .csv, "
        ".tsv or .jsonl file.",
    )
    dev_file: str = flag_field(
        None, "Tagging, classification, regression: the file scored after training (same format)."
    )
    test_file: str = flag_field(
        None, "Tagging, classification, regression: a further file predicted (and scored when labelled)."
    )
    word_column: int = flag_field(0, "Tagging: column of the word (0-based).")
    tag_column: int = flag_field(-1, "Tagging: column of the tag (0-based; -1 the last).")
    text_column: str = flag_field(None, "classification/regression: column (or JSON key) of the text.")
    text_pair_column: str = flag_field(None, "classification/regression: column of the second text of a pair.")
    label_column: str = flag_field(
        "label",
        "classification/regression: column of the label (strings are kept: predictions and the exported model give "
        "them back).",
    )
    input_encoding: str = flag_field(
        "utf-8",
        "Encoding of every data file read (own files, tagging files, GLUE TSV, SQuAD JSON): a Python codec name such "
        "as latin-1 or cp1252.",
    )
    encoding_errors: str = flag_field(
        "strict",
        "Bytes not valid in --input_encoding: strict (stop naming file, line and column), replace, ignore, or another "
        "Python codecs error handler.",
    )

    def validate(self):
        """Raises an ElectraError naming the fields at fault; reads no data beyond checking that files exist."""
        from electra_tf.preflight import require_checkpoint

        task = get_task(self.task)
        check_encoding(self.input_encoding, self.encoding_errors)
        if not self.init_checkpoint:
            raise ConfigError(
                "init_checkpoint is required: the pre-trained model directory (electra-pretrain "
                "writes <model_dir>/pretrained)",
                arguments=("init_checkpoint",),
            )
        require_checkpoint(self.init_checkpoint, "init_checkpoint")
        if not self.output_dir:
            raise ConfigError("output_dir is required", arguments=("output_dir",))
        task.validate(self)
        check_positive(num_trials=self.num_trials, eval_batch_size=self.eval_batch_size)
        for name in ("save_checkpoints_steps", "max_train_examples", "max_eval_examples"):
            if getattr(self, name) is not None:
                check_positive(**{name: getattr(self, name)})
        hyperparameters = self.hyperparameters()
        check_positive(
            learning_rate=hyperparameters.learning_rate,
            num_train_epochs=hyperparameters.num_train_epochs,
            train_batch_size=hyperparameters.train_batch_size,
            max_seq_length=hyperparameters.max_seq_length,
        )
        check_micro_batches(
            self.gradient_accumulation_steps, self.concurrent_micro_batches, hyperparameters.train_batch_size
        )
        check_worker_hosts(self.worker_hosts, self.strategy)
        # Checks the decay's range and the variant.
        layerwise_lr_multipliers([], 1, hyperparameters.layerwise_lr_decay, self.layerwise_lr_variant)
        if self.weight_decay < 0:
            raise ConfigError(f"weight_decay must be >= 0, got {self.weight_decay}", arguments=("weight_decay",))
        if self.lora_alpha is not None and self.lora_rank is None:
            raise ConfigError(
                "lora_alpha scales LoRA's weights: pass lora_rank=<rank> with it, or leave "
                "lora_alpha out for full fine-tuning",
                arguments=("lora_alpha", "lora_rank"),
            )
        if self.lora_rank is not None:
            check_lora_settings(self.lora_rank, self.lora_alpha, rank_argument="lora_rank")

    def as_record(self):
        """The job as results.json records it: every field but the options of tasks other than this job's."""
        own_options = set(get_task(self.task).options)
        other_options = {name for task in tasks().values() for name in task.options} - own_options
        return {name: value for name, value in dataclasses.asdict(self).items() if name not in other_options}

    def hyperparameters(self):
        """The task's reference hyperparameters for `model_size` with this job's overrides (for a job whose
        `model_size` is still None, those of "small": `run` sets the checkpoint's size before it trains)."""
        return reference_hyperparameters(
            self.task,
            self.model_size or "small",
            learning_rate=self.learning_rate,
            num_train_epochs=self.num_train_epochs,
            max_seq_length=self.max_seq_length,
            layerwise_lr_decay=self.layerwise_lr_decay,
            train_batch_size=self.train_batch_size,
        )
