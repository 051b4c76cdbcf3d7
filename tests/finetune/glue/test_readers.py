"""GLUE readers on the real files in ../shared/data/glue (row counts from SOURCES.md) and on synthetic QQP/MNLI."""

import collections

import numpy as np
import pytest

from electra_tf.errors import DataError
from finetune.glue.readers import examples_from_tfds_records, read_examples, read_tsv, task_file

# (task, split): (rows, label counts or None) as verified in shared/data/SOURCES.md.
REAL_FILES = {
    ("CoLA", "dev"): (1043, {"1": 721, "0": 322}),
    ("CoLA", "train"): (8551, {"1": 6023, "0": 2528}),
    ("SST-2", "dev"): (872, None),
    ("SST-2", "train"): (67349, None),
    ("MRPC", "dev"): (408, None),
    ("MRPC", "train"): (3668, None),
    ("STS-B", "dev"): (1500, None),
    ("STS-B", "train"): (5749, None),
    ("RTE", "dev"): (277, {"entailment": 146, "not_entailment": 131}),
    ("RTE", "train"): (2490, {"entailment": 1249, "not_entailment": 1241}),
    ("WNLI", "dev"): (71, {"0": 40, "1": 31}),
    ("QNLI", "dev"): (5463, {"entailment": 2702, "not_entailment": 2761}),
}


@pytest.fixture(scope="module")
def glue_dir(shared_data):
    return str(shared_data / "glue")


@pytest.mark.parametrize("task,split", sorted(REAL_FILES))
def test_real_file_row_counts_and_labels(glue_dir, task, split):
    rows, label_counts = REAL_FILES[(task, split)]
    result = read_tsv(task_file(glue_dir, task, split), task, split)
    assert len(result.examples) == rows
    assert result.skipped_lines == []
    assert [e.guid for e in result.examples[:2]] == [f"{split}-0", f"{split}-1"]
    if label_counts is not None:
        assert dict(collections.Counter(e.label for e in result.examples)) == label_counts
    assert all(e.text_a for e in result.examples)


def test_cola_has_no_header_and_keeps_its_last_unterminated_row(glue_dir):
    examples = read_examples(glue_dir, "CoLA", "dev")
    assert examples[0].text_a == "The sailors rode the breeze clear of the rocks."
    assert examples[0].label == "1" and examples[0].text_b is None
    assert examples[-1].text_a == "John talked to Bill about himself."


def test_mrpc_bom_header_skipped_and_quotes_kept_verbatim(glue_dir):
    examples = read_examples(glue_dir, "MRPC", "dev")
    first, second = examples[0], examples[1]
    assert first.label == "1"
    assert first.text_a.startswith("He said the foodservice pie business doesn't fit")
    # An unbalanced opening quote: a CSV reader with quoting would swallow the following rows into this field.
    assert first.text_b.startswith('"The foodservice pie business does not fit')
    assert second.label == "0" and second.text_b.startswith('His wife said he was "100 percent behind')


def test_stsb_reads_columns_seven_eight_and_float_score(glue_dir):
    example = read_examples(glue_dir, "STS-B", "dev")[1]
    assert (example.text_a, example.text_b, example.label) == (
        "A young child is riding a horse.",
        "A child is riding a horse.",
        4.75,
    )


def test_text_tasks_and_sst(glue_dir):
    sst = read_examples(glue_dir, "SST-2", "dev")[0]
    assert sst.text_a == "it 's a charming and often affecting journey . " and sst.label == "1"
    qnli = read_examples(glue_dir, "QNLI", "dev")[0]
    assert qnli.text_a == "What came into force after the new constitution was herald?"
    assert qnli.text_b.startswith("As of that day, the new constitution") and qnli.label == "entailment"


def _write(path, lines, trailing_newline=True):
    path.write_bytes(("\n".join(lines) + ("\n" if trailing_newline else "")).encode("utf-8"))
    return str(path)


def test_qqp_skips_and_counts_malformed_lines(tmp_path):
    path = _write(
        tmp_path / "train.tsv",
        [
            "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate",
            "0\t1\t2\tHow do I learn?\tWhat is the way to learn?\t1",
            "1\t3\t4\tA question with a broken",  # a question with an embedded newline splits the row in two
            "line?\tAnother question\t0",
            '2\t5\t6\tIs it "quoted?\tIt is\t0',
            "3\t7\t8\tLabel is junk\tx\tmaybe",
        ],
    )
    result = read_tsv(path, "QQP", "train")
    assert [(e.text_a, e.text_b, e.label) for e in result.examples] == [
        ("How do I learn?", "What is the way to learn?", "1"),
        ('Is it "quoted?', "It is", "0"),
    ]
    assert [e.guid for e in result.examples] == ["train-0", "train-1"]
    assert result.skipped_lines == [3, 4, 6]


def test_qqp_test_layout(tmp_path):
    path = _write(tmp_path / "test.tsv", ["id\tquestion1\tquestion2", "0\tWhy?\tWhy not?"])
    (example,) = read_tsv(path, "QQP", "test").examples
    assert (example.text_a, example.text_b, example.label) == ("Why?", "Why not?", None)


MNLI_TRAIN_HEADER = (
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
    "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label"
)
MNLI_DEV_HEADER = MNLI_TRAIN_HEADER.replace("label1\tgold_label", "label1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label")


def _mnli_row(index, premise, hypothesis, labels):
    parses = "\t".join(["( x )", "( y )", "(ROOT x)", "(ROOT y)"])
    return "\t".join([str(index), "31193", "31193n", "government", parses, premise, hypothesis] + labels)


def test_mnli_layouts_and_split_names(tmp_path):
    task_dir = tmp_path / "MNLI"
    task_dir.mkdir()
    _write(task_dir / "train.tsv", [MNLI_TRAIN_HEADER, _mnli_row(0, "P0", "H0", ["neutral", "neutral"])])
    labels = ["entailment", "neutral", "entailment", "entailment", "contradiction"]
    _write(task_dir / "dev_matched.tsv", [MNLI_DEV_HEADER, _mnli_row(0, "Pm", "Hm", labels + ["entailment"])])
    _write(task_dir / "dev_mismatched.tsv", [MNLI_DEV_HEADER, _mnli_row(0, "Px", "Hx", labels + ["contradiction"])])
    _write(task_dir / "test_matched.tsv", [MNLI_TRAIN_HEADER.rsplit("\t", 2)[0], _mnli_row(0, "Pt", "Ht", [])])
    assert read_examples(str(tmp_path), "MNLI", "train")[0] == read_examples(str(tmp_path), "mnli", "train")[0]
    assert [(e.text_a, e.text_b, e.label) for e in read_examples(str(tmp_path), "MNLI", "train")] == [
        ("P0", "H0", "neutral")
    ]
    # "dev" means matched, as in the reference; the gold label is the last column, not an annotator's.
    assert read_examples(str(tmp_path), "MNLI", "dev")[0].label == "entailment"
    assert read_examples(str(tmp_path), "MNLI", "dev_mismatched")[0].label == "contradiction"
    assert read_examples(str(tmp_path), "MNLI", "test")[0].text_a == "Pt"


def test_strict_tasks_name_the_file_and_line(tmp_path):
    path = _write(tmp_path / "dev.tsv", ["index\tsentence1\tsentence2\tlabel", "0\ta\tb\tentailment", "1\ta\tb"])
    with pytest.raises(DataError, match=r"dev\.tsv, line 3: expected 4 tab-separated columns, found 3"):
        read_tsv(path, "RTE", "dev")
    bad_label = _write(tmp_path / "dev2.tsv", ["index\tsentence1\tsentence2\tlabel", "0\ta\tb\tmaybe"])
    with pytest.raises(DataError, match=r"dev2\.tsv, line 2: unknown label 'maybe'"):
        read_tsv(bad_label, "RTE", "dev")
    bad_score = _write(tmp_path / "sts.tsv", ["h\t" * 9 + "h", "\t".join(["0"] * 7 + ["a", "b", "nan"])])
    with pytest.raises(DataError, match=r"line 2: label 'nan' is not a number"):
        read_tsv(bad_score, "STS-B", "dev")


def test_missing_empty_and_non_utf8_files(tmp_path):
    with pytest.raises(DataError, match=r"RTE/dev\.tsv does not exist: pass data_dir=<directory"):
        read_examples(str(tmp_path), "RTE", "dev")
    with pytest.raises(DataError, match="has no examples"):
        read_tsv(_write(tmp_path / "empty.tsv", ["index\tsentence1\tsentence2\tlabel"]), "RTE", "dev")
    latin1 = tmp_path / "latin1.tsv"
    latin1.write_bytes(b"gj04\t1\t\tC\xe6sar came.\n")
    with pytest.raises(
        DataError,
        match=r"latin1\.tsv line 1 is not valid utf-8 \(byte 0xe6 at column 10\); pass "
        r"input_encoding=latin-1",
    ):
        read_tsv(str(latin1), "CoLA", "train")
    assert read_tsv(str(latin1), "CoLA", "train", encoding="latin-1").examples[0].text_a == "C\u00e6sar came."
    replaced = read_tsv(str(latin1), "CoLA", "train", encoding_errors="replace").examples[0].text_a
    assert replaced == "C\ufffdsar came."


def test_crlf_endings_and_stray_carriage_return_inside_text(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_bytes(b"gj04\t1\t\tOne\rtwo.\r\ngj04\t0\t\tThree.\r\n")
    examples = read_tsv(str(path), "CoLA", "dev").examples
    assert [(e.text_a, e.label) for e in examples] == [("One\rtwo.", "1"), ("Three.", "0")]


def test_tfds_records_map_to_the_tsv_label_strings():
    # tfds yields records in a hashed order; idx is the row in the source file (MRPC's skips the train rows).
    records = [
        {"idx": np.int32(7), "premise": b"It rains.", "hypothesis": "Water falls.", "label": np.int64(0)},
        {"idx": np.int32(3), "premise": b"A man sleeps.", "hypothesis": b"A man is awake.", "label": np.int64(2)},
    ]
    examples = examples_from_tfds_records(records, "MNLI", "dev", ["entailment", "neutral", "contradiction"])
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in examples] == [
        ("dev_matched-0", "A man sleeps.", "A man is awake.", "contradiction"),
        ("dev_matched-1", "It rains.", "Water falls.", "entailment"),
    ]
    wnli = examples_from_tfds_records(
        [{"idx": 5, "sentence1": b"a", "sentence2": b"b", "label": 1}],
        "WNLI",
        "train",
        ["not_entailment", "entailment"],
    )
    assert wnli[0].label == "1"  # GLUE's WNLI files write entailment as 1
    cola_test = examples_from_tfds_records(
        [{"idx": 0, "sentence": b"s", "label": -1}], "CoLA", "test", ["unacceptable", "acceptable"]
    )
    assert (cola_test[0].label, cola_test[0].text_b) == (None, None)
    stsb = examples_from_tfds_records(
        [{"idx": 0, "sentence1": b"a", "sentence2": b"b", "label": np.float32(3.5)}], "STS-B", "dev"
    )
    assert stsb[0].label == 3.5
    with pytest.raises(DataError, match="labels .*'other'"):
        examples_from_tfds_records([], "RTE", "dev", ["entailment", "other"])
