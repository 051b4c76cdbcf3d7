"""Switchboard disfluencies: does the discriminator's p(replaced) single out the disfluent words of speech?

The NLTK Switchboard sample has each turn twice: POS-tagged (`tagged`, `word/TAG`) and with Shriberg's disfluency
markup (`disfluency`): `{F uh, }` filled pause, `{E I mean }` editing term, `{D well }` discourse marker, `{C and }`
coordinating conjunction, `{A ...}` aside, `[ reparandum + repair ]` (nested, the repair may be empty), `/` and `-/`
slash units, `#` overlap, `(( ))` uncertain words (the tagged file's `MUMBLEx` when empty), `<Laughter>` noises. A
word's class is that of its innermost brace, else "reparandum" when it stands before the `+` of an open bracket, else
"fluent" (repairs are fluent). The tagged
words are scored (`word_scores`, first piece, the turn as one text) and take the class of their first letter in the
markup; a turn is used only when both files spell it with the same letters and digits (apostrophes, punctuation and
case aside), and turns are paired in file order by that spelling (`difflib`), so a turn missing from one file is
skipped, not misaligned. Punctuation words have no class.

Reported: per class, the share of its words with p(replaced) > 0.5 and the AUROC of p(replaced) for "this word is of
the class" against the fluent words; the same for the disfluent words together (reparanda, filled pauses, editing
terms); and per POS tag with enough words of both kinds, the AUROC of disfluent against fluent words of that tag (so
that "uh" is compared with other interjections, "the" in a reparandum with other determiners). Bootstrap 95 %
intervals. Every word goes to `switchboard_words.jsonl`, from which the summary is recomputed.
"""

import difflib
import os
import re

import numpy as np

from electra_studies.discriminator_analysis.pos import bootstrap_ci
from electra_studies.discriminator_analysis.word_scores import word_logits
from electra_tf.analysis import detection_metrics
from electra_tf.errors import DataError
from electra_tf.io_utils import atomic_write_json_lines, read_json_lines
from electra_tf.text_files import read_text

WORDS_FILE = "switchboard_words.jsonl"
BRACE_CLASSES = {"F": "filled_pause", "E": "editing_term", "D": "discourse_marker", "C": "conjunction", "A": "aside"}
DISFLUENT = ("reparandum", "filled_pause", "editing_term")
CLASSES = ("fluent",) + DISFLUENT + ("discourse_marker", "conjunction", "aside")
TURN = re.compile(r"^([AB]\.\d+):\s?(.*)$")
NOT_SPELLED = re.compile(r"[^0-9a-z]")
NOISE = re.compile(r"<[^>]*>")  # <Laughter>, also glued to punctuation ("<laughter>.")
UNINTELLIGIBLE = "MUMBLEx"  # the tagged file's word for the markup's empty "(( ))"


def switchboard_paths(data_dir):
    folder = os.path.join(data_dir, "tagging", "switchboard")
    return os.path.join(folder, "tagged"), os.path.join(folder, "disfluency")


def spelling(text):
    """The letters and digits of `text`, lower-cased: what both files agree on."""
    return NOT_SPELLED.sub("", text.replace(UNINTELLIGIBLE, "").lower())


def markup_classes(text):
    """(spelling, classes) of one turn of the disfluency markup: the turn's letters and digits, and the class of
    each of them (a list as long as the spelling)."""
    braces, brackets = [], []  # brace classes; per open bracket, True until its "+"
    letters, classes = [], []
    for token in NOISE.sub(" ", text).split():
        if token.startswith("{") and len(token) == 2:
            braces.append(BRACE_CLASSES.get(token[1], "fluent"))
        elif token == "}":
            if braces:
                braces.pop()
        elif token == "[":
            brackets.append(True)
        elif token == "+":
            if brackets:
                brackets[-1] = False
        elif token == "]":
            if brackets:
                brackets.pop()
        else:
            spelled = spelling(token)
            word_class = braces[-1] if braces else "reparandum" if any(brackets) else "fluent"
            letters.append(spelled)
            classes.extend([word_class] * len(spelled))
    return "".join(letters), classes


def tagged_words(text):
    """(words, tags) of one turn of the tagged file (`word/TAG` tokens)."""
    pairs = [token.rsplit("/", 1) for token in text.split()]
    return tuple(pair[0] for pair in pairs if len(pair) == 2), tuple(pair[1] for pair in pairs if len(pair) == 2)


def check_switchboard(data_dir):
    for path in switchboard_paths(data_dir):
        if not os.path.isfile(path):
            raise DataError(
                f"{path} does not exist: data_dir must hold tagging/switchboard/{{tagged,disfluency}} "
                "(the NLTK Switchboard sample)",
                arguments=("data_dir",),
            )


def _turns(path, encoding, encoding_errors):
    turns = []
    for number, line in enumerate(read_text(path, encoding, encoding_errors).split("\n"), start=1):
        match = TURN.match(line.strip())
        if match:
            turns.append((number, match.group(1), match.group(2)))
    if not turns:
        raise DataError(
            f"{path} holds no 'A.n:' / 'B.n:' turn: data_dir must hold the NLTK Switchboard sample",
            arguments=("data_dir",),
        )
    return turns


def read_switchboard(data_dir, max_turns=None, encoding="utf-8", encoding_errors="strict"):
    """(turns, num_unaligned): turns are dicts with `line` (of the tagged file), `turn` (`A.n`), `words`, `tags`
    and `classes` (a class per word, None for punctuation); `max_turns` keeps the first aligned turns. Files are
    decoded with `encoding` / `encoding_errors` (see `electra_tf.text_files`)."""
    check_switchboard(data_dir)
    tagged_path, markup_path = switchboard_paths(data_dir)
    tagged = [
        (number, turn, *tagged_words(text)) for number, turn, text in _turns(tagged_path, encoding, encoding_errors)
    ]
    markup = [markup_classes(text) for _, _, text in _turns(markup_path, encoding, encoding_errors)]
    tagged_spellings = [spelling("".join(words)) for _, _, words, _ in tagged]
    matcher = difflib.SequenceMatcher(None, tagged_spellings, [spelled for spelled, _ in markup], autojunk=False)
    turns = []
    for tagged_start, markup_start, size in matcher.get_matching_blocks():
        for offset in range(size):
            number, turn, words, tags = tagged[tagged_start + offset]
            _, letter_classes = markup[markup_start + offset]
            if not words or not letter_classes:
                continue
            classes, position = [], 0
            for word in words:
                spelled = spelling(word)
                classes.append(letter_classes[position] if spelled else None)
                position += len(spelled)
            turns.append({"line": number, "turn": turn, "words": words, "tags": tags, "classes": classes})
    num_spelled = sum(1 for spelled in tagged_spellings if spelled)
    turns.sort(key=lambda turn: turn["line"])
    return turns[:max_turns], num_spelled - len(turns)


def scored_words(discriminator, tokenizer, turns, max_seq_length=128):
    """Per-word records (`line`, `turn`, `word_index`, `word`, `tag`, `disfluency`, `p_replaced`)."""
    from finetune.tagging.readers import TaggedSentence

    sentences = [TaggedSentence(turn["words"], turn["tags"], "switchboard", turn["line"]) for turn in turns]
    logits = word_logits(discriminator, tokenizer, sentences, max_seq_length)
    return [
        {
            "line": turn["line"],
            "turn": turn["turn"],
            "word_index": index,
            "word": word,
            "tag": tag,
            "disfluency": word_class,
            "p_replaced": float(detection_metrics.sigmoid(logit)),
        }
        for turn, turn_logits in zip(turns, logits)
        for index, (word, tag, word_class, logit) in enumerate(
            zip(turn["words"], turn["tags"], turn["classes"], turn_logits)
        )
    ]


def _auroc_with_interval(labels, p, num_resamples, seed):
    if not 0 < labels.sum() < len(labels):
        return None, [None, None]
    return (
        float(detection_metrics.auroc(labels, p)),
        bootstrap_ci(detection_metrics.auroc, [labels, p], num_resamples, seed),
    )


def _against_fluent(p_class, p_fluent, num_resamples, seed):
    labels = np.concatenate([np.ones(len(p_class)), np.zeros(len(p_fluent))])
    auroc, interval = _auroc_with_interval(labels, np.concatenate([p_class, p_fluent]), num_resamples, seed)
    flagged = (p_class > 0.5).astype(np.float64)
    return {
        "words": int(len(p_class)),
        "mean_p_replaced": float(np.mean(p_class)),
        "flagged_rate": float(np.mean(flagged)),
        "flagged_rate_ci": bootstrap_ci(np.mean, [flagged], num_resamples, seed),
        "auroc_vs_fluent": auroc,
        "auroc_vs_fluent_ci": interval,
    }


def summary(records, num_unaligned=0, num_resamples=200, seed=0, min_words=20):
    """{"turns", "turns_unaligned", "by_class", "disfluent", "by_tag"} of the per-word records (see module doc)."""
    classed = [record for record in records if record["disfluency"] is not None]
    p_by_class = {
        name: np.array([record["p_replaced"] for record in classed if record["disfluency"] == name]) for name in CLASSES
    }
    p_fluent = p_by_class["fluent"]
    if not len(p_fluent):
        raise DataError(
            "no fluent Switchboard word was aligned: the tagged and disfluency files do not spell the same turns",
            arguments=("data_dir",),
        )
    results = {
        "turns": len({record["line"] for record in records}),
        "turns_unaligned": num_unaligned,
        "words": len(classed),
        "by_class": {
            name: _against_fluent(values, p_fluent, num_resamples, seed)
            for name, values in p_by_class.items()
            if name != "fluent" and len(values)
        },
        "disfluent": _against_fluent(
            np.concatenate([p_by_class[name] for name in DISFLUENT]), p_fluent, num_resamples, seed
        ),
    }
    results["by_class"]["fluent"] = {
        "words": int(len(p_fluent)),
        "mean_p_replaced": float(np.mean(p_fluent)),
        "flagged_rate": float(np.mean(p_fluent > 0.5)),
    }
    by_tag = {}
    for record in classed:
        if record["disfluency"] == "fluent" or record["disfluency"] in DISFLUENT:
            kind = "fluent" if record["disfluency"] == "fluent" else "disfluent"
            by_tag.setdefault(record["tag"], {"fluent": [], "disfluent": []})[kind].append(record["p_replaced"])
    results["by_tag"] = {}
    for tag, groups in sorted(by_tag.items(), key=lambda item: -len(item[1]["disfluent"])):
        if min(len(groups["fluent"]), len(groups["disfluent"])) < min_words:
            continue
        fluent, disfluent = np.array(groups["fluent"]), np.array(groups["disfluent"])
        labels = np.concatenate([np.ones(len(disfluent)), np.zeros(len(fluent))])
        auroc, interval = _auroc_with_interval(labels, np.concatenate([disfluent, fluent]), num_resamples, seed)
        results["by_tag"][tag] = {
            "fluent_words": len(fluent),
            "disfluent_words": len(disfluent),
            "mean_p_fluent": float(np.mean(fluent)),
            "mean_p_disfluent": float(np.mean(disfluent)),
            "auroc": auroc,
            "auroc_ci": interval,
        }
    return results


def run_disfluency(discriminator, tokenizer, switchboard, output_dir, max_seq_length=128, num_resamples=200, seed=0):
    """Scores the aligned Switchboard turns (`switchboard`: `read_switchboard`'s), writes `switchboard_words.jsonl`,
    returns `summary`."""
    turns, num_unaligned = switchboard
    records = scored_words(discriminator, tokenizer, turns, max_seq_length)
    path = os.path.join(output_dir, WORDS_FILE)
    atomic_write_json_lines(path, records)
    return summary(read_json_lines(path), num_unaligned, num_resamples, seed)
