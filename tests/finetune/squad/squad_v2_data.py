"""A SQuAD 2.0-format file derived from the real 1.1 dev set: a seeded share of questions made unanswerable the
way the official 2.0 files mark them (`is_impossible: true`, empty `answers`, the old answers as
`plausible_answers`)."""

import copy
import json

import numpy as np


def make_v2(dataset_json, unanswerable_fraction=0.33, seed=0, max_articles=None):
    rng = np.random.default_rng(seed)
    v2 = copy.deepcopy(dataset_json)
    v2["version"] = "v2.0"
    if max_articles is not None:
        v2["data"] = v2["data"][:max_articles]
    for article in v2["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                impossible = bool(rng.random() < unanswerable_fraction)
                qa["is_impossible"] = impossible
                if impossible:
                    qa["plausible_answers"], qa["answers"] = qa["answers"], []
    return v2


def write_v2(path, dataset_json, **kwargs):
    path.write_text(json.dumps(make_v2(dataset_json, **kwargs)), encoding="utf-8")
    return path
