"""The discriminator's hidden representations, alone and against another checkpoint's (`compare_checkpoint`, e.g.
the MLM twin trained on the same data with the same compute).

Items are words of the POS corpora (`pos.read_corpora`: the Penn Treebank sample and UD English-EWT), up to
`max_words` per corpus (whole sentences, from the start), each represented at its first piece by every hidden state
of the backbone (`ElectraBackbone.hidden_states`: the embedding block's output, then each Transformer layer's), with
each model's own tokeniser. Per model and layer:

- anisotropy: the mean cosine of random pairs of distinct words' vectors (`analysis.similarity.anisotropy`);
- a linear POS probe: multinomial logistic regression (scikit-learn, standardised features, L2 C=1) on the frozen
  vectors, trained on the even-numbered sentences of each corpus and scored on the odd ones, beside the accuracy of
  always predicting the word's most frequent training tag (unseen words: the most frequent tag), a lexical baseline;

and linear CKA (`analysis.similarity.linear_cka`) between every pair of layers, of one model and across the two,
on the words of both corpora pooled. Every probe prediction goes to `probe_predictions.jsonl`, from which the
accuracies are recomputed; the vectors themselves are not written (they are deterministic: re-run to get them).
"""

import os
import warnings

import numpy as np

from electra_studies.discriminator_analysis.word_scores import length_sorted_batches
from electra_tf.analysis.similarity import anisotropy, linear_cka
from electra_tf.io_utils import atomic_write_json_lines, read_json_lines

PREDICTIONS_FILE = "probe_predictions.jsonl"
NUM_PAIRS = 10000


def first_sentences(sentences, max_words):
    """The longest prefix of `sentences` with at most `max_words` words (at least one sentence)."""
    kept, words = [], 0
    for sentence in sentences:
        if kept and words + len(sentence.words) > max_words:
            break
        kept.append(sentence)
        words += len(sentence.words)
    return kept


def word_states(backbone, tokenizer, sentences, max_seq_length=128, batch_size=64):
    """float32 [num_layers + 1, words, hidden]: every hidden state at each word's first piece, words in sentence
    order (sentences longer than a window are split into windows of whole words, as for tagging)."""
    from finetune.tagging.features import featurize

    features = featurize(sentences, tokenizer, max_seq_length, tag_ids={})
    inputs = features.inputs()
    by_window = [None] * len(features.windows)
    for rows, batch in length_sorted_batches(inputs, batch_size):
        states = np.stack([np.asarray(state) for state in backbone.hidden_states(batch, training=False)])
        for offset, row in enumerate(rows):
            positions = features.word_positions[row, : features.windows[row][2]]
            by_window[row] = states[:, offset, positions]  # [layers, words of the window, hidden]
    return np.concatenate(by_window, axis=1).astype(np.float32)


def corpus_words(sentences):
    """(words, tags, sentence ids, word indices): arrays over every word of `sentences`, in order."""
    words = np.array([word for sentence in sentences for word in sentence.words], dtype=object)
    tags = np.array([tag for sentence in sentences for tag in sentence.tags], dtype=object)
    sentence_ids = np.array([index for index, sentence in enumerate(sentences) for _ in sentence.words])
    word_indices = np.array([position for sentence in sentences for position in range(len(sentence.words))])
    return words, tags, sentence_ids, word_indices


def most_frequent_tag_accuracy(train_words, train_tags, test_words, test_tags):
    """Accuracy of tagging each test word with its most frequent training tag (ties: the tag first seen), unseen
    words with the most frequent tag overall."""
    counts = {}
    for word, tag in zip(train_words, train_tags):
        counts.setdefault(word, {}).setdefault(tag, 0)
        counts[word][tag] += 1
    overall = {}
    for tag in train_tags:
        overall[tag] = overall.get(tag, 0) + 1
    fallback = max(overall, key=overall.get)
    predicted = [max(counts[word], key=counts[word].get) if word in counts else fallback for word in test_words]
    return float(np.mean(np.array(predicted) == np.asarray(test_tags)))


def probe(train_vectors, train_tags, test_vectors, seed=0):
    """Predicted tags of `test_vectors` by a logistic regression on standardised `train_vectors` (scikit-learn, which
    `analysis.check_modules` requires before any work)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=500, random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # lbfgs stopping at max_iter on the embedding layer
        model.fit(train_vectors, train_tags)
    return model.predict(test_vectors)


def run_representations(models, tokenizers, corpora, output_dir, max_seq_length=128, max_words=10000, seed=0):
    """`models`: {name: ElectraBackbone} (one or two), `tokenizers`: {name: its tokenizer}, `corpora`: the POS corpora
    (`pos.read_corpora`, none empty), of which the first `max_words` words are read. Writes `probe_predictions.jsonl`
    and `representations_cka.png`; returns {"words", "most_frequent_tag", "by_model", "cka"}."""
    corpora = {corpus: first_sentences(sentences, max_words) for corpus, sentences in corpora.items()}
    states = {
        name: {
            corpus: word_states(backbone, tokenizers[name], sentences, max_seq_length)
            for corpus, sentences in corpora.items()
        }
        for name, backbone in models.items()
    }
    results = {"words": {}, "most_frequent_tag": {}}
    predictions = []
    for corpus, sentences in corpora.items():
        words, tags, sentence_ids, word_indices = corpus_words(sentences)
        train = sentence_ids % 2 == 0
        lowered = np.array([word.lower() for word in words], dtype=object)
        results["words"][corpus] = {"train": int(train.sum()), "test": int((~train).sum())}
        results["most_frequent_tag"][corpus] = most_frequent_tag_accuracy(
            lowered[train], tags[train], lowered[~train], tags[~train]
        )
        for name in models:
            for layer, vectors in enumerate(states[name][corpus]):
                predicted = probe(vectors[train], tags[train], vectors[~train], seed)
                predictions += [
                    {
                        "model": name,
                        "layer": layer,
                        "corpus": corpus,
                        "sentence_id": int(sentence),
                        "word_index": int(position),
                        "word": word,
                        "tag": tag,
                        "predicted": guess,
                    }
                    for sentence, position, word, tag, guess in zip(
                        sentence_ids[~train], word_indices[~train], words[~train], tags[~train], predicted
                    )
                ]
    path = os.path.join(output_dir, PREDICTIONS_FILE)
    atomic_write_json_lines(path, predictions)
    accuracies = probe_accuracies(path)
    pooled = {name: np.concatenate([states[name][corpus] for corpus in corpora], axis=1) for name in models}
    results["by_model"] = {
        name: [
            {
                "layer": layer,
                "anisotropy": anisotropy(vectors, NUM_PAIRS, seed),
                "probe_accuracy": accuracies[name][layer],
            }
            for layer, vectors in enumerate(pooled[name])
        ]
        for name in models
    }
    names = list(models)
    results["cka"] = {
        f"{first}|{second}": [[linear_cka(x, y) for y in pooled[second]] for x in pooled[first]]
        for index, first in enumerate(names)
        for second in names[index:]
    }
    plot_cka(os.path.join(output_dir, "representations_cka.png"), results["cka"])
    return results


def probe_accuracies(path):
    """{model: {layer: {corpus: accuracy}}} recomputed from a `probe_predictions.jsonl` file."""
    hits = {}
    for record in read_json_lines(path):
        hits.setdefault(record["model"], {}).setdefault(record["layer"], {}).setdefault(record["corpus"], []).append(
            record["tag"] == record["predicted"]
        )
    return {
        model: {
            layer: {corpus: float(np.mean(values)) for corpus, values in by_corpus.items()}
            for layer, by_corpus in by_layer.items()
        }
        for model, by_layer in hits.items()
    }


def plot_cka(path, cka):
    """One heat map per model pair: rows the first model's layers, columns the second's."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(1, len(cka), figsize=(3.6 * len(cka), 3.4), squeeze=False)
    for axis, (pair, matrix) in zip(axes[0], cka.items()):
        first, second = pair.split("|")
        matrix = np.array(matrix)
        image = axis.imshow(matrix, vmin=0, vmax=1, cmap="viridis", origin="lower")
        axis.set_xticks(range(matrix.shape[1]))
        axis.set_yticks(range(matrix.shape[0]))
        axis.set_xlabel(f"{second} layer (0 = embeddings)")
        axis.set_ylabel(f"{first} layer")
        axis.set_title(f"linear CKA: {first} / {second}", fontsize=9)
        figure.colorbar(image, ax=axis, fraction=0.046)
    figure.tight_layout()
    temporary = path + ".tmp.png"
    figure.savefig(temporary, dpi=100)
    pyplot.close(figure)
    os.replace(temporary, path)
