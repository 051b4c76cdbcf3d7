"""The broken inputs of the bad-input table (tests/test_bad_input_table.py), written into a fresh directory: each
case's command reads them as {tmp}/<name>."""

import gzip
import hashlib
import json
import os


def write_inputs(tmp):
    """Bad files of each kind, beside nothing valid unless a case needs it."""
    (tmp / "empty.txt").write_text("", encoding="utf-8")
    (tmp / "corpus.txt").write_text("Some text.\nMore text here.\n\nA second document.\n", encoding="utf-8")
    (tmp / "empty_vocab.txt").write_text("", encoding="utf-8")
    (tmp / "corrupt.txt.gz").write_bytes(gzip.compress(b"a document\n" * 1000)[:40])  # truncated gzip
    (tmp / "empty.tfrecord").write_bytes(b"")
    (tmp / "corrupt.tfrecord").write_bytes(os.urandom(300))
    (tmp / "text.tfrecord").write_text("input_ids,input_mask\n1,2\n", encoding="utf-8")
    (tmp / "empty_dir").mkdir()
    garbage = tmp / "garbage_checkpoint"
    garbage.mkdir()
    (garbage / "config.json").write_text("{not json", encoding="utf-8")
    (garbage / "model.weights.h5").write_bytes(b"not hdf5")
    (tmp / "glue" / "SST-2").mkdir(parents=True)
    for split in ("train", "dev"):
        (tmp / "glue" / "SST-2" / f"{split}.tsv").write_text("sentence\tlabel\ngood film\t1\n", encoding="utf-8")
    (tmp / "empty_glue" / "SST-2").mkdir(parents=True)
    for split in ("train", "dev"):
        (tmp / "empty_glue" / "SST-2" / f"{split}.tsv").write_text("", encoding="utf-8")
    with gzip.open(tmp / "ok.txt.gz", "wt") as handle:
        handle.write("fine\n")
    write_latin1_files(tmp)
    write_nbest_files(tmp)


def write_nbest_files(tmp):
    """n-best lists for electra-rerank: a valid one, a JSON array cut inside its second utterance, and JSON lines
    whose second utterance holds its hypotheses as one string."""
    first = {"input": ["the cat sat", "the cat sad"], "output": "the cat sat"}
    (tmp / "nbest.json").write_text(json.dumps([first]), encoding="utf-8")
    (tmp / "nbest_malformed.json").write_text(f'[{json.dumps(first)},\n{{"input": ["a", ]}}]', encoding="utf-8")
    (tmp / "nbest_not_list.jsonl").write_text('{"hypotheses": ["a b"]}\n{"hypotheses": "a b"}\n', encoding="utf-8")


def write_latin1_files(tmp):
    """One file per fine-tuning reader, each with a Latin-1 byte (0xe8, \u00e8) where UTF-8 is expected."""
    latin1 = tmp / "latin1"
    (latin1 / "SST-2").mkdir(parents=True)
    files = {
        "train.csv": 'text,label\n"Tr\u00e8s bien",pos\n',
        "train.tsv": "text\tlabel\nTr\u00e8s bien\tpos\n",
        "train.jsonl": '{"text": "Tr\u00e8s bien", "label": "pos"}\n',
        "train.txt": "Tr\u00e8s B-NP\n",
        "train.pos": "Tr\u00e8s/NN ./.\n",
        "train.conllu": "1\tTr\u00e8s\ttr\u00e8s\tADV\t_\t_\t0\troot\t_\t_\n",
        "fce.tsv": "Tr\u00e8s\tc\n",
        "SST-2/train.tsv": "sentence\tlabel\nTr\u00e8s bien\t1\n",
        "SST-2/dev.tsv": "sentence\tlabel\nbien\t1\n",
        "train-v1.1.json": json.dumps(
            {
                "version": "1.1",
                "data": [
                    {
                        "title": "t",
                        "paragraphs": [
                            {
                                "context": "Tr\u00e8s bien.",
                                "qas": [
                                    {"id": "1", "question": "How?", "answers": [{"text": "bien", "answer_start": 5}]}
                                ],
                            }
                        ],
                    }
                ],
            },
            ensure_ascii=False,
        ),
    }
    files["dev-v1.1.json"] = files["train-v1.1.json"]
    for name, text in files.items():
        (latin1 / name).write_bytes(text.encode("latin-1"))
    (tmp / "scores.txt").write_bytes("tr\u00e8s bien\n".encode("latin-1"))
    # The analysis' data directory: FCE and BLiMP files with the same byte.
    (latin1 / "analysis" / "ged" / "fce").mkdir(parents=True)
    for split in ("dev", "test"):
        (latin1 / "analysis" / "ged" / "fce" / f"en_fce_{split}.tsv").write_bytes("Tr\u00e8s\tc\n".encode("latin-1"))
    (latin1 / "analysis" / "blimp").mkdir()
    (latin1 / "analysis" / "blimp" / "island.jsonl").write_bytes(
        '{"UID": "island", "pairID": "0", "sentence_good": "Tr\u00e8s.", "sentence_bad": "Tr\u00e8s"}\n'.encode(
            "latin-1"
        )
    )


def write_corrupt_shards(tmp, records):
    """{tmp}/corrupt_shard/train.tfrecord: `records` with bytes flipped mid-file (same size), without a manifest (found
    while reading); {tmp}/listed_shard/: the same beside a manifest recording the intact file (found by verify_data)."""
    data = bytearray(open(records, "rb").read())
    intact = hashlib.sha256(data).hexdigest()
    middle = len(data) // 2
    data[middle : middle + 4] = bytes(255 - byte for byte in data[middle : middle + 4])
    for name in ("corrupt_shard", "listed_shard"):
        (tmp / name).mkdir()
        (tmp / name / "train.tfrecord").write_bytes(bytes(data))
    manifest = {
        "format_version": 1,
        "max_seq_length": 32,
        "shards": [{"file": "train.tfrecord", "num_bytes": len(data), "sha256": intact}],
    }
    (tmp / "listed_shard" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
