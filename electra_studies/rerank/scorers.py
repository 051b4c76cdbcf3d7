"""The sentence scorers re-ranking can use, by name: the model each needs (read with
`electra_tf.models.load_checkpoint`) and how it scores a list of texts (higher = more likely).

Scorers that need the same model share one load and one pass over the texts (`disc_mean` and `disc_sum`). The names
are known without TensorFlow, which the functions import when they run.
"""

import dataclasses
import time

import numpy as np

from electra_tf.errors import CheckpointError

DISCRIMINATOR = "discriminator"
GENERATOR = "generator"
ELECTRIC = "electric"


@dataclasses.dataclass(frozen=True)
class Scorer:
    """A scorer: its `name`, the `model` it needs, what it computes, and its forward passes per hypothesis."""

    name: str
    model: str
    description: str
    forward_passes: str


SCORERS = {
    scorer.name: scorer
    for scorer in (
        Scorer("disc_mean", DISCRIMINATOR, "the discriminator's mean over word pieces of log P(original)", "1"),
        Scorer("disc_sum", DISCRIMINATOR, "the discriminator's sum over word pieces of log P(original)", "1"),
        Scorer("pll", GENERATOR, "the generator's pseudo-log-likelihood (each piece masked in turn)", "one per piece"),
        Scorer("electric", ELECTRIC, "Electric's pseudo-log-likelihood in one pass", "1"),
    )
}


def load_model(model, init_checkpoint, loaded_kinds=None, allow_embedding_mismatch=False):
    """(model, tokenizer) of `model` (one of the `Scorer.model` values) at `init_checkpoint`; CheckpointError when
    the checkpoint holds no such model: a discriminator-only checkpoint has no generator, and an Electric
    discriminator (objective=electric) gives energies where the others give replaced-token logits, so each of the two
    serves only its own scorers. `loaded_kinds` ({checkpoint kind: LoadedModel}) keeps what was read for the next
    call: both kinds of discriminator scorers read the checkpoint's discriminator once. `allow_embedding_mismatch` is
    `load_checkpoint`'s (an HF discriminator/ + generator/ pair whose embedding copies differ)."""
    from electra_tf.models import load_checkpoint

    kind = GENERATOR if model == GENERATOR else DISCRIMINATOR
    loaded_kinds = {} if loaded_kinds is None else loaded_kinds
    if kind not in loaded_kinds:
        loaded_kinds[kind] = load_checkpoint(
            init_checkpoint, kind, allow_embedding_mismatch=allow_embedding_mismatch, argument="init_checkpoint"
        )
    loaded = loaded_kinds[kind]
    electric = model != GENERATOR and loaded.model.electra_config.objective == ELECTRIC
    if model == ELECTRIC and not electric:
        raise CheckpointError(
            f"{init_checkpoint} holds no Electric model (it was pre-trained with objective="
            f"{loaded.model.electra_config.objective})",
            arguments=("init_checkpoint",),
        )
    if model == DISCRIMINATOR and electric:
        raise CheckpointError(
            f"{init_checkpoint} holds an Electric model: its discriminator gives energies, not "
            "replaced-token probabilities (score it with electric)",
            arguments=("init_checkpoint",),
        )
    return loaded.model, loaded.tokenizer()


def _discriminator_scores(model, tokenizer, texts, max_seq_length, batch_size):
    from electra_tf.scoring import score_texts

    results = score_texts(model, tokenizer, texts, max_seq_length, batch_size)
    return {
        "disc_mean": np.array([result["score"] for result in results], np.float64),
        "disc_sum": np.array([result["score_sum"] for result in results], np.float64),
    }


def _pieces(tokenizer, texts, max_seq_length, batch_size):
    from electra_tf.inputs import encode_single_segments

    return sum(
        int(encode_single_segments(tokenizer, texts[start : start + batch_size], max_seq_length)[1].sum())
        for start in range(0, len(texts), batch_size)
    )


def _pseudo_log_likelihoods(model, tokenizer, texts, max_seq_length, batch_size):
    from electra_tf.scoring import pseudo_log_likelihoods

    # Its batches are masked copies, one per piece: it keeps its own (larger) batch size.
    values = pseudo_log_likelihoods(model, tokenizer, texts, max_seq_length)
    return {"pll": np.asarray(values, np.float64)}


def _electric_scores(model, tokenizer, texts, max_seq_length, batch_size):
    from electra_tf.scoring import electric_pseudo_log_likelihoods

    values = electric_pseudo_log_likelihoods(
        model, tokenizer, texts, max_seq_length=max_seq_length, batch_size=batch_size
    )
    return {"electric": np.asarray(values, np.float64)}


def _one_per_text(tokenizer, texts, max_seq_length, batch_size):
    return len(texts)


SCORE_FUNCTIONS = {DISCRIMINATOR: _discriminator_scores, GENERATOR: _pseudo_log_likelihoods, ELECTRIC: _electric_scores}
# Sequences each model's scorers put through the network for `texts`.
FORWARD_PASSES = {DISCRIMINATOR: _one_per_text, GENERATOR: _pieces, ELECTRIC: _one_per_text}


def score(model_name, model, tokenizer, texts, max_seq_length=128, batch_size=64):
    """({scorer name: float64 score per text} of every scorer of `model_name`, cost): the cost holds the forward
    passes (sequences through the network) and seconds per text."""
    start = time.perf_counter()
    texts = list(texts)
    values = SCORE_FUNCTIONS[model_name](model, tokenizer, texts, max_seq_length, batch_size)
    seconds = time.perf_counter() - start
    passes = FORWARD_PASSES[model_name](tokenizer, texts, max_seq_length, batch_size)
    count = max(len(texts), 1)
    return values, {
        "forward_passes_per_hypothesis": passes / count,
        "seconds_per_hypothesis": seconds / count,
        "distinct_hypotheses": len(texts),
        "seconds": seconds,
    }
