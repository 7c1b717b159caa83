"""An audit as text: the command's table, the card's section and its known limitation, the
Croissant limitation. One wording everywhere."""


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def baseline_result(row: dict) -> str:
    """ "61.3 % (95 % CI 55.0 % to 67.2 %)", or why it was skipped."""
    if "skipped" in row:
        return f"skipped: {row['skipped']}"
    low, high = row["ci95"]
    return f"{_percent(row['accuracy'])} (95 % CI {_percent(low)} to {_percent(high)})"


def audit_table_lines(audit: dict) -> list[str]:
    source = audit.get("source", {})
    head = f"{source.get('kind', 'pools')} {source.get('name', '')}".strip()
    lines = [
        f"Shortcut audit of {head}: {audit['questions']} questions, {audit['candidates']} candidates, "
        f"chance {_percent(audit['chance'])}",
    ]
    width = max(len(row["name"]) for row in audit["baselines"])
    for row in audit["baselines"]:
        flag = "  ABOVE CHANCE" if row.get("above_chance") else ""
        lines.append(f"  {row['name']:<{width}}  {baseline_result(row)}{flag}")
    return lines


def limitation_sentence(audit: dict) -> str:
    """The known limitation an audit above chance makes ("" when none is)."""
    flagged = [row for row in audit.get("baselines", []) if row.get("above_chance")]
    if not flagged:
        return ""
    found = "; ".join(f"{row['label']}: {baseline_result(row)}" for row in flagged)
    return (
        f"Context-free baselines pick the ground truth above chance ({_percent(audit['chance'])}) from the "
        f"candidates alone, without reading the context: {found}. Part of a system's accuracy on this test "
        "set may come from these cues rather than from understanding the dialogue; report these baselines "
        "beside any result."
    )


def shortcut_rows(result: dict) -> list[dict]:
    """One row per baseline for the pages: its label, accuracy, interval and whether it is flagged."""
    return [
        {
            "name": row["name"],
            "label": row["label"],
            "accuracy": row.get("accuracy"),
            "low": row["ci95"][0] if "ci95" in row else None,
            "high": row["ci95"][1] if "ci95" in row else None,
            "above_chance": row.get("above_chance", False),
            "skipped": row.get("skipped", ""),
        }
        for row in result.get("baselines", [])
    ]


def balance_sentence(balance: dict | None) -> str:
    """What a shortcut-aware build did, in one sentence ("" for a build that chose at random)."""
    if not balance:
        return ""
    unbalanced = balance["unbalanced"]
    fate = "left out" if balance.get("drop_unbalanced") else "kept"
    return (
        "False candidates were chosen shortcut-aware among those the filter rules kept: the ground truth's "
        "place by length, by similarity to the other candidates and by a surface classifier's score was "
        f"spread evenly over the questions ({balance['rounds']} adversarial filtering rounds, seed {balance['seed']}); "
        f"{unbalanced} of {balance['questions']} questions could not be balanced ({fate})."
    )
