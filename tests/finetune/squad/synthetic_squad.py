"""A learnable SQuAD-format task over the synthetic `w0..w194` vocabulary of the tiny pre-trained model.

Each context is a run of distinct random words; the question is the word just before the answer and the answer is
the next one or two words. In the 2.0 variant a share of questions ask for a word the context does not contain
(`is_impossible`, with `plausible_answers` as the official 2.0 files have). Contexts are long enough to need several
windows at small `max_seq_length`, so training and post-processing cross window boundaries.
"""

import json

import numpy as np

NUM_WORDS = 195


def make_dataset(num_questions, seed, version_2=False, context_words=(30, 60), questions_per_context=3):
    rng = np.random.default_rng(seed)
    paragraphs, made = [], 0
    while made < num_questions:
        # Words drawn without replacement: the question word then names one place in the context.
        words = [f"w{i}" for i in rng.choice(NUM_WORDS, size=int(rng.integers(*context_words)), replace=False)]
        context = " ".join(words)
        starts = np.cumsum([0] + [len(word) + 1 for word in words])
        qas = []
        for _ in range(min(questions_per_context, num_questions - made)):
            position = int(rng.integers(1, len(words) - 2))
            length = int(rng.integers(1, 3))
            answer = " ".join(words[position : position + length])
            qa = {
                "id": f"q{made}",
                "question": words[position - 1],
                "answers": [{"text": answer, "answer_start": int(starts[position])}],
            }
            if version_2:
                qa["is_impossible"] = bool(rng.random() < 0.3)
                if qa["is_impossible"]:
                    absent = [f"w{i}" for i in range(NUM_WORDS) if f"w{i}" not in words]
                    qa["question"] = str(rng.choice(absent))
                    qa["plausible_answers"], qa["answers"] = qa["answers"], []
            qas.append(qa)
            made += 1
        paragraphs.append({"context": context, "qas": qas})
    return {"version": "v2.0" if version_2 else "1.1", "data": [{"title": "synthetic", "paragraphs": paragraphs}]}


def write_task(directory, version_2=False, num_train=300, num_dev=60):
    """Writes the official file names for the version into `directory`; returns it."""
    suffix = "v2.0" if version_2 else "v1.1"
    for split, count, seed in (("train", num_train, 1), ("dev", num_dev, 2)):
        dataset = make_dataset(count, seed, version_2)
        (directory / f"{split}-{suffix}.json").write_text(json.dumps(dataset), encoding="utf-8")
    return directory
