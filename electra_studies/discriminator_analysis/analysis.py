"""Runs the chosen analyses of one discriminator and writes `results.json` and `report.md` (atomically).

`ged` (zero-shot grammatical error detection on FCE, `ged.py`), `pos` (the discriminator and the generator by part
of speech, `pos.py`, and on Switchboard's disfluencies, `disfluency.py`), `calibration` (the detector's own task on
generator-corrupted text: the POS corpora, `pos.py`, and held-out pre-training shards, `heldout.py`), `blimp`
(minimal pairs, with the generator's pseudo-log-likelihood when there is a generator, `blimp.py`) and
`representations` (anisotropy, linear POS probes and CKA by layer, against a second checkpoint when one is given,
`representations.py`).

Every input file is read (`read_inputs`) before TensorFlow is imported and any model is built, so that a missing
file, a line in another format or a byte in another encoding is reported at once. Every output file goes into a
staging directory that replaces `output_dir` only when all analyses have finished, so an interrupted or failed run
leaves the previous report (or none), never half of a new one.
"""

import os

from electra_studies.discriminator_analysis.report import report
from electra_tf import progress
from electra_tf.errors import CheckpointError, ConfigError, DataError
from electra_tf.extras import is_installed, require_modules
from electra_tf.io_utils import atomic_write_json, atomic_write_text, staged_directory
from electra_tf.text_files import check_encoding

ANALYSES = ("ged", "calibration", "pos", "blimp", "representations")
# Analyses that use the checkpoint's generator: `calibration` needs one, `pos` and `blimp` report more with one.
NEEDS_GENERATOR = ("calibration",)
USES_GENERATOR = ("calibration", "pos", "blimp")
# The optional packages an analysis needs ('electra-tf[analysis]'): matplotlib for the plots, scikit-learn's linear
# probes.
NEEDS_MODULES = {"ged": ("matplotlib",), "representations": ("matplotlib", "sklearn")}


def check_analyses(analyses):
    unknown = [name for name in analyses if name not in ANALYSES]
    if unknown:
        raise ConfigError(
            f"analyses={','.join(unknown)}: unknown (available: {', '.join(ANALYSES)})", arguments=("analyses",)
        )


def check_modules(analyses):
    """Refuse `analyses` that need an optional package that is not installed, naming the extra and the others."""
    needing = [name for name in analyses if not all(map(is_installed, NEEDS_MODULES.get(name, ())))]
    others = [name for name in analyses if name not in needing]
    modules = sorted({module for name in needing for module in NEEDS_MODULES[name]})
    require_modules(
        modules,
        "analysis",
        f"analyses={','.join(needing)} need{'s' if len(needing) == 1 else ''}",
        ("analyses",),
        f" (or run the others alone: analyses={','.join(others)})" if others else "",
    )


def check_data(analyses, data_dir):
    from electra_studies.discriminator_analysis.blimp import blimp_dir
    from electra_studies.discriminator_analysis.ged import SPLITS, fce_path

    needed = [fce_path(data_dir, split) for split in SPLITS] if "ged" in analyses else []
    missing = [path for path in needed if not os.path.isfile(path)]
    if missing:
        raise DataError(
            f"{missing[0]} does not exist: data_dir must hold ged/fce/en_fce_{{dev,test}}.tsv "
            "(MultiGED 2023 FCE token TSV)",
            arguments=("data_dir",),
        )
    if {"pos", "calibration", "representations"} & set(analyses):
        from electra_studies.discriminator_analysis.pos import check_corpora

        check_corpora(data_dir)
    if "pos" in analyses:
        from electra_studies.discriminator_analysis.disfluency import check_switchboard

        check_switchboard(data_dir)
    if "blimp" in analyses and not os.path.isdir(blimp_dir(data_dir)):
        raise DataError(
            f"{blimp_dir(data_dir)} does not exist: data_dir must hold blimp/<paradigm>.jsonl (BLiMP's "
            "data/ directory)",
            arguments=("data_dir",),
        )


def check_arguments(
    init_checkpoint,
    data_dir,
    analyses=None,
    compare_checkpoint=None,
    heldout_tfrecords=None,
    input_encoding="utf-8",
    encoding_errors="strict",
):
    """The checks of `run_analyses`'s arguments that need neither a model nor TensorFlow; returns the analyses."""
    from electra_tf import preflight

    analyses = list(ANALYSES if analyses is None else analyses)
    check_analyses(analyses)
    check_modules(analyses)
    check_encoding(input_encoding, encoding_errors)
    preflight.require_checkpoint(init_checkpoint, "init_checkpoint")
    if compare_checkpoint and "representations" not in analyses:
        raise ConfigError(
            "compare_checkpoint is read by the representations analysis, which does not run here "
            f"(analyses={','.join(analyses)})",
            arguments=("compare_checkpoint", "analyses"),
        )
    if compare_checkpoint:
        preflight.require_checkpoint(compare_checkpoint, "compare_checkpoint")
    if heldout_tfrecords:
        preflight.require_tfrecord_matches(heldout_tfrecords, "heldout_tfrecords")
    check_data(analyses, data_dir)
    return analyses


def read_inputs(
    analyses, data_dir, max_sentences=None, blimp_pairs_per_paradigm=None, encoding="utf-8", encoding_errors="strict"
):
    """The text the chosen `analyses` read from `data_dir`, read (and so checked) before any model is built: "fce"
    ({split: sentences}, `ged`), "corpora" (the whole POS corpora, `pos`, `calibration` and `representations`),
    "switchboard" ((turns, unaligned turns), `pos`) and "blimp" (pairs), each where an analysis needs it.
    `max_sentences` keeps the first sentences of FCE and the first turns of Switchboard (the POS corpora are cut by
    their analyses)."""
    from electra_studies.discriminator_analysis import blimp, disfluency, ged, pos

    decoding = {"encoding": encoding, "encoding_errors": encoding_errors}
    inputs = {}
    if "ged" in analyses:
        inputs["fce"] = ged.read_splits(data_dir, max_sentences, **decoding)
    if {"pos", "calibration", "representations"} & set(analyses):
        inputs["corpora"] = pos.read_corpora(data_dir, **decoding)
        if "representations" in analyses and not all(inputs["corpora"].values()):
            raise DataError(f"{data_dir}: a POS corpus holds no sentence", arguments=("data_dir",))
    if "pos" in analyses:
        inputs["switchboard"] = disfluency.read_switchboard(data_dir, max_sentences, **decoding)
    if "blimp" in analyses:
        inputs["blimp"] = blimp.read_pairs(data_dir, blimp_pairs_per_paradigm, **decoding)
    return inputs


def load_generator(init_checkpoint, allow_embedding_mismatch=False):
    """The generator stored with the discriminator at `init_checkpoint` (a pre-training run directory, a Hugging Face
    discriminator/ + generator/ pair, the reference's TF1 checkpoints), or None when it holds a discriminator only.
    `allow_embedding_mismatch` is `load_checkpoint`'s."""
    from electra_tf.checkpoints import GENERATOR
    from electra_tf.models import load_checkpoint

    try:
        return load_checkpoint(
            init_checkpoint, GENERATOR, allow_embedding_mismatch=allow_embedding_mismatch, argument="init_checkpoint"
        ).model
    except CheckpointError:
        return None


def run_analyses(
    init_checkpoint,
    data_dir,
    output_dir,
    analyses=None,
    max_seq_length=128,
    max_sentences=None,
    blimp_pairs_per_paradigm=None,
    bootstrap_resamples=200,
    seed=0,
    heldout_tfrecords=None,
    max_heldout_windows=1024,
    compare_checkpoint=None,
    representation_words=10000,
    command=None,
    input_encoding="utf-8",
    encoding_errors="strict",
    allow_embedding_mismatch=False,
):
    """Loads the discriminator at `init_checkpoint` (any format `electra_tf.models.load_checkpoint` reads), and its
    generator where the checkpoint holds one, runs `analyses`, writes `output_dir/results.json` and `report.md`, and
    returns the results. `heldout_tfrecords` (held-out pre-training shards) adds the in-domain part of `calibration`
    (`heldout.py`, up to `max_heldout_windows` records). `analyses` None: every analysis the checkpoint allows (those
    needing a generator are skipped, and listed under "skipped", when it holds none); named ones that cannot run are
    an error. `compare_checkpoint` (any format the discriminator's) is the second model of `representations`, which
    reads the first `representation_words` words of each POS corpus. Every text file of `data_dir` is decoded with
    `input_encoding` / `encoding_errors` (see `electra_tf.text_files`); `output_dir` is replaced as a whole once every
    analysis has finished. `allow_embedding_mismatch` reads a Hugging Face discriminator/ + generator/ pair whose
    embedding copies differ (either checkpoint) with the discriminator's copy."""
    chosen = analyses is not None
    analyses = check_arguments(
        init_checkpoint, data_dir, analyses, compare_checkpoint, heldout_tfrecords, input_encoding, encoding_errors
    )
    inputs = read_inputs(analyses, data_dir, max_sentences, blimp_pairs_per_paradigm, input_encoding, encoding_errors)
    from electra_studies.discriminator_analysis import blimp, disfluency, ged, heldout, pos, representations
    from electra_tf.checkpoints import DISCRIMINATOR
    from electra_tf.models import load_checkpoint  # TensorFlow: after the checks of the inputs

    if heldout_tfrecords:  # sizes, settings and (small data) checksums, before anything is written
        from electra_tf.data.pretraining_dataset import check_pretraining_data

        check_pretraining_data(heldout_tfrecords, max_seq_length, argument="heldout_tfrecords")
    with progress.step(f"loading {init_checkpoint}"):
        pretrained = load_checkpoint(
            init_checkpoint,
            DISCRIMINATOR,
            allow_missing_head=True,
            allow_embedding_mismatch=allow_embedding_mismatch,
            argument="init_checkpoint",
        )
        generator = (
            load_generator(init_checkpoint, allow_embedding_mismatch) if set(USES_GENERATOR) & set(analyses) else None
        )
    compared = None
    if compare_checkpoint:
        with progress.step(f"loading {compare_checkpoint}"):
            compared = load_checkpoint(
                compare_checkpoint,
                DISCRIMINATOR,
                allow_missing_head=True,
                allow_embedding_mismatch=allow_embedding_mismatch,
                argument="compare_checkpoint",
            )
    needing = [name for name in analyses if name in NEEDS_GENERATOR]
    skipped = {}
    if needing and generator is None and not chosen:
        skipped = {name: f"{init_checkpoint} holds no generator" for name in needing}
        analyses = [name for name in analyses if name not in needing]
    elif needing and generator is None:
        raise ConfigError(
            f"analyses={','.join(needing)} needs the checkpoint's generator, and {init_checkpoint} holds "
            "a discriminator only: pass a pre-training run directory, a Hugging Face discriminator/ + "
            "generator/ pair or the reference's TF1 checkpoint",
            arguments=("analyses", "init_checkpoint"),
        )
    if heldout_tfrecords and "calibration" not in analyses:
        raise ConfigError(
            "heldout_tfrecords is read by the calibration analysis, which does not run here "
            f"({'; '.join(skipped.values()) or 'analyses=' + ','.join(analyses)})",
            arguments=("heldout_tfrecords", "analyses"),
        )
    if not pretrained.vocab_file:
        raise DataError(
            f"{init_checkpoint} holds no vocabulary (vocab.txt): the analyses tokenise text as the "
            "discriminator was trained",
            arguments=("init_checkpoint",),
        )
    if compared is not None and not compared.vocab_file:
        raise DataError(
            f"{compare_checkpoint} holds no vocabulary (vocab.txt): its words are tokenised as it was trained",
            arguments=("compare_checkpoint",),
        )
    tokenizer = pretrained.tokenizer()
    results = {
        "init_checkpoint": init_checkpoint,
        "checkpoint_format": pretrained.source_format,
        "max_seq_length": max_seq_length,
        "max_sentences": max_sentences,
        "blimp_pairs_per_paradigm": blimp_pairs_per_paradigm,
        "bootstrap_resamples": bootstrap_resamples,
        "seed": seed,
        "has_generator": generator is not None,
        "analyses": analyses,
        "skipped": skipped,
        "compare_checkpoint": compare_checkpoint,
        "command": command,
    }
    with staged_directory(output_dir) as staging:
        if "ged" in analyses:
            with progress.step("ged: error detection on FCE"):
                results["ged"] = ged.run_ged(pretrained.model, tokenizer, inputs["fce"], staging, max_seq_length)
        if {"pos", "calibration"} & set(analyses):
            corpora = {corpus: sentences[:max_sentences] for corpus, sentences in inputs["corpora"].items()}
            with progress.step("pos and calibration: the POS corpora"):
                by_tag, calibration = pos.run_pos(
                    pretrained.model, generator, tokenizer, corpora, staging, max_seq_length, bootstrap_resamples, seed
                )
            if "pos" in analyses:
                results["pos"] = by_tag
                with progress.step("pos: Switchboard's disfluencies"):
                    results["disfluency"] = disfluency.run_disfluency(
                        pretrained.model,
                        tokenizer,
                        inputs["switchboard"],
                        staging,
                        max_seq_length,
                        bootstrap_resamples,
                        seed,
                    )
            if "calibration" in analyses:
                results["calibration"] = {"in_domain": calibration}
                if heldout_tfrecords:
                    with progress.step(f"calibration: {heldout_tfrecords}"):
                        results["calibration"]["heldout_tfrecords"] = heldout.run_heldout(
                            pretrained.model,
                            generator,
                            heldout_tfrecords,
                            staging,
                            max_seq_length,
                            max_heldout_windows,
                            seed,
                        )
                if "ged" in results:
                    results["calibration"]["fce"] = results["ged"]
        if "blimp" in analyses:
            with progress.step("blimp: minimal pairs"):
                results["blimp"] = blimp.run_blimp(
                    pretrained.model, tokenizer, inputs["blimp"], staging, max_seq_length, generator
                )
        if "representations" in analyses:
            models, tokenizers = {"checkpoint": pretrained.model.backbone}, {"checkpoint": tokenizer}
            if compared is not None:
                models["compare"] = compared.model.backbone
                tokenizers["compare"] = compared.tokenizer()
            with progress.step("representations: anisotropy, POS probes and CKA by layer"):
                results["representations"] = representations.run_representations(
                    models, tokenizers, inputs["corpora"], staging, max_seq_length, representation_words, seed
                )
        atomic_write_json(os.path.join(staging, "results.json"), results)
        atomic_write_text(os.path.join(staging, "report.md"), report(results))
    return results
