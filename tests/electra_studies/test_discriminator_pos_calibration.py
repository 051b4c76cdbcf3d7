"""The POS and calibration analyses: corruption as in pre-training (a stub generator with a known sample), per-tag
measures and in-domain calibration recomputed from the per-word file by independent code (scikit-learn), the same
analysis from a Hugging Face discriminator/ + generator/ pair, and the generator requirement."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from electra_studies.discriminator_analysis.analysis import ANALYSES, run_analyses
from electra_studies.discriminator_analysis.corruption import corrupt
from electra_tf.config import ElectraConfig
from electra_tf.errors import ConfigError

SENTENCES = 30
HELDOUT_WINDOWS = 40


class _ConstantGenerator:
    """Always samples `token`: logits [batch, predictions, vocab] with all the mass on it."""

    def __init__(self, token, vocab_size=50):
        self.token, self.vocab_size = token, vocab_size
        self.electra_config = ElectraConfig(
            vocab_size=vocab_size, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4, mask_prob=0.25
        )

    def __call__(self, inputs, training=False):
        batch, predictions = inputs["mask_positions"].shape
        return tf.one_hot(tf.fill([batch, predictions], self.token), self.vocab_size) * 1e4


def test_corruption_writes_the_sample_at_chosen_positions_only_and_labels_real_changes():
    rng = np.random.default_rng(0)
    lengths = [20, 9, 3]
    token_ids = np.zeros((3, 24), np.int32)
    for row, length in enumerate(lengths):
        token_ids[row, :length] = [2] + list(rng.integers(5, 12, length - 2)) + [3]
    inputs = {
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": (token_ids > 0).astype(np.int32),
    }
    corruption = corrupt(_ConstantGenerator(token=7), inputs, seed=3, batch_size=2)
    chosen = corruption.chosen.astype(bool)
    assert not chosen[token_ids == 0].any(), "padding is never chosen"
    assert not chosen[(token_ids == 2) | (token_ids == 3)].any(), "[CLS] and [SEP] are never chosen"
    # The reference's count: max(1, round(mask_prob x real tokens, [CLS] and [SEP] included)).
    assert chosen.sum(axis=1).tolist() == [5, 2, 1]
    assert (corruption.token_ids[chosen] == 7).all()
    assert (corruption.token_ids[~chosen] == token_ids[~chosen]).all()
    np.testing.assert_array_equal(corruption.replaced, (chosen & (token_ids != 7)).astype(np.int32))
    again = corrupt(_ConstantGenerator(token=7), inputs, seed=3, batch_size=3)
    np.testing.assert_array_equal(again.chosen, corruption.chosen)


@pytest.fixture(scope="module")
def run_dir_analysis(pretrained_tiny, pretraining_data, shared_data, tmp_path_factory):
    run_dir = os.path.dirname(pretrained_tiny)  # the pre-training run: discriminator and generator
    output_dir = tmp_path_factory.mktemp("pos_analysis")
    results = run_analyses(
        run_dir,
        str(shared_data),
        str(output_dir),
        analyses=["pos", "calibration"],
        max_seq_length=32,
        max_sentences=SENTENCES,
        bootstrap_resamples=50,
        heldout_tfrecords=pretraining_data[0],
        max_heldout_windows=HELDOUT_WINDOWS,
    )
    with open(output_dir / "pos_words.jsonl", encoding="utf-8") as handle:
        words = [json.loads(line) for line in handle]
    return results, words, output_dir


def test_per_tag_measures_recompute_from_the_per_word_file(run_dir_analysis):
    from sklearn.metrics import roc_auc_score

    results, words, output_dir = run_dir_analysis
    assert json.loads((output_dir / "results.json").read_text())["pos"] == results["pos"]
    assert {word["corpus"] for word in words} == {"ptb", "ewt"}
    assert all(word["masked"] or not word["replaced"] for word in words), "only masked words are replaced"
    masked_share = np.mean([word["masked"] for word in words])
    assert 0.05 < masked_share < 0.3, masked_share
    for corpus, by_tag in results["pos"].items():
        for tag, values in by_tag.items():
            rows = [word for word in words if word["corpus"] == corpus and word["tag"] == tag]
            assert values["words"] == len(rows) >= 20
            assert values["false_positive_rate"] == pytest.approx(np.mean([w["p_clean"] > 0.5 for w in rows]))
            replaced = np.array([w["replaced"] for w in rows])
            assert values["replaced_rate"] == pytest.approx(replaced.mean())
            masked = np.array([w["masked"] for w in rows])
            if masked.sum():
                equal = np.sum(masked & (replaced == 0)) / masked.sum()
                assert values["sample_equals_original"] == pytest.approx(equal)
            if 0 < replaced.sum() < len(rows):
                assert values["auroc"] == pytest.approx(roc_auc_score(replaced, [w["p_corrupted"] for w in rows]))
                low, high = values["auroc_ci"]
                assert low is None or low <= high
            low, high = values["false_positive_rate_ci"]
            assert low <= values["false_positive_rate"] + 1e-12 and values["false_positive_rate"] <= high + 1e-12


def test_in_domain_calibration_recomputes_with_scikit_learn(run_dir_analysis):
    from sklearn.metrics import average_precision_score, brier_score_loss, roc_auc_score

    results, words, output_dir = run_dir_analysis
    for corpus, halves in results["calibration"]["in_domain"].items():
        rows = [word for word in words if word["corpus"] == corpus and word["sentence_id"] % 2 == 1]
        labels = np.array([word["replaced"] for word in rows])
        p = np.array([word["p_corrupted"] for word in rows])
        held_out = halves["held_out"]
        assert held_out["num_words"] == len(rows)
        assert held_out["auroc"] == pytest.approx(roc_auc_score(labels, p))
        assert held_out["average_precision"] == pytest.approx(average_precision_score(labels, p))
        assert held_out["brier"] == pytest.approx(brier_score_loss(labels, p))
        assert held_out["threshold"] == halves["fit"]["threshold"] and held_out["temperature"] > 0
    with open(output_dir / "heldout_pieces.jsonl", encoding="utf-8") as handle:
        pieces = [json.loads(line) for line in handle]
    assert sorted({piece["window"] for piece in pieces}) == list(range(HELDOUT_WINDOWS))
    assert 0 not in {piece["position"] for piece in pieces}, "[CLS] is not scored"
    odd = [piece for piece in pieces if piece["window"] % 2 == 1]
    labels, p = [piece["replaced"] for piece in odd], [piece["p_replaced"] for piece in odd]
    held_out = results["calibration"]["heldout_tfrecords"]["held_out"]
    assert (held_out["num_words"], held_out["auroc"]) == pytest.approx((len(odd), roc_auc_score(labels, p)))
    assert 0.08 < np.mean([piece["replaced"] for piece in pieces]) < 0.2
    report = (output_dir / "report.md").read_text()
    assert "| held-out TFRecords, pieces (held_out) |" in report
    assert "## Calibration on the detector's own task" in report and "| ptb (held_out) |" in report
    assert "### ewt" in report


def test_a_hugging_face_pair_runs_every_analysis_and_the_generator_ones_alike(
    run_dir_analysis, pretrained_tiny, shared_data, tmp_path
):
    from electra_tf.models import load_checkpoint, save_checkpoint

    loaded = load_checkpoint(os.path.dirname(pretrained_tiny), "pretrainer")
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
        bootstrap_resamples=50,
        blimp_pairs_per_paradigm=1,
        representation_words=200,
    )  # every analysis, the generator's halves included
    expected = run_dir_analysis[0]
    assert results["has_generator"] and results["checkpoint_format"] != expected["checkpoint_format"]
    assert results["analyses"] == list(ANALYSES) and not results["skipped"]
    assert 0 <= results["blimp"]["accuracy_pll"] <= 1 and results["disfluency"]["words"] > 0
    for corpus, halves in expected["calibration"]["in_domain"].items():
        for key, value in halves["held_out"].items():
            assert results["calibration"]["in_domain"][corpus]["held_out"][key] == pytest.approx(value, abs=1e-4), key


def test_calibration_needs_a_generator_unless_left_to_the_default(
    pretrained_tiny, pretraining_data, shared_data, tmp_path
):
    with pytest.raises(
        ConfigError, match="analyses=calibration needs the checkpoint's generator, and .* holds a discriminator only"
    ):
        run_analyses(pretrained_tiny, str(shared_data), str(tmp_path / "out"), analyses=["calibration"])
    records, _ = pretraining_data  # real held-out shards: a missing file is refused first, before any model loads
    with pytest.raises(
        ConfigError,
        match="^heldout_tfrecords is read by the calibration analysis, which does not run "
        "here \\(.*pretrained holds no generator\\)$",
    ):
        run_analyses(
            pretrained_tiny, str(shared_data), str(tmp_path / "out"), heldout_tfrecords=records, max_seq_length=32
        )
    results = run_analyses(
        pretrained_tiny,
        str(shared_data),
        str(tmp_path / "default"),
        max_seq_length=32,
        max_sentences=15,
        blimp_pairs_per_paradigm=1,
        bootstrap_resamples=10,
        representation_words=200,
    )
    assert results["skipped"] == {"calibration": f"{pretrained_tiny} holds no generator"}
    assert "calibration" not in results and results["pos"]["ptb"]["NN"]["words"] >= 20
    assert not [values for by_tag in results["pos"].values() for values in by_tag.values() if "replaced_rate" in values]


def test_a_corrupt_heldout_record_names_the_shard_before_any_model_runs(pretraining_data, tmp_path):
    from types import SimpleNamespace

    from electra_studies.discriminator_analysis.heldout import run_heldout
    from electra_tf.errors import DataError

    records, _ = pretraining_data
    data = bytearray(open(records, "rb").read())
    middle = len(data) // 2
    data[middle : middle + 4] = bytes(255 - byte for byte in data[middle : middle + 4])
    shard = tmp_path / "heldout.tfrecord"
    shard.write_bytes(bytes(data))
    generator = SimpleNamespace(electra_config=None)  # never called: the records are read first
    with pytest.raises(
        DataError,
        match=rf"^{shard} holds a corrupt record at byte \d+ \(its checksum does not "
        r"match\): .* or leave it out of heldout_tfrecords$",
    ):
        run_heldout(None, generator, str(shard), str(tmp_path / "out"), max_seq_length=32)
    assert not (tmp_path / "out").exists()
