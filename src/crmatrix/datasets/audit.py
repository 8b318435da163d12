"""A dataset's audit: what its queries give away before any system runs.

- name overlap: per query, the share of the gold symbol's name words (split as the engine
  splits identifiers: `parseHTTPResponse` -> parse, http, response) that the query's words
  already hold, case folded, words compared whole (no stemming: `parsing` is not `parse`);
- near duplicates: query pairs whose rapidfuzz token-set ratio is at least NEAR_DUPLICATE
  (one query's words a subset of the other's scores 100), which count one question twice.
  The shorter query must have at least half the longer one's words: token-set ratio scores
  any short query found inside a long one 100, and an identifier query whose words a
  sentence happens to hold is not the sentence's question;
- the query-type mix, and the gold's spread over files (distinct files per task, the files
  most tasks point at: a set aimed at three files measures those three files).

A dataset is flagged when most (> MOSTLY) of its natural-language queries restate the gold's
name (overlap >= RESTATES): such a query is answered by matching the name's words, which is
what the lexical ranker does, so the set flatters lexical ranking and cannot tell a better
semantic ranker apart (../shared/DATASETS.md: queries about behaviour, not names). Only
natural-language queries count: an identifier or short-phrase query names its target on purpose.
"""

from __future__ import annotations

import re
from collections import Counter

from crmatrix.datasets.tasks import Task
from crmatrix.identifiers import words

NEAR_DUPLICATE = 90.0  # token-set ratio, 0..100: 90 tolerates a word of difference in ~10
RESTATES = 0.5  # a query that holds half of the name's words or more restates the name
MOSTLY = 0.5  # flagged above this share of the natural-language queries that name a symbol
TOP_FILES = 5
NATURAL = "natural_language"
_TOKEN = re.compile(r"[A-Za-z0-9_]+")


def name_words(text: str) -> set[str]:
    """The words of every identifier-like token of `text`, case folded."""
    return {w.casefold() for token in _TOKEN.findall(text) for w in words(token)}


def gold_name(gold: dict) -> str | None:
    """The symbol the gold names (file-level gold names none)."""
    return gold.get("symbol") or gold.get("name")


def gold_files(gold: dict) -> list[str]:
    """The files the gold points at: a file set, the gold definitions' files, the documents'
    ids (a docs corpus has one file per document), else the symbol's path (suffix)."""
    if "definitions" in gold:
        return sorted({span[0] for span in gold["definitions"]})
    for key in ("file_set", "ids"):
        if key in gold:
            return sorted(gold[key])
    path = gold.get("file_suffix") or gold.get("path")
    return [path] if path else []


def overlap(query: str, name: str) -> float | None:
    want = name_words(name)
    return len(want & name_words(query)) / len(want) if want else None


def near_duplicates(tasks: list[Task], threshold: float = NEAR_DUPLICATE) -> list[dict]:
    """Pairs (in task order) whose token-set ratio reaches `threshold`, highest first."""
    from rapidfuzz import fuzz, process, utils

    if len(tasks) < 2:
        return []
    queries = [t.query for t in tasks]
    scores = process.cdist(queries, queries, scorer=fuzz.token_set_ratio, processor=utils.default_process,
                           score_cutoff=threshold, workers=1)
    size = [len(utils.default_process(q).split()) for q in queries]
    pairs = [{"a": tasks[i].task_id, "b": tasks[j].task_id, "score": round(float(scores[i, j]), 1),
              "query_a": queries[i], "query_b": queries[j]}
             for i in range(len(tasks)) for j in range(i + 1, len(tasks))
             if scores[i, j] >= threshold and 2 * min(size[i], size[j]) >= max(size[i], size[j])]
    return sorted(pairs, key=lambda p: (-p["score"], p["a"], p["b"]))


def audit(tasks: list[Task]) -> dict:
    per_query = []
    for t in tasks:
        name = gold_name(t.gold)
        per_query.append({"task_id": t.task_id, "query_type": t.query_type, "name": name,
                          "overlap": None if name is None else overlap(t.query, name)})
    natural = [q for q in per_query if q["query_type"] == NATURAL and q["overlap"] is not None]
    restating = [q for q in natural if q["overlap"] >= RESTATES]
    share = len(restating) / len(natural) if natural else None
    files = Counter(f for t in tasks for f in gold_files(t.gold))
    with_files = sum(1 for t in tasks if gold_files(t.gold))
    return {
        "n": len(tasks),
        "query_types": dict(sorted(Counter(t.query_type for t in tasks).items())),
        "name_overlap": {
            "natural_language_named": len(natural),
            "restating": len(restating),
            "restating_share": share,
            "all_words": sum(1 for q in natural if q["overlap"] == 1),
            "any_word": sum(1 for q in natural if q["overlap"] > 0),
            "mean": sum(q["overlap"] for q in natural) / len(natural) if natural else None,
            "per_query": per_query,
        },
        "flagged": None if share is None else share > MOSTLY,
        "near_duplicates": {"threshold": NEAR_DUPLICATE, "pairs": near_duplicates(tasks)},
        "gold_files": {"distinct": len(files), "tasks": with_files,
                       "per_task": len(files) / with_files if with_files else None,
                       "top": [{"path": p, "tasks": n}
                               for p, n in sorted(files.items(), key=lambda x: (-x[1], x[0]))[:TOP_FILES]]},
        "rules": {"restates": f"name-word overlap >= {RESTATES}",
                  "flagged": f"more than {MOSTLY:.0%} of the natural-language queries restate it",
                  "near_duplicate": f"rapidfuzz token_set_ratio >= {NEAR_DUPLICATE:g}"},
    }


def _cell(text: str) -> str:
    """Text in one Markdown table cell: a `|` or a line break would end it."""
    return " ".join(text.split()).replace("|", "\\|")


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def to_text(a: dict, name: str) -> str:
    """The audit as Markdown (readable as plain text too)."""
    o, g = a["name_overlap"], a["gold_files"]
    counted = f"{o['restating']} of {o['natural_language_named']} natural-language queries restate the gold's name"
    if a["flagged"] is None:
        verdict = "Not judged: no natural-language query names a gold symbol."
    elif a["flagged"]:
        verdict = f"**Flagged**: {counted}; the set flatters lexical ranking."
    else:
        verdict = f"Not flagged: {counted}."
    lines = [f"# Dataset audit — {name}", "", f"{a['n']} tasks. {verdict} (Restating: {a['rules']['restates']}; "
             f"flagged when {a['rules']['flagged']}.)", "",
             "| query type | tasks |", "|---|---:|", *[f"| {k} | {v} |" for k, v in a["query_types"].items()], "",
             f"Name overlap of natural-language queries: mean {_pct(o['mean'])}, restating {o['restating']} "
             f"({_pct(o['restating_share'])}), holding every name word {o['all_words']}, any {o['any_word']}.", ""]
    high = [q for q in o["per_query"] if q["query_type"] == NATURAL and q["overlap"] is not None
            and q["overlap"] >= RESTATES]
    if high:
        lines += ["| task | gold name | overlap |", "|---|---|---:|",
                  *[f"| {q['task_id']} | `{q['name']}` | {q['overlap']:.2f} |" for q in high], ""]
    pairs = a["near_duplicates"]["pairs"]
    lines += [f"Near-duplicate query pairs ({a['rules']['near_duplicate']}): {len(pairs)}.", ""]
    if pairs:
        lines += ["| a | b | ratio | query a | query b |", "|---|---|---:|---|---|",
                  *[f"| {p['a']} | {p['b']} | {p['score']:g} | {_cell(p['query_a'])} | {_cell(p['query_b'])} |"
                    for p in pairs], ""]
    per_task = "—" if g["per_task"] is None else f"{g['per_task']:.2f}"
    lines += [f"Gold spread: {g['distinct']} distinct files over {g['tasks']} tasks ({per_task} per task).", ""]
    if g["top"]:
        lines += ["| file | tasks |", "|---|---:|", *[f"| {_cell(f['path'])} | {f['tasks']} |" for f in g["top"]], ""]
    return "\n".join(lines)
