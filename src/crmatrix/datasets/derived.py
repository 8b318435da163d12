"""`derived`: queries made from a corpus's own leading docs (CodeSearchNet's method), hundreds
per corpus where hand-written sets have tens.

For each function, method or class (struct, enum, interface, trait: the classes of languages
without one) whose symbol has a leading doc (crmatrix.symbols.docs), the query is the doc's
first sentence: its first paragraph, up to a parameter section, a tag (`@param`, `:returns:`),
a heading or code; markup removed (backticks, emphasis, links and roles kept as their text,
HTML tags and URLs dropped); a leading name dropped (Go's "Foo does x" says "does x"); cut at
its first full stop. The gold is that symbol: its name and its path, whole (symbol gold).

Made of the docs, such queries are the very text the corpus's index holds, which is why
../shared/DATASETS.md warns against them: they are scored on the corpus's docs-withheld view
(crmatrix.corpora.views), where no doc is left to match. Rows are also dropped, each counted
with its reason, in this order:
- `too short`, `too long`: fewer than MIN_WORDS or more than MAX_WORDS words;
- `repeated query`: one question (rows.query_key) documents several symbols: every copy goes,
  since none of them is its one answer;
- `ambiguous gold`: the symbol relevance rule would count a hit on another thing too: a symbol
  of that name in a file whose path ends with the gold's, not of the gold's class nor nested
  with it (Rust's `new` of two impls in one file; a Java class and its constructors, or a
  class's overloads and accessors, are one thing);
- `names the gold`: the query holds every word of the gold's name (identifier words, case
  folded: crmatrix.datasets.audit.overlap) and is answered by matching the name.

Task ids are `path:line:name`, stable while the symbol stays where it is; the stratum is the
file's directory, at most STRATUM_DEPTH levels below the directory all gold files share, so
the seeded sample (`max_queries`, crmatrix.datasets.holdout.sample) and held-out splits keep
the corpus's mix of directories. The loader is given the corpus the view is made of: its
symbols (with their docs) and manifest; `path` names where the symbols were read from.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path, PurePosixPath

from crmatrix import CrmatrixError
from crmatrix.corpora.languages import LANGUAGES
from crmatrix.datasets.audit import overlap
from crmatrix.datasets.registry import Loaded, register
from crmatrix.datasets.rows import query_key
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

FORMAT = "derived"
DEFAULT_MAX_QUERIES = 300
KINDS = ("function", "method", "class", "struct", "enum", "interface", "trait")
MIN_WORDS, MAX_WORDS = 4, 40
STRATUM_DEPTH = 2
QUERY_TYPE = "natural_language"

# A line that ends the first paragraph: a tag (`@param`, `:param x:`), a doctest, a code fence,
# an rst directive, a Markdown heading (rustdoc's `# Examples`), an underline, a list item, or
# a section header (`Args:`, `Returns:`, `Parameters` alone on its line).
_SECTIONS = r"args|arguments|parameters|params|returns?|yields?|raises|throws|examples?|notes?|attributes|see also"
_STOP = re.compile(rf"^(?:[@:][A-Za-z]|>>>|```|~~~|\.\. |#+\s|[-=]{{3,}}\s*$|[-*+]\s|(?:{_SECTIONS})\s*(?::|$))", re.I)
_INLINE_TAG = re.compile(r"\{@(\w+)\s+([^}]*)\}")  # Javadoc / JSDoc {@link Foo#bar label}, {@code x}
_ROLE = re.compile(r":(?:[\w-]+:)+`(~?)([^`<]*?)\s*(?:<[^>]*>)?`")  # Sphinx :meth:`~a.b` -> b
_URL = re.compile(r"<?https?://[^\s>)]+>?")
_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")  # [text](url), [text][ref]
_INTRA_LINK = re.compile(r"\[(`[^`\]]+`|[A-Za-z_][\w:.]*(?:\(\))?)\](?!\()")  # rustdoc [`Foo`], [Foo::bar]
_HTML_TAG = re.compile(r"</?(?:p|a|b|i|u|em|strong|code|pre|tt|br|hr|ul|ol|li|dl|dt|dd|blockquote|h\d|table|tr|td|th|"
                       r"span|div|sup|sub|var|kbd|samp|cite)\b[^>]*>", re.I)
_EMPHASIS = re.compile(r"\*\*(.+?)\*\*|(?<![\w*])\*(\S(?:[^*]*\S)?)\*(?![\w*])")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
# Full stops that end no sentence; "etc." ends one when a capital follows ("... < > etc. Use this").
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "eg.", "ie.", "vs.", "cf.", "approx.", "incl.", "resp.", "no."})
_ENDS_BEFORE_CAPITAL = frozenset({"etc."})
_TRAILING = ".:;,"


def first_sentence(doc: str, name: str) -> str:
    """The query a leading doc makes for the symbol `name` ("" when it holds no prose)."""
    text = _strip_markup(" ".join(_first_paragraph(doc)))
    first, _, rest = text.partition(" ")
    if first.rstrip(":,") in (name, f"{name}()"):
        text = rest
    for m in _SENTENCE_END.finditer(text):
        word = text[: m.end()].rsplit(" ", 1)[-1].lstrip("([{\"'").lower()
        if word in _ENDS_BEFORE_CAPITAL and not text[m.end():].lstrip()[:1].isupper():
            continue
        if word not in _ABBREVIATIONS:
            text = text[: m.end()]
            break
    return text.rstrip(_TRAILING).strip()


def _first_paragraph(doc: str) -> list[str]:
    lines: list[str] = []
    for line in doc.splitlines():
        line = line.strip()
        if not line and not lines:
            continue
        if not line or _STOP.match(line):
            break
        lines.append(line)
    return lines


def _inline_tag(m: re.Match) -> str:
    tag, body = m.group(1), m.group(2).strip()
    if tag in ("link", "linkplain") and " " in body:
        return body.split(" ", 1)[1]  # the label
    return body.replace("#", ".")


def _strip_markup(text: str) -> str:
    text = _INLINE_TAG.sub(_inline_tag, text)
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    text = _HTML_TAG.sub("", text)  # before URLs: <a href="https://...">RFC 7159</a> keeps its text
    text = _URL.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _INTRA_LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    text = html.unescape(text.replace("`", ""))
    return " ".join(text.split())


def word_count(query: str) -> int:
    return sum(1 for w in query.split() if any(c.isalnum() for c in w))


def strata(paths: list[str]) -> dict[str, str]:
    """Each path's directory, at most STRATUM_DEPTH levels below the directory all of them share
    ("." for a file right in it)."""
    dirs = {p: PurePosixPath(p).parent.parts for p in paths}
    common = os.path.commonprefix(list(dirs.values())) if dirs else ()
    return {p: "/".join(d[len(common):][:STRATUM_DEPTH]) or "." for p, d in dirs.items()}


def _distinct(other: Symbol, gold: Symbol) -> bool:
    """Whether a symbol named as the gold is another thing: in another file, or of another
    class and not nested with the gold."""
    if other.path != gold.path:
        return True
    apart = other.end_line < gold.start_line or other.start_line > gold.end_line
    return other.parent != gold.parent and apart


def _check_corpus(name: str, manifest: dict) -> None:
    if manifest.get("documents"):
        raise CrmatrixError(f"corpus {name!r} is a documents corpus ({manifest['pin']['kind']}): it holds no source "
                            "with leading docs to derive queries from")
    parsed = set(LANGUAGES.values())
    if not parsed & set(manifest["languages"]):
        raise CrmatrixError(f"corpus {name!r} holds no file in a language the symbol extractor parses "
                            f"({', '.join(sorted(parsed))}); its files: {manifest['languages']}")


@register(FORMAT)
def load_derived(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    source = manifest.get("corpus", corpus)
    _check_corpus(source, manifest)
    documented = [s for s in symbols if s.kind in KINDS and s.doc.strip()]
    if not documented:
        kinds = sum(1 for s in symbols if s.kind in KINDS)
        raise CrmatrixError(f"corpus {source!r}: no leading docs to derive queries from (none of its {kinds} "
                            f"{', '.join(KINDS)} symbols has one)")
    rows = [(f"{s.path}:{s.start_line}:{s.name}", s, first_sentence(s.doc, s.name)) for s in documented]
    words = {task_id: word_count(query) for task_id, _, query in rows}
    copies: dict[str, list[str]] = {}
    for task_id, _, query in rows:
        if MIN_WORDS <= words[task_id] <= MAX_WORDS:
            copies.setdefault(query_key(query), []).append(task_id)
    named: dict[str, list[Symbol]] = {}
    for s in symbols:
        named.setdefault(s.name, []).append(s)
    kept, dropped, ids = [], [], set()
    for task_id, s, query in rows:
        n = words[task_id]
        others = [i for i in copies.get(query_key(query), []) if i != task_id]
        same = [o for o in named[s.name] if o.path.endswith(s.path) and _distinct(o, s)]
        repeated_id = task_id in ids
        ids.add(task_id)
        if repeated_id:  # two definitions of one name starting on one line
            drop = ("ambiguous gold", f"another {s.name!r} starts on line {s.start_line} of {s.path}")
        elif n < MIN_WORDS or n > MAX_WORDS:
            drop = ("too short" if n < MIN_WORDS else "too long", f"{n} words: {query!r}")
        elif others:
            drop = ("repeated query", f"{query!r} also documents {', '.join(others)}")
        elif same:
            drop = ("ambiguous gold", f"{s.name!r} is also {', '.join(f'{o.path}:{o.start_line}' for o in same)}")
        elif overlap(query, s.name) == 1:
            drop = ("names the gold", f"{query!r} holds every word of {s.name!r}")
        else:
            kept.append((task_id, s, query))
            continue
        dropped.append({"row": task_id, "reason": drop[0], "detail": drop[1]})
    stratum = strata([s.path for _, s, _ in kept])
    tasks = [Task(task_id, query, QUERY_TYPE, {"type": "symbol", "symbol": s.name, "file_suffix": s.path},
                  corpus, stratum=stratum[s.path]) for task_id, s, query in kept]
    return Loaded(tasks, dropped)
