"""Small corpora and vocabularies for the data pipeline tests (no shared data needed)."""

import random
import string

WORDS = (
    "the",
    "model",
    "learns",
    "to",
    "tell",
    "real",
    "tokens",
    "from",
    "replaced",
    "ones",
    "a",
    "generator",
    "samples",
    "while",
    "discriminator",
    "predicts",
    "every",
    "position",
    "of",
    "input",
    "text",
)


def write_vocab(path):
    """A WordPiece vocabulary that covers all printable ASCII (characters and ## suffixes) plus WORDS."""
    chars = [c for c in string.printable if not c.isspace()]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *("##" + c for c in chars), *WORDS]
    path.write_text("\n".join(dict.fromkeys(tokens)) + "\n", encoding="utf-8")
    return str(path)


def corpus_text(num_documents, seed=0, max_lines=12, max_words=30):
    """Documents of random sentences (one per line), separated by blank lines."""
    rng = random.Random(seed)
    documents = []
    for _ in range(num_documents):
        lines = []
        for _ in range(rng.randint(1, max_lines)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(1, max_words))]
            lines.append(" ".join(words).capitalize() + rng.choice(".!?"))
        documents.append("\n".join(lines))
    return "\n\n".join(documents) + "\n"


def write_corpus(path, num_documents, seed=0, **kwargs):
    path.write_text(corpus_text(num_documents, seed, **kwargs), encoding="utf-8")
    return str(path)
