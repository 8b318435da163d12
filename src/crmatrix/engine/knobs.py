"""An arm's CodeLens environment variables, parsed into the builtin engine's knob settings.

The variable names, defaults, ranges and the auto gating follow ENGINE_KNOBS.md and the
CodeLens source they describe, so an arm means the same thing to both engines. Where
CodeLens quietly falls back to a default (an unparseable number, a misspelt bool), we
raise: a silent fallback would make an arm measure something other than what it says.

The CRMATRIX_ variables are the builtin engine's own query-time knobs, which CodeLens does
not have: how hybrid fuses its two rankers, and one-hop expansion over the corpus's
reference graph. They change ranking only, so they never enter `index_spec`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from crmatrix import CrmatrixError

PREFIX = "CODELENS_"
OWN_PREFIX = "CRMATRIX_"
MODEL_VAR = "CRMATRIX_MODEL"  # picks the embedding model; config validation checks it, not this module

HINT_LINES = "CODELENS_EMBED_HINT_LINES"
HINT_CHARS = "CODELENS_EMBED_HINT_CHARS"
INCLUDE_COMMENTS = "CODELENS_EMBED_HINT_INCLUDE_COMMENTS"
INCLUDE_API_CALLS = "CODELENS_EMBED_HINT_INCLUDE_API_CALLS"
STRICT_LITERALS = "CODELENS_EMBED_HINT_STRICT_LITERALS"
STRICT_COMMENTS = "CODELENS_EMBED_HINT_STRICT_COMMENTS"
AUTO = "CODELENS_EMBED_HINT_AUTO"
AUTO_LANG = "CODELENS_EMBED_HINT_AUTO_LANG"
SPARSE = "CODELENS_RANK_SPARSE_TERM_WEIGHT"
SPARSE_THRESHOLD = "CODELENS_RANK_SPARSE_THRESHOLD"
SPARSE_MAX = "CODELENS_RANK_SPARSE_MAX"
FUSION = "CRMATRIX_FUSION"
RRF_K = "CRMATRIX_RRF_K"
WSI_WEIGHT = "CRMATRIX_WSI_WEIGHT"
SEMANTIC_DEPTH = "CRMATRIX_SEMANTIC_DEPTH"
GRAPH_EXPAND = "CRMATRIX_GRAPH_EXPAND"
GRAPH_SEEDS = "CRMATRIX_GRAPH_SEEDS"
GRAPH_DECAY = "CRMATRIX_GRAPH_DECAY"

FUSIONS = ("codelens", "rrf", "wsi", "dense-only")

KNOWN_VARS = frozenset({HINT_LINES, HINT_CHARS, INCLUDE_COMMENTS, INCLUDE_API_CALLS, STRICT_LITERALS,
                        STRICT_COMMENTS, AUTO, AUTO_LANG, SPARSE, SPARSE_THRESHOLD, SPARSE_MAX, FUSION, RRF_K,
                        WSI_WEIGHT, SEMANTIC_DEPTH, GRAPH_EXPAND, GRAPH_SEEDS, GRAPH_DECAY})
# AUTO and AUTO_LANG decide whether 2b/2c are on, so they change embedding text too.
INDEX_TIME_VARS = frozenset({HINT_LINES, HINT_CHARS, INCLUDE_COMMENTS, INCLUDE_API_CALLS, STRICT_LITERALS,
                             STRICT_COMMENTS, AUTO, AUTO_LANG})

# The documented range of each whole-number variable; values outside are clamped and noted.
_RANGES = {HINT_LINES: (1, 10), HINT_CHARS: (60, 512), SPARSE_THRESHOLD: (10, 90), SPARSE_MAX: (5, 50),
           RRF_K: (0, 1000), SEMANTIC_DEPTH: (1, 1000), GRAPH_SEEDS: (1, 100)}
# Weights and decays: a share from 0 to 1; outside it they mean nothing, so they are errors, not clamped.
_SHARES = frozenset({WSI_WEIGHT, GRAPH_DECAY})
_FLAGS = frozenset({INCLUDE_COMMENTS, INCLUDE_API_CALLS, STRICT_LITERALS, STRICT_COMMENTS, AUTO, SPARSE, GRAPH_EXPAND})

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+|[0-9]+\.")

# CodeLens's `language_supports_nl_stack` / `language_supports_sparse_weighting`, with
# their extension aliases, so a hand-set AUTO_LANG=rs gates like AUTO_LANG=rust.
_SPARSE_LANGS = frozenset({"rs", "rust", "cpp", "cc", "cxx", "c++", "c", "go", "golang", "java", "kt",
                           "kotlin", "scala", "cs", "csharp"})
# Phase 2m: 2e measured negative or inert on JS/TS, while 2b/2c stay on there.
_NL_STACK_LANGS = _SPARSE_LANGS | {"ts", "typescript", "tsx", "js", "javascript", "jsx"}


class KnobError(CrmatrixError):
    """An arm's CODELENS_ or CRMATRIX_ variable that is unknown or has a value of the wrong form."""


@dataclass(frozen=True)
class Knobs:
    hint_lines: int = 1
    hint_chars: int = 60
    nl_tokens: bool = False        # 2b
    api_calls: bool = False        # 2c
    strict_literals: bool = False  # 2h
    strict_comments: bool = False  # 2i
    sparse: bool = False           # 2e
    sparse_threshold: float = 0.60
    sparse_max: float = 20.0
    auto: bool = True              # 2j/2m
    language: str | None = None    # the language the auto gating looked at
    fusion: str = "codelens"       # how hybrid combines lexical and semantic (FUSIONS)
    rrf_k: int = 60
    wsi_weight: float = 0.5        # the semantic ranker's weight in wsi; lexical gets the rest
    semantic_depth: int = 100      # semantic candidates a fusion sees
    graph_expand: bool = False
    graph_seeds: int = 5
    graph_decay: float = 0.5
    notes: tuple[str, ...] = ()    # one line per clamped value

    def index_fields(self) -> dict[str, Any]:
        """The settings that change a symbol's embedding text."""
        return {"hint_lines": self.hint_lines, "hint_chars": self.hint_chars, "nl_tokens": self.nl_tokens,
                "api_calls": self.api_calls, "strict_literals": self.strict_literals,
                "strict_comments": self.strict_comments}

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "notes": list(self.notes)}


def resolve(env: Mapping[str, str], dominant_language: str | None) -> Knobs:
    """The knobs an arm's `env` sets on a corpus whose dominant language is given."""
    v = _Parsed(env)
    language = v.language(AUTO_LANG)
    if language is None and dominant_language is not None:
        language = dominant_language.lower()
    auto = v.flag(AUTO, True)
    nl_stack = auto and language in _NL_STACK_LANGS
    return Knobs(
        hint_lines=v.whole(HINT_LINES, 1),
        hint_chars=v.whole(HINT_CHARS, 60),
        nl_tokens=v.flag(INCLUDE_COMMENTS, nl_stack),
        api_calls=v.flag(INCLUDE_API_CALLS, nl_stack),
        # CodeLens never turns 2h/2i on automatically: they read only their own variable.
        strict_literals=v.flag(STRICT_LITERALS, False),
        strict_comments=v.flag(STRICT_COMMENTS, False),
        sparse=v.flag(SPARSE, auto and language in _SPARSE_LANGS),
        sparse_threshold=v.whole(SPARSE_THRESHOLD, 60) / 100,
        sparse_max=float(v.whole(SPARSE_MAX, 20)),
        auto=auto,
        language=language,
        fusion=v.choice(FUSION, FUSIONS, "codelens"),
        rrf_k=v.whole(RRF_K, 60),
        wsi_weight=v.share(WSI_WEIGHT, 0.5),
        semantic_depth=v.whole(SEMANTIC_DEPTH, 100),
        graph_expand=v.flag(GRAPH_EXPAND, False),
        graph_seeds=v.whole(GRAPH_SEEDS, 5),
        graph_decay=v.share(GRAPH_DECAY, 0.5),
        notes=tuple(v.notes),
    )


def index_spec(env: Mapping[str, str]) -> dict[str, Any]:
    """The explicitly set index-time variables, parsed and clamped, keyed by knob name.

    Needs no corpus: arms with equal specs embed every corpus identically, so they can
    share its index. Query-time variables and spelling ("1" vs "true") do not show.
    """
    v = _Parsed(env)
    # A default of None leaves an unset variable out.
    spec = {
        "hint_lines": v.whole(HINT_LINES, None),
        "hint_chars": v.whole(HINT_CHARS, None),
        "nl_tokens": v.flag(INCLUDE_COMMENTS, None),
        "api_calls": v.flag(INCLUDE_API_CALLS, None),
        "strict_literals": v.flag(STRICT_LITERALS, None),
        "strict_comments": v.flag(STRICT_COMMENTS, None),
        "auto": v.flag(AUTO, None),
        "language": v.language(AUTO_LANG),
    }
    return {key: value for key, value in spec.items() if value is not None}


def needs_language(env: Mapping[str, str]) -> bool:
    """Whether the embedding text `env` sets depends on the corpus's dominant language: auto
    gating on, no AUTO_LANG, and 2b or 2c left to it."""
    v = _Parsed(env)
    return bool(v.flag(AUTO, True) and v.language(AUTO_LANG) is None
                and (v.flag(INCLUDE_COMMENTS, None) is None or v.flag(INCLUDE_API_CALLS, None) is None))


def explicit_index_env(fields: Mapping[str, Any]) -> dict[str, str]:
    """Index-time variables that set exactly these `Knobs.index_fields()`, gating off: one
    spelling per set of fields, whichever arm's variables resolved to it."""
    flag = lambda on: "1" if on else "0"  # noqa: E731
    return {AUTO: "0", HINT_LINES: str(fields["hint_lines"]), HINT_CHARS: str(fields["hint_chars"]),
            INCLUDE_COMMENTS: flag(fields["nl_tokens"]), INCLUDE_API_CALLS: flag(fields["api_calls"]),
            STRICT_LITERALS: flag(fields["strict_literals"]), STRICT_COMMENTS: flag(fields["strict_comments"])}


def canonical(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with each CODELENS_/CRMATRIX_ knob in one spelling: on/off as "1"/"0", numbers
    without padding, language tags and fusion names lower-cased; other variables as given.
    Values are parsed (so a bad one raises here) but not clamped, so the job still notes a
    clamped value."""
    v = _Parsed(env)
    out = dict(env)
    for var in v.env:
        if var in _FLAGS:
            out[var] = "1" if v.flag(var, None) else "0"
        elif var in _RANGES:
            out[var] = str(v.number(var))
        elif var in _SHARES:
            out[var] = repr(v.share(var, None))
        elif var == FUSION:
            out[var] = v.choice(var, FUSIONS, None)
        else:
            out[var] = v.language(var)
    return dict(sorted(out.items()))


class _Parsed:
    """The CODELENS_/CRMATRIX_ knobs of one env, read variable by variable; collects clamp notes."""

    def __init__(self, env: Mapping[str, str]):
        # Arms may carry other systems' variables; only ours are checked.
        self.env = {k: v for k, v in env.items()
                    if k.startswith(PREFIX) or (k.startswith(OWN_PREFIX) and k != MODEL_VAR)}
        unknown = sorted(set(self.env) - KNOWN_VARS)
        if unknown:
            raise KnobError(_unknown_message(unknown[0]))
        self.notes: list[str] = []

    def flag(self, var: str, default: bool | None) -> bool | None:
        raw = self.env.get(var)
        if raw is None:
            return default
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise KnobError(f"{var}={raw!r}: expected one of {'/'.join(_TRUE)} (on) or {'/'.join(_FALSE)} (off)")

    def number(self, var: str) -> int:
        """The whole number `var` is set to, unclamped."""
        raw = self.env[var]
        if not _WHOLE.fullmatch(raw.strip()):
            low, high = _RANGES[var]
            raise KnobError(f"{var}={raw!r}: expected a whole number ({low}..{high})")
        return int(raw.strip())

    def whole(self, var: str, default: int | None) -> int | None:
        if var not in self.env:
            return default
        value = self.number(var)
        low, high = _RANGES[var]
        clamped = min(max(value, low), high)
        if clamped != value:
            self.notes.append(f"{var}={value} clamped to {clamped}")
        return clamped

    def share(self, var: str, default: float | None) -> float | None:
        raw = self.env.get(var)
        if raw is None:
            return default
        if not _DECIMAL.fullmatch(raw.strip()) or float(raw) > 1:
            raise KnobError(f"{var}={raw!r}: expected a number from 0 to 1, such as 0.5")
        return float(raw)

    def choice(self, var: str, choices: tuple[str, ...], default: str | None) -> str | None:
        raw = self.env.get(var)
        if raw is None:
            return default
        value = raw.strip().lower()
        if value not in choices:
            raise KnobError(f"{var}={raw!r}: expected one of {', '.join(choices)}")
        return value

    def language(self, var: str) -> str | None:
        raw = self.env.get(var)
        if raw is None:
            return None
        tag = raw.strip().lower()
        if not tag:
            raise KnobError(f"{var}={raw!r}: expected a language tag such as rust, python or typescript")
        return tag


def _unknown_message(name: str) -> str:
    close = difflib.get_close_matches(name, sorted(KNOWN_VARS), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown variable {name}{hint}; known: {', '.join(sorted(KNOWN_VARS))}"
