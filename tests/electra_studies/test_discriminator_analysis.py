"""The discriminator analysis on a slice of the real FCE data: per-word scores, measures recomputed independently
(scikit-learn, a brute-force threshold search) from the per-word file, a Hugging Face conversion giving the same
results, and the entry point's errors."""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from electra_studies.discriminator_analysis.analysis import run_analyses
from electra_tf.errors import CheckpointError, ConfigError, DataError
from tests.conftest import REPO_ROOT

SENTENCES = 40
PAIRS = 3
WORDS = 300


def _labelled_words(path, max_sentences):
    """(sentence, word index, word, 0/1) of the c/i words of the first sentences of an FCE file, read directly."""
    words, sentence, index = [], 0, 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if not line:
                if index:
                    sentence, index = sentence + 1, 0
                continue
            if sentence >= max_sentences:
                break
            word, label = line.split("\t")
            if label in ("c", "i"):
                words.append((sentence, index, word, int(label == "i")))
            index += 1
    return words


@pytest.fixture(scope="module")
def analysis(pretrained_tiny, shared_data, tmp_path_factory):
    output_dir = tmp_path_factory.mktemp("analysis")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = run_analyses(
            pretrained_tiny,
            str(shared_data),
            str(output_dir),
            max_seq_length=32,
            max_sentences=SENTENCES,
            blimp_pairs_per_paradigm=PAIRS,
            representation_words=WORDS,
        )
    return results, output_dir, caught


def test_a_normal_run_warns_of_nothing(analysis):
    """No Python warning (Keras', NumPy's, scikit-learn's) in a run of every analysis: what electra-analyze would print
    to stderr."""
    assert [f"{caught.category.__name__}: {caught.message}" for caught in analysis[2]] == []


def _tokens(output_dir):
    with open(output_dir / "ged_tokens.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_every_labelled_word_is_scored_once_in_order(analysis, shared_data):
    _, output_dir, _ = analysis
    tokens = _tokens(output_dir)
    for split in ("dev", "test"):
        expected = _labelled_words(shared_data / "ged" / "fce" / f"en_fce_{split}.tsv", SENTENCES)
        got = [(t["sentence_id"], t["word_index"], t["word"], t["label"]) for t in tokens if t["split"] == split]
        assert got == expected


def test_results_are_recomputed_from_the_per_word_file_by_independent_code(analysis):
    from sklearn.metrics import average_precision_score, brier_score_loss, roc_auc_score

    results, output_dir, _ = analysis
    tokens = _tokens(output_dir)
    assert json.loads((output_dir / "results.json").read_text())["ged"] == results["ged"]
    for split in ("dev", "test"):
        rows = [t for t in tokens if t["split"] == split]
        labels = np.array([t["label"] for t in rows])
        p = np.array([t["p_replaced"] for t in rows])
        reported = results["ged"][split]
        assert reported["auroc"] == pytest.approx(roc_auc_score(labels, p))
        assert reported["average_precision"] == pytest.approx(average_precision_score(labels, p))
        assert reported["brier"] == pytest.approx(brier_score_loss(labels, p))
        predicted = p >= reported["threshold"]
        true_positives = np.sum(predicted & (labels == 1))
        precision = true_positives / max(np.sum(predicted), 1)
        recall = true_positives / np.sum(labels == 1)
        assert (reported["precision"], reported["recall"]) == pytest.approx((precision, recall))
        # p_calibrated is p(replaced) with its logit divided by the fitted temperature.
        logits = np.log(p) - np.log1p(-p)
        calibrated = 1 / (1 + np.exp(-logits / reported["temperature"]))
        assert np.allclose([t["p_calibrated"] for t in rows], calibrated, atol=1e-6)


def test_the_threshold_is_the_best_f0_5_on_dev(analysis):
    results, output_dir, _ = analysis
    rows = [t for t in _tokens(output_dir) if t["split"] == "dev"]
    labels = np.array([t["label"] for t in rows])
    p = np.array([t["p_replaced"] for t in rows])

    def f0_5(threshold):
        predicted = p >= threshold
        tp = np.sum(predicted & (labels == 1))
        precision, recall = tp / max(np.sum(predicted), 1), tp / np.sum(labels == 1)
        return 0.0 if tp == 0 else 1.25 * precision * recall / (0.25 * precision + recall)

    best = max(f0_5(threshold) for threshold in np.unique(p))
    assert results["ged"]["dev"]["f0_5"] == pytest.approx(best)
    assert (output_dir / "ged_reliability.png").stat().st_size > 1000
    assert "| dev |" in (output_dir / "report.md").read_text()


def test_a_hugging_face_conversion_gives_the_same_analysis(pretrained_tiny, shared_data, analysis, tmp_path):
    from electra_tf.models import load_checkpoint, save_checkpoint

    loaded = load_checkpoint(pretrained_tiny, "discriminator")
    save_checkpoint(
        loaded.model,
        str(tmp_path / "hf"),
        "hf",
        vocab_file=loaded.vocab_file,
        tokenizer_settings=loaded.tokenizer_settings,
    )
    results = run_analyses(
        str(tmp_path / "hf"),
        str(shared_data),
        str(tmp_path / "out"),
        max_seq_length=32,
        max_sentences=SENTENCES,
        blimp_pairs_per_paradigm=PAIRS,
        representation_words=WORDS,
    )
    assert results["checkpoint_format"] != analysis[0]["checkpoint_format"]
    assert results["blimp"]["by_paradigm"] == pytest.approx(analysis[0]["blimp"]["by_paradigm"])
    for split in ("dev", "test"):
        for key, value in analysis[0]["ged"][split].items():
            assert results["ged"][split][key] == pytest.approx(value, abs=1e-5), key
    for corpus, by_tag in analysis[0]["pos"].items():
        assert results["pos"][corpus].keys() == by_tag.keys()
        for tag, values in by_tag.items():
            assert results["pos"][corpus][tag]["mean_p_clean"] == pytest.approx(values["mean_p_clean"], abs=1e-5)
    assert results["disfluency"]["disfluent"]["auroc_vs_fluent"] == pytest.approx(
        analysis[0]["disfluency"]["disfluent"]["auroc_vs_fluent"], abs=1e-4
    )
    for converted, original in zip(
        results["representations"]["by_model"]["checkpoint"], analysis[0]["representations"]["by_model"]["checkpoint"]
    ):
        assert converted["anisotropy"] == pytest.approx(original["anisotropy"], abs=1e-4)
        assert converted["probe_accuracy"] == original["probe_accuracy"]


def test_blimp_pairs_are_scored_as_the_scorer_scores_them_and_accuracy_recomputes(
    analysis, pretrained_tiny, shared_data
):
    from electra_tf.scoring import load_scorer, score_texts

    results, output_dir, _ = analysis
    with open(output_dir / "blimp_pairs.jsonl", encoding="utf-8") as handle:
        pairs = [json.loads(line) for line in handle]
    assert len(pairs) == 67 * PAIRS == results["blimp"]["num_pairs"]
    with open(shared_data / "blimp" / "adjunct_island.jsonl", encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    discriminator, tokenizer = load_scorer(pretrained_tiny)
    good, bad = score_texts(discriminator, tokenizer, [first["sentence_good"], first["sentence_bad"]], 32)
    assert (pairs[0]["paradigm"], pairs[0]["pair_id"]) == ("adjunct_island", "0")
    assert (pairs[0]["score_good"], pairs[0]["score_bad"]) == pytest.approx((good["score"], bad["score"]), abs=1e-5)
    by_paradigm = {}
    for pair in pairs:
        by_paradigm.setdefault(pair["paradigm"], []).append(pair["score_good"] > pair["score_bad"])
    assert results["blimp"]["by_paradigm"] == {name: np.mean(values) for name, values in by_paradigm.items()}
    assert results["blimp"]["accuracy"] == pytest.approx(
        np.mean([v for values in by_paradigm.values() for v in values])
    )


def test_bad_arguments_are_one_line_errors(pretrained_tiny, tmp_path):
    with pytest.raises(
        ConfigError, match="analyses=syntax: unknown \\(available: ged, calibration, pos, blimp, representations\\)"
    ):
        run_analyses(pretrained_tiny, str(tmp_path), str(tmp_path / "out"), analyses=["syntax"])
    with pytest.raises(
        ConfigError,
        match="^compare_checkpoint is read by the representations analysis, which does "
        "not run here \\(analyses=ged\\)$",
    ):
        run_analyses(
            pretrained_tiny, str(tmp_path), str(tmp_path / "out"), analyses=["ged"], compare_checkpoint=pretrained_tiny
        )
    with pytest.raises(
        CheckpointError, match=f"^compare_checkpoint={tmp_path}/mlm does not exist: pass a model directory"
    ):
        run_analyses(pretrained_tiny, str(tmp_path), str(tmp_path / "out"), compare_checkpoint=str(tmp_path / "mlm"))
    with pytest.raises(DataError, match=f"{tmp_path}/ged/fce/en_fce_dev.tsv does not exist"):
        run_analyses(pretrained_tiny, str(tmp_path), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "electra_studies.commands.analyze",
            f"--data_dir={tmp_path}",
            f"--output_dir={tmp_path / 'out'}",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        timeout=300,
    )
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == [
        "error: --init_checkpoint is required"
    ]


def test_analyses_needing_a_package_that_is_not_installed_are_refused_before_any_work(monkeypatch, tmp_path):
    from electra_studies.discriminator_analysis.analysis import check_arguments

    missing = str(tmp_path / "missing")  # the packages are checked first
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ConfigError) as probes:
        check_arguments(missing, missing, ["pos", "representations"])
    assert str(probes.value) == (
        "analyses=representations needs scikit-learn, which is not installed: pip install "
        "'electra-tf[analysis]' (or run the others alone: analyses=pos)"
    )
    assert probes.value.arguments == ("analyses",)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(
        ConfigError,
        match=r"^analyses=ged needs matplotlib, which is not installed: pip install "
        r"'electra-tf\[analysis\]'$",
    ):
        check_arguments(missing, missing, ["ged"])
    # The command, every analysis by default, without matplotlib: one line at once, before TensorFlow.
    (tmp_path / "sitecustomize.py").write_text('import sys\nsys.modules["matplotlib"] = None\n')
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "electra_studies.commands.analyze",
            f"--init_checkpoint={missing}",
            f"--data_dir={missing}",
            f"--output_dir={tmp_path}/out",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(tmp_path), TF_CPP_MIN_LOG_LEVEL="3"),
    )
    assert (result.returncode, result.stderr.splitlines()) == (
        2,
        [
            "error: --analyses=ged,representations need matplotlib, which is not installed: pip install "
            "'electra-tf[analysis]' (or run the others alone: --analyses=calibration,pos,blimp)"
        ],
    )


def test_window_logits_equal_the_padded_windows_scored_one_by_one(pretrained_tiny):
    from electra_studies.discriminator_analysis.word_scores import window_logits
    from electra_tf.models import load_checkpoint

    discriminator = load_checkpoint(pretrained_tiny, "discriminator").model
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 33, size=20)  # batched out of order by length, cut to each batch's longest
    padding_mask = (np.arange(32)[None, :] < lengths[:, None]).astype(np.int32)
    inputs = {
        "token_ids": rng.integers(5, 50, size=(20, 32)).astype(np.int32) * padding_mask,
        "segment_ids": np.zeros((20, 32), np.int32),
        "padding_mask": padding_mask,
    }
    logits = window_logits(discriminator, inputs, batch_size=6)
    for row in range(20):
        single = {name: value[row : row + 1] for name, value in inputs.items()}
        expected = np.asarray(discriminator(single, training=False))[0, : lengths[row]]
        np.testing.assert_allclose(logits[row, : lengths[row]], expected, atol=1e-5)


LATIN1_PAIR = '{"UID": "island", "pairID": "0", "sentence_good": "Un caf\u00e9.", "sentence_bad": "Caf\u00e9 un."}\n'


def test_blimp_and_switchboard_decode_with_the_shared_reader(shared_data, tmp_path):
    from electra_studies.discriminator_analysis.blimp import read_pairs
    from electra_studies.discriminator_analysis.disfluency import read_switchboard

    (tmp_path / "blimp").mkdir()
    (tmp_path / "blimp" / "island.jsonl").write_bytes(LATIN1_PAIR.encode("latin-1"))
    with pytest.raises(
        DataError,
        match=f"^{tmp_path}/blimp/island.jsonl line 1 is not valid utf-8 \\(byte 0xe9 at "
        "column 58\\); pass input_encoding=latin-1 \\(or the file's encoding\\) or "
        "encoding_errors=replace$",
    ):
        read_pairs(str(tmp_path))
    assert read_pairs(str(tmp_path), encoding="latin-1") == [("island", "0", "Un caf\u00e9.", "Caf\u00e9 un.")]
    assert read_pairs(str(tmp_path), encoding_errors="replace")[0][2] == "Un caf\ufffd."
    # The real Switchboard sample is UTF-8: read strictly, it gives what the analysis has always read.
    turns, _ = read_switchboard(str(shared_data), max_turns=5)
    assert len(turns) == 5 and all(turn["words"] for turn in turns)
    switchboard = tmp_path / "tagging" / "switchboard"
    switchboard.mkdir(parents=True)
    (switchboard / "tagged").write_bytes("A.1: caf\u00e9/NN\n".encode("latin-1"))
    (switchboard / "disfluency").write_bytes("A.1: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(DataError, match=f"^{switchboard}/tagged line 1 is not valid utf-8 \\(byte 0xe9 at column 9\\)"):
        read_switchboard(str(tmp_path))
    turns, _ = read_switchboard(str(tmp_path), encoding="latin-1")
    assert [turn["words"] for turn in turns] == [("caf\u00e9",)]


def test_the_inputs_are_read_before_any_model_is_loaded(tmp_path, monkeypatch):
    """A file in another format or encoding is reported before TensorFlow loads a model, and nothing is written."""
    from electra_tf import models

    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded before every input was read")

    monkeypatch.setattr(models, "load_checkpoint", no_model)
    checkpoint = tmp_path / "checkpoint"  # exists: the checks of the arguments pass
    checkpoint.mkdir()
    fce = tmp_path / "data" / "ged" / "fce"
    fce.mkdir(parents=True)
    (fce / "en_fce_dev.tsv").write_text("Dear c\nSir c\n", encoding="utf-8")  # spaces where FCE has a tab
    (fce / "en_fce_test.tsv").write_text("Dear\tc\n", encoding="utf-8")
    blimp = tmp_path / "data" / "blimp"
    blimp.mkdir()
    (blimp / "island.jsonl").write_bytes(LATIN1_PAIR.encode("latin-1"))
    with pytest.raises(DataError) as columns:
        run_analyses(str(checkpoint), str(tmp_path / "data"), str(tmp_path / "out"), analyses=["ged"])
    assert str(columns.value) == f"{fce}/en_fce_dev.tsv line 1 has 1 columns, so tag_column=1 is out of range"
    with pytest.raises(
        DataError, match=f"^{blimp}/island.jsonl line 1 is not valid utf-8 \\(byte 0xe9 at column 58\\)"
    ):
        run_analyses(str(checkpoint), str(tmp_path / "data"), str(tmp_path / "out"), analyses=["blimp"])
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "data"]


def test_a_failed_run_leaves_the_previous_report_whole(pretrained_tiny, shared_data, tmp_path, monkeypatch):
    """ged writes its per-word file, then blimp fails: the output directory keeps the previous report alone, and no
    staging directory is left beside it."""
    from electra_studies.discriminator_analysis import blimp

    data_dir = tmp_path / "data"
    (data_dir / "ged").mkdir(parents=True)
    os.symlink(shared_data / "ged" / "fce", data_dir / "ged" / "fce")
    (data_dir / "blimp").mkdir()
    (data_dir / "blimp" / "island.jsonl").write_bytes(LATIN1_PAIR.encode("latin-1"))
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    (output_dir / "report.md").write_text("the previous report\n", encoding="utf-8")

    def fails(*args, **kwargs):
        assert os.path.isfile(os.path.join(args[3], "ged_tokens.jsonl"))  # the staging directory
        raise DataError("blimp failed")

    with monkeypatch.context() as patched:
        patched.setattr(blimp, "run_blimp", fails)
        with pytest.raises(DataError, match="^blimp failed$"):
            run_analyses(
                pretrained_tiny,
                str(data_dir),
                str(output_dir),
                analyses=["ged", "blimp"],
                max_seq_length=32,
                max_sentences=5,
                input_encoding="latin-1",
            )
    assert os.listdir(output_dir) == ["report.md"]
    assert (output_dir / "report.md").read_text(encoding="utf-8") == "the previous report\n"
    assert sorted(os.listdir(tmp_path)) == ["data", "out"]
    results = run_analyses(
        pretrained_tiny,
        str(data_dir),
        str(output_dir),
        analyses=["ged", "blimp"],
        max_seq_length=32,
        max_sentences=5,
        input_encoding="latin-1",
    )
    assert results["blimp"]["num_pairs"] == 1
    assert sorted(os.listdir(output_dir)) == [
        "blimp_pairs.jsonl",
        "ged_reliability.png",
        "ged_tokens.jsonl",
        "report.md",
        "results.json",
    ]
