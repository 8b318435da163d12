"""The knob table as a Markdown page (docs/knobs.md), made from `table.KNOBS` so it cannot drift."""

from __future__ import annotations

from crmatrix.engine.knobs import table
from crmatrix.engine.knobs.table import GATING, INDEX, MODEL_VAR, QUERY, TOKENIZER, Knob

REGENERATE = ".venv/bin/crmatrix knobs > docs/knobs.md"


def _default(knob: Knob) -> str:
    if knob.gate is not None:
        return f"auto ({knob.gate.name} languages), else {knob.kind.show(knob.default)}"
    return knob.kind.show(knob.default)


def markdown() -> str:
    rows = [f"| `{k.var}` | {k.phase} | {k.codelens or '—'} | {k.kind.values()} | {_default(k)} | {k.doc} |"
            for k in table.KNOBS]
    gates = {k.gate.name: k.gate for k in table.KNOBS if k.gate is not None}
    gate_lines = [f"- {name} languages: {', '.join(sorted(gate.languages))}" for name, gate in gates.items()]
    return "\n".join([
        "# Arm knobs",
        "",
        "Every knob of the builtin engine, generated from its one table; how arms use them is in",
        "[arms](arms.md), and the [README](../README.md) has the rest.",
        "",
        "<!-- Generated from src/crmatrix/engine/knobs/table.py: edit the table, not this page; tests/test_knobs.py",
        f"     fails while they disagree. Regenerate with: {REGENERATE} -->",
        "",
        "An arm is a set of environment variables (`arms:` in the config). These are the ones the",
        "builtin engine reads; their meaning follows CodeLens's (`ENGINE_KNOBS.md`), so one arm",
        "means the same to both engines. The `CRMATRIX_` knobs are the builtin engine's own.",
        "",
        "| variable | phase | CodeLens | values | default | what it does |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"Phase: {INDEX} knobs change a symbol's embedding text, so an arm that sets one to a new",
        f"value builds its own index of each corpus; {QUERY} knobs change ranking only, and arms",
        f"differing only in them share one index. The {TOKENIZER} knobs change how BM25 reads the",
        "documents and the queries (`bm25`, `file-bm25`; hybrid fuses the lexical ranker, not BM25):",
        "an arm that sets one to a value other than its default builds its own index, whose BM25 is",
        "tokenized its way and whose vectors come from the embedding cache (its embedding texts are",
        "the same); at the defaults they leave an index's key as it was before they existed.",
        f"The {GATING} knobs decide the defaults of the",
        "knobs whose default is `auto`: unset, such a knob is on when gating is on and the",
        "language is one of its gate's:",
        "",
        *gate_lines,
        "",
        "On/off accepts 1/true/yes/on and 0/false/no/off. A whole number outside its range is",
        "clamped and the clamp noted (by `crmatrix validate` and in each run's provenance,",
        "`system_run.knobs.notes`); a value of the wrong form, or an unknown `CODELENS_` or",
        "`CRMATRIX_` variable (with the closest known name), stops the run at config validation.",
        "Jobs get each value in one spelling, so respelling a knob re-runs nothing.",
        "",
        f"`{MODEL_VAR}` is no knob but picks the arm's embedding model (a name under `models:`);",
        "an arm with another model builds its own index (two names of one model, equal in definition",
        "and files, share one).",
        "",
    ])
