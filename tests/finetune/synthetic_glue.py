"""A learnable text task in SST-2's file layout, over the synthetic pre-training vocabulary (`w0` .. `w194`).

A sentence is 6-12 random words; its label is 1 exactly when it contains one of the KEYWORDS. Nothing but the words
decides the label, so a model that fine-tunes correctly reaches (near) perfect dev accuracy.
"""

import numpy as np

from tests.synthetic_data import NUM_WORDS

KEYWORDS = tuple(f"w{i}" for i in range(8))
_OTHER_WORDS = [f"w{i}" for i in range(len(KEYWORDS), NUM_WORDS)]


def keyword_examples(num_examples, seed):
    """[(sentence, label)] with labels alternating 1, 0 before shuffling into random order."""
    rng = np.random.default_rng(seed)
    examples = []
    for index in range(num_examples):
        words = list(rng.choice(_OTHER_WORDS, size=int(rng.integers(6, 13))))
        label = index % 2
        if label:  # keywords replace words: the length says nothing of the label (as in real data, mostly)
            for position in rng.choice(len(words), size=int(rng.integers(1, 3)), replace=False):
                words[position] = str(rng.choice(KEYWORDS))
        examples.append((" ".join(words), label))
    order = rng.permutation(num_examples)
    return [examples[i] for i in order]


def write_sst2_task(glue_dir, num_train=480, num_dev=200, num_test=20, seed=0):
    """Writes `<glue_dir>/SST-2/{train,dev,test}.tsv` in GLUE's SST-2 layout; returns the dev examples."""
    task_dir = glue_dir / "SST-2"
    task_dir.mkdir(parents=True, exist_ok=True)
    train, dev, test = (keyword_examples(n, seed + offset) for offset, n in enumerate((num_train, num_dev, num_test)))
    for name, examples in (("train", train), ("dev", dev)):
        rows = [f"{sentence}\t{label}" for sentence, label in examples]
        (task_dir / f"{name}.tsv").write_text("sentence\tlabel\n" + "\n".join(rows) + "\n", encoding="utf-8")
    rows = [f"{index}\t{sentence}" for index, (sentence, _) in enumerate(test)]
    (task_dir / "test.tsv").write_text("index\tsentence\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return dev
