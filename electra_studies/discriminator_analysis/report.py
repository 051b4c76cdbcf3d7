"""`report.md` of a discriminator analysis: one section per analysis that ran, from `results.json`'s values."""


def report(results):
    lines = [
        "# Discriminator analysis",
        "",
        f"Checkpoint: `{results['init_checkpoint']}` "
        f"({results['checkpoint_format']}); command: `{results['command'] or 'library call'}`",
        "",
    ]
    if "ged" in results:
        lines += [
            "## Zero-shot grammatical error detection (FCE)",
            "",
            'Each word\'s p(replaced) at its first piece scores "this word is an error"; threshold (best F0.5) '
            "and temperature fitted on dev. Fractions, not percentages.",
            "",
            "| split | words | error rate | precision | recall | F0.5 | AUROC | AP | Brier | ECE | ECE (T) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for split, values in results["ged"].items():
            lines.append(
                f"| {split} | {values['num_words']} | {values['error_rate']:.3f} | "
                + " | ".join(
                    f"{values[key]:.3f}"
                    for key in (
                        "precision",
                        "recall",
                        "f0_5",
                        "auroc",
                        "average_precision",
                        "brier",
                        "ece",
                        "ece_calibrated",
                    )
                )
                + " |"
            )
        any_split = next(iter(results["ged"].values()))
        lines += [
            "",
            f"Threshold {any_split['threshold']:.4f}, temperature {any_split['temperature']:.3f}. "
            "Reliability diagram: `ged_reliability.png`; every word: `ged_tokens.jsonl`.",
            "",
        ]
    if "calibration" in results:
        lines += [
            "## Calibration on the detector's own task",
            "",
            "Words of the POS corpora corrupted by the checkpoint's generator as in pre-training (label: the "
            "first piece was replaced), threshold and temperature fitted on the even-numbered sentences; with "
            "held-out pre-training TFRecords, every piece of theirs likewise (fitted on even windows); FCE "
            "(out of domain) beside them when `ged` ran.",
            "",
            "| text | words | replaced | precision | recall | F0.5 | AUROC | AP | Brier | ECE | ECE (T) | T |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        rows = [
            (f"{corpus} ({half})", values)
            for corpus, halves in results["calibration"]["in_domain"].items()
            for half, values in halves.items()
        ]
        rows += [
            (f"held-out TFRecords, pieces ({half})", values)
            for half, values in results["calibration"].get("heldout_tfrecords", {}).items()
        ]
        rows += [(f"FCE {split}", values) for split, values in results["calibration"].get("fce", {}).items()]
        for name, values in rows:
            lines.append(
                f"| {name} | {values['num_words']} | {values['error_rate']:.3f} | "
                + " | ".join(
                    f"{values[key]:.3f}"
                    for key in (
                        "precision",
                        "recall",
                        "f0_5",
                        "auroc",
                        "average_precision",
                        "brier",
                        "ece",
                        "ece_calibrated",
                        "temperature",
                    )
                )
                + " |"
            )
        lines.append("")
    if "pos" in results:
        lines += [
            "## By part of speech",
            "",
            "False positives: clean words with p(replaced) > 0.5. With a generator: the share of the tag's words "
            "it replaced, the share of its samples equal to the original, and the discriminator's AUROC on the "
            "corrupted text; [95 % bootstrap interval]. The 15 most frequent tags of each corpus; all in "
            "`results.json`, every word in `pos_words.jsonl`.",
            "",
        ]
        for corpus, by_tag in results["pos"].items():
            lines += [
                f"### {corpus}",
                "",
                "| tag | words | false positives | replaced | sample = original | AUROC |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            for tag, values in list(by_tag.items())[:15]:
                cells = [tag, str(values["words"]), _with_interval(values, "false_positive_rate")]
                if "replaced_rate" in values:
                    equal = values["sample_equals_original"]
                    cells += [
                        _with_interval(values, "replaced_rate"),
                        "-" if equal is None else f"{equal:.3f}",
                        _with_interval(values, "auroc"),
                    ]
                else:
                    cells += ["-", "-", "-"]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    if "disfluency" in results:
        lines += _disfluency_report(results["disfluency"])
    if "blimp" in results:
        lines += _blimp_report(results["blimp"])
    if "representations" in results:
        lines += _representations_report(results["representations"])
    return "\n".join(lines) + "\n"


def _disfluency_report(values):
    lines = [
        "## Switchboard disfluencies",
        "",
        f"{values['words']} words of {values['turns']} turns ({values['turns_unaligned']} turns skipped: the "
        "two files spell them differently). Flagged: p(replaced) > 0.5; AUROC of p(replaced) for the class "
        "against fluent words (0.5: no difference); [95 % bootstrap interval]. Every word: "
        "`switchboard_words.jsonl`.",
        "",
        "| words | count | mean p(replaced) | flagged | AUROC vs fluent |",
        "| --- | --- | --- | --- | --- |",
    ]
    rows = [
        ("fluent", values["by_class"]["fluent"]),
        ("disfluent (reparanda, filled pauses, editing terms)", values["disfluent"]),
    ]
    rows += [(name, entry) for name, entry in values["by_class"].items() if name != "fluent"]
    for name, entry in rows:
        flagged = (
            _with_interval(entry, "flagged_rate") if "flagged_rate_ci" in entry else f"{entry['flagged_rate']:.3f}"
        )
        auroc = _with_interval(entry, "auroc_vs_fluent") if "auroc_vs_fluent" in entry else "-"
        lines.append(f"| {name} | {entry['words']} | {entry['mean_p_replaced']:.3f} | {flagged} | {auroc} |")
    lines += [
        "",
        "Within a tag (disfluent against fluent words of the same tag):",
        "",
        "| tag | disfluent | fluent | mean p disfluent | mean p fluent | AUROC |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {tag} | {entry['disfluent_words']} | {entry['fluent_words']} | {entry['mean_p_disfluent']:.3f} | "
        f"{entry['mean_p_fluent']:.3f} | {_with_interval(entry, 'auroc')} |"
        for tag, entry in list(values["by_tag"].items())[:12]
    ]
    return lines + [""]


def _blimp_report(values):
    has_pll = "accuracy_pll" in values
    lines = [
        "## BLiMP minimal pairs",
        "",
        f"Accuracy {values['accuracy']:.3f} over {values['num_pairs']} pairs (chance 0.5): the grammatical "
        "sentence has the higher discriminator score (mean log p(original) over pieces)"
        + (f"; {values['accuracy_pll']:.3f} by the generator's pseudo-log-likelihood" if has_pll else "")
        + ". Every pair: `blimp_pairs.jsonl`.",
        "",
        "| paradigm (worst and best) | discriminator |" + (" generator PLL |" if has_pll else ""),
        "| --- | --- |" + (" --- |" if has_pll else ""),
    ]
    ranked = sorted(values["by_paradigm"].items(), key=lambda item: item[1])
    shown = ranked if len(ranked) <= 10 else ranked[:5] + ranked[-5:]  # the five worst and the five best
    lines += [
        f"| {name} | {value:.3f} |" + (f" {values['by_paradigm_pll'][name]:.3f} |" if has_pll else "")
        for name, value in shown
    ]
    return lines + [""]


def _representations_report(values):
    corpora = list(values["most_frequent_tag"])
    lines = [
        "## Representations",
        "",
        "Words of the POS corpora at their first piece ("
        + ", ".join(
            f"{corpus}: {counts['train']} probe-training / {counts['test']} test words"
            for corpus, counts in values["words"].items()
        )
        + "). Anisotropy: mean cosine of random word pairs. "
        "Probe: logistic regression on the frozen layer, accuracy on the odd-numbered sentences; the most "
        "frequent training tag of each word scores "
        + ", ".join(f"{value:.3f} ({corpus})" for corpus, value in values["most_frequent_tag"].items())
        + ". Every prediction: `probe_predictions.jsonl`.",
        "",
        "| model | layer | anisotropy | " + " | ".join(f"probe {corpus}" for corpus in corpora) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in corpora) + " |",
    ]
    for name, layers in values["by_model"].items():
        lines += [
            f"| {name} | {entry['layer']} | {entry['anisotropy']:.3f} | "
            + " | ".join(f"{entry['probe_accuracy'][corpus]:.3f}" for corpus in corpora)
            + " |"
            for entry in layers
        ]
    lines += [
        "",
        "Linear CKA (rows: the first model's layers, columns: the second's; 0 = embeddings); "
        "heat maps: `representations_cka.png`.",
        "",
    ]
    for pair, matrix in values["cka"].items():
        first, second = pair.split("|")
        lines += [
            f"{first} / {second}:",
            "",
            "| layer | " + " | ".join(str(j) for j in range(len(matrix[0]))) + " |",
            "| --- |" + " --- |" * len(matrix[0]),
        ]
        lines += [f"| {i} | " + " | ".join(f"{value:.3f}" for value in row) + " |" for i, row in enumerate(matrix)]
        lines.append("")
    return lines


def _with_interval(values, key):
    value, (low, high) = values[key], values[f"{key}_ci"]
    if value is None:
        return "-"
    return f"{value:.3f}" + ("" if low is None else f" [{low:.3f}, {high:.3f}]")
