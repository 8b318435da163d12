"""Every knob of the builtin engine, once: its variable, field, kind, default, phase and meaning.

Parsing, validation, canonical spelling, clamp notes, the index-time fields and the docs
table (docs/knobs.md) all read `KNOBS`; adding a row adds a knob everywhere. Readers look
it up as `table.KNOBS` at call time, never by importing the name, so a test can add a row.

The variable names, defaults, ranges and the auto gating follow ENGINE_KNOBS.md and the
CodeLens source they describe, so an arm means the same thing to both engines. The
CRMATRIX_ variables are the builtin engine's own knobs, which CodeLens does not have: at query
time, how hybrid fuses its two rankers and one-hop expansion over the corpus's reference graph;
at index time, how BM25 reads text (its tokenizer, stored with the index).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crmatrix.engine.knobs.kinds import Choice, Flag, Kind, Language, Share, Whole

PREFIX = "CODELENS_"
OWN_PREFIX = "CRMATRIX_"
MODEL_VAR = "CRMATRIX_MODEL"  # picks the embedding model: config validation checks it; it is no knob

INDEX = "index-time"  # changes a symbol's embedding text: arms differing in one build different indexes
QUERY = "query-time"  # changes ranking only: arms differing only in these share an index
GATING = "gating"     # decides the defaults of gated knobs of both phases, so it may change the index
# changes how BM25 reads documents and queries: arms differing in one build their own index (its
# BM25 differs), whose embedding texts, and so vectors, are those of the index without it
TOKENIZER = "index-time (BM25)"


@dataclass(frozen=True)
class Gate:
    """The languages on which auto gating turns a knob on (CodeLens's `language_supports_*`,
    with their extension aliases, so a hand-set AUTO_LANG=rs gates like AUTO_LANG=rust)."""

    name: str
    languages: frozenset[str]


SPARSE_LANGS = Gate("sparse", frozenset({"rs", "rust", "cpp", "cc", "cxx", "c++", "c", "go", "golang", "java", "kt",
                                         "kotlin", "scala", "cs", "csharp"}))
# Phase 2m: 2e measured negative or inert on JS/TS, while 2b/2c stay on there.
NL_STACK_LANGS = Gate("NL stack", SPARSE_LANGS.languages | {"ts", "typescript", "tsx", "js", "javascript", "jsx"})


@dataclass(frozen=True)
class Knob:
    var: str
    field: str       # its attribute of `Knobs` and key in index fields
    kind: Kind
    default: Any     # its value when unset; a gated knob's when the gating leaves it off
    phase: str       # INDEX, TOKENIZER, QUERY or GATING
    codelens: str    # the CodeLens phase it reproduces (ENGINE_KNOBS.md); "" for crmatrix's own
    doc: str
    gate: Gate | None = None  # unset, it is on when auto gating is on and the language is in the gate


AUTO = Knob("CODELENS_EMBED_HINT_AUTO", "auto", Flag(), True, GATING, "2j/2m",
            "gates the knobs marked `auto` by the language; an explicit variable always beats it")
AUTO_LANG = Knob("CODELENS_EMBED_HINT_AUTO_LANG", "language", Language(), None, GATING, "2j/2m",
                 "the language auto gating looks at; unset, the corpus's dominant language")

KNOBS: tuple[Knob, ...] = (
    Knob("CODELENS_EMBED_HINT_LINES", "hint_lines", Whole(1, 10), 1, INDEX, "2",
         "non-comment body lines in the hint of a symbol without a doc"),
    Knob("CODELENS_EMBED_HINT_CHARS", "hint_chars", Whole(60, 512), 60, INDEX, "2",
         "characters of the hint (and of the NL and API parts)"),
    Knob("CODELENS_EMBED_HINT_INCLUDE_COMMENTS", "nl_tokens", Flag(), False, INDEX, "2b",
         "appends ` · NL: ` with the body's NL-shaped comments and string literals", NL_STACK_LANGS),
    Knob("CODELENS_EMBED_HINT_INCLUDE_API_CALLS", "api_calls", Flag(), False, INDEX, "2c",
         "appends ` · API: ` with the body's `Type::method` calls", NL_STACK_LANGS),
    Knob("CODELENS_EMBED_HINT_STRICT_LITERALS", "strict_literals", Flag(), False, INDEX, "2h",
         "in 2b, drops literals holding format specifiers or starting like errors and logs"),
    Knob("CODELENS_EMBED_HINT_STRICT_COMMENTS", "strict_comments", Flag(), False, INDEX, "2i",
         "in 2b, drops TODO/FIXME/HACK-style comments"),
    Knob("CRMATRIX_BM25_WHOLE_IDENTIFIERS", "bm25_whole_identifiers", Flag(), False, TOKENIZER, "",
         "BM25 also reads each identifier that is not just its one word whole, lowercased and unstemmed, "
         "before its words (`load_config` -> `load_config`, `load`, `config`), in documents and queries"),
    Knob("CRMATRIX_BM25_STEM", "bm25_stem", Flag(), True, TOKENIZER, "",
         "BM25 stems its words with Snowball's English stemmer (`parsing` -> `pars`)"),
    Knob("CRMATRIX_BM25_STOPWORDS", "bm25_stopwords", Flag(), True, TOKENIZER, "",
         "BM25 drops bm25s's English stopwords (`the`, `is`, `for`, ...)"),
    Knob("CODELENS_RANK_SPARSE_TERM_WEIGHT", "sparse", Flag(), False, QUERY, "2e",
         "after fusion, adds a bonus for the share of query terms found whole in a symbol's name, "
         "signature and path", SPARSE_LANGS),
    Knob("CODELENS_RANK_SPARSE_THRESHOLD", "sparse_threshold", Whole(10, 90, per=100, unit="%"), 0.60, QUERY, "2e",
         "the term coverage below which 2e adds nothing"),
    Knob("CODELENS_RANK_SPARSE_MAX", "sparse_max", Whole(5, 50, per=1), 20.0, QUERY, "2e",
         "2e's bonus at full coverage, on the lexical 0..100 scale"),
    AUTO,
    AUTO_LANG,
    Knob("CRMATRIX_FUSION", "fusion", Choice(("codelens", "rrf", "wsi", "dense-only")), "codelens", QUERY, "",
         "how hybrid combines its rankers: `codelens` lexical first with a few semantic hits folded in (at most 6), "
         "`rrf` reciprocal rank fusion, `wsi` weighted min-max normalized scores, `dense-only` semantic alone"),
    Knob("CRMATRIX_RRF_K", "rrf_k", Whole(0, 1000), 60, QUERY, "", "RRF's k"),
    Knob("CRMATRIX_WSI_WEIGHT", "wsi_weight", Share(), 0.5, QUERY, "",
         "the semantic ranker's weight in `wsi`; lexical gets the rest"),
    Knob("CRMATRIX_SEMANTIC_DEPTH", "semantic_depth", Whole(1, 1000), 100, QUERY, "",
         "semantic candidates a fusion sees"),
    Knob("CRMATRIX_GRAPH_EXPAND", "graph_expand", Flag(), False, QUERY, "",
         "one-hop neighbours of the top hits in the corpus's graph join, scored max(own, seed × decay)"),
    Knob("CRMATRIX_GRAPH_SEEDS", "graph_seeds", Whole(1, 100), 5, QUERY, "", "top hits graph expansion starts from"),
    Knob("CRMATRIX_GRAPH_DECAY", "graph_decay", Share(), 0.5, QUERY, "", "a neighbour's share of its seed's score"),
)


def by_var() -> dict[str, Knob]:
    return {k.var: k for k in KNOBS}


def by_field() -> dict[str, Knob]:
    return {k.field: k for k in KNOBS}


def fields(*phases: str) -> list[str]:
    """The fields of the knobs of these phases, in table order."""
    return [k.field for k in KNOBS if k.phase in phases]


def tokenizer_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """The BM25 tokenizer's knobs among field `values` that differ from their defaults, in table
    order: an index built at the defaults names none, so the indexes built before these knobs
    existed keep their key, meta and bases."""
    return {k.field: values[k.field] for k in KNOBS
            if k.phase == TOKENIZER and k.field in values and values[k.field] != k.default}


def index_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """What an index is built from, of field `values` (a `Knobs`'s, or an index's meta): every
    knob of the embedding text (None where `values` lacks it), then the tokenizer's that differ
    from their defaults."""
    return {**{f: values.get(f) for f in fields(INDEX)}, **tokenizer_fields(values)}


def ours(var: str) -> bool:
    """Whether `var` is a knob's name space (arms may carry other systems' variables)."""
    return var.startswith(PREFIX) or (var.startswith(OWN_PREFIX) and var != MODEL_VAR)
