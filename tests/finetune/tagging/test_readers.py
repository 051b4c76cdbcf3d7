"""Readers of tagged text on the real shared files (counts from their sources) and on bad files (file and line)."""

import pytest

from electra_tf.errors import DataError
from finetune.tagging.readers import read_conll, read_conllu, read_fce, read_ptb_pos


def _counts(sentences):
    return len(sentences), sum(len(sentence.words) for sentence in sentences)


def test_conll2000_has_the_shared_tasks_counts(shared_data):
    root = shared_data / "tagging" / "conll2000"
    train, test = read_conll(str(root / "train.txt")), read_conll(str(root / "test.txt"))
    assert _counts(train) == (8936, 211727) and _counts(test) == (2012, 47377)
    assert train[0].words[:3] == ("Confidence", "in", "the") and train[0].tags[:3] == ("B-NP", "B-PP", "B-NP")
    assert read_conll(str(root / "train.txt"), tag_column=1)[0].tags[:3] == ("NN", "IN", "DT")
    assert train[1].line == len(train[0].words) + 2  # after the first sentence and its blank line


def test_fce_counts_and_its_unlabelled_tokens(shared_data):
    root = shared_data / "ged" / "fce"
    counts = {}
    for split in ("train", "dev", "test"):
        sentences = read_fce(str(root / f"en_fce_{split}.tsv"))
        tags = [tag for sentence in sentences for tag in sentence.tags]
        counts[split] = (*_counts(sentences), tags.count("i"), tags.count("NA"))
    # Counted independently in SOURCES.md (sentences, tokens, i labels, NA labels).
    assert counts == {
        "train": (28356, 454730, 42899, 5522),
        "dev": (2191, 34748, 3460, 372),
        "test": (2695, 41932, 4501, 593),
    }


def test_ptb_sample_and_ud_english_ewt(shared_data):
    ptb = read_ptb_pos(str(shared_data / "tagging" / "ptb_sample" / "tagged" / "wsj_*.pos"))
    assert _counts(ptb) == (4010, 94200)
    assert ptb[0].words[:4] == ("Pierre", "Vinken", ",", "61") and ptb[0].tags[-1] == "."
    assert all("/" not in tag and "|" not in tag for sentence in ptb for tag in sentence.tags)
    ud = read_conllu(str(shared_data / "tagging" / "ud_english_ewt" / "en_ewt-ud-dev.conllu"))
    assert _counts(ud) == (2001, 25147)
    assert set(tag for sentence in ud for tag in sentence.tags) <= {
        "ADJ",
        "ADP",
        "ADV",
        "AUX",
        "CCONJ",
        "DET",
        "INTJ",
        "NOUN",
        "NUM",
        "PART",
        "PRON",
        "PROPN",
        "PUNCT",
        "SCONJ",
        "SYM",
        "VERB",
        "X",
    }


def test_docstart_bom_crlf_and_a_missing_final_newline(tmp_path):
    path = tmp_path / "ner.txt"
    path.write_bytes("\ufeff-DOCSTART- -X- O\r\n\r\nEU NNP B-ORG\r\nrejects VBZ O\r\n\r\nPeter NNP B-PER".encode())
    sentences = read_conll(str(path))
    assert [(s.words, s.tags, s.line) for s in sentences] == [
        (("EU", "rejects"), ("B-ORG", "O"), 3),
        (("Peter",), ("B-PER",), 6),
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "holds no tagged sentence"),
        ("a B\nb B C\n", "line 2 has 3 columns where the file's first word line has 2"),
    ],
)
def test_bad_column_files_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=f"{path} {message}" if "line" in message else message):
        read_conll(str(path))


def test_columns_out_of_range_are_named(tmp_path):
    path = tmp_path / "two_columns.txt"
    path.write_text("a B\n", encoding="utf-8")
    with pytest.raises(DataError, match=f"{path} line 1 has 2 columns, so word_column=5 is out of range"):
        read_conll(str(path), word_column=5)


def test_missing_files_and_bad_labels(tmp_path):
    with pytest.raises(DataError, match=r"^dev_file=.*none.txt does not exist"):
        read_conll(str(tmp_path / "none.txt"), argument="dev_file")
    path = tmp_path / "fce.tsv"
    path.write_text("Dear\tc\nSir\tx\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path} line 2: label 'x' is not one of"):
        read_fce(str(path))
    path = tmp_path / "bad.pos"
    path.write_text("[ The/DT cat ]\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path} line 1: 'cat' is not word/TAG"):
        read_ptb_pos(str(path))


@pytest.mark.parametrize(
    "reader, content, column",
    [
        (read_conll, b"Der DET\nK\xf6nig NOUN\n", 2),
        (read_fce, b"Der\tc\nK\xf6nig\ti\n", 2),
        (read_conllu, b"1\tDer\tder\tDET\t_\t_\t2\tdet\t_\t_\n2\tK\xf6nig\tK\xf6nig\tNOUN\t_\t_\t0\troot\t_\t_\n", 4),
        (read_ptb_pos, b"Der/DT\nK\xf6nig/NN ./.\n", 2),
    ],
)
def test_every_reader_takes_an_encoding_and_names_file_line_and_column(tmp_path, reader, content, column):
    path = tmp_path / "latin1.txt"
    path.write_bytes(content)
    with pytest.raises(
        DataError,
        match=rf"latin1\.txt line 2 is not valid utf-8 \(byte 0xf6 at column {column}\); "
        r"pass input_encoding=latin-1",
    ):
        reader(str(path))
    words = [word for sentence in reader(str(path), encoding="latin-1") for word in sentence.words]
    assert words == ["Der", "K\u00f6nig"] + (["."] if reader is read_ptb_pos else [])
    replaced = [word for sentence in reader(str(path), encoding_errors="replace") for word in sentence.words]
    assert replaced[1] == "K\ufffdnig"
