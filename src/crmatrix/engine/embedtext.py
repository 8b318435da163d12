"""The text the builtin engine embeds for one symbol, as CodeLens builds it.

    {kind} {name} ({words}) (in {parent}) [{dir}] in {file}: {signature} — {doc or body hint}
        · NL: {comments and string literals}  · API: {Type::method calls}

The header parts, the hint budgets and the 2b/2c/2h/2i harvesting follow CodeLens's
`build_embedding_text` and its helpers (crates/codelens-engine/src/embedding, v1.6),
including their quirks (a `#` line counts as a comment in every language, only
double-quoted literals are read), because an arm must mean the same text in both engines.
"""

from __future__ import annotations

import re

from crmatrix import identifiers
from crmatrix.engine.knobs import Knobs
from crmatrix.symbols import Symbol

SEPARATOR = " · "
ELLIPSIS = "..."

# Directory names too generic to say anything about a symbol.
_GENERIC_DIRS = frozenset({"src", "crates"})
# Body-hint lines that are comments (CodeLens skips these prefixes in every language).
_COMMENT_STARTS = ("//", "#", "/*", "*")
# Lines that may hold a comment: the cheap pre-filter before `_comment_text`.
_COMMENT_LINE = re.compile(r"^[^\S\n]*[/#*].*$", re.M)
# A double-quoted literal; a backslash escapes the next character, newlines included.
_LITERAL = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"', re.S)
_ESCAPE = re.compile(r"\\.", re.S)
# An uppercase-led `Type::method` pair, or any other identifier, which is skipped whole
# so that `a::Foo` still yields nothing for `a` and `Foo::Bar::baz` yields `Foo::Bar`.
_API_OR_IDENT = re.compile(r"[A-Z][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*")
_PERCENT_SPEC = re.compile(r"%[sdrfxoiu]")
_FORMAT_IDENT = re.compile(r"[A-Za-z0-9_.]+")
_FIRST_WORD = re.compile(r"[A-Za-z]+")
# The ASCII characters str.isspace and str.isalpha take (for `is_nl_shaped`'s count by bytes)
_ASCII_SPACE = bytes(c for c in range(128) if chr(c).isspace())
_ASCII_LETTERS = bytes(c for c in range(128) if chr(c).isalpha())

# 2i: comments whose first word marks work to do rather than describe behaviour. NOTE,
# WARN, WARNING, SAFETY and PANIC stay: they explain why code behaves as it does.
META_ANNOTATIONS = frozenset({"TODO", "FIXME", "HACK", "XXX", "BUG", "REVIEW", "REFACTOR", "TEMP",
                              "TEMPORARY", "DEPRECATED"})
# 2h: CodeLens's list of error/log openings (lowercase; a trailing space is part of the
# prefix, so "Invalidate ..." stays). ENGINE_KNOBS.md lists "Error:" and "Warning:", which
# CodeLens only has as "error: "/"warning: "; we take the union, so "Error:x" drops too.
ERROR_LOG_PREFIXES = ("invalid ", "cannot ", "could not ", "unable to ", "failed to ", "expected ",
                      "unexpected ", "missing ", "not found", "error:", "error ", "warning:", "warning ",
                      "sending ", "received ", "starting ", "stopping ", "calling ", "connecting ",
                      "disconnecting ")


def embedding_text(sym: Symbol, knobs: Knobs) -> str:
    """The text to embed for `sym` under an arm's knobs."""
    text = _header(sym)
    hint = _doc_hint(sym.doc, knobs.hint_chars) if sym.doc.strip() else body_hint(
        sym, knobs.hint_lines, knobs.hint_chars)
    if hint:
        text += f" — {hint}"
    if knobs.nl_tokens:
        tokens = nl_tokens(sym.body, sym.language, knobs.strict_literals, knobs.strict_comments)
        if tokens:
            text += f"{SEPARATOR}NL: {_join(tokens, knobs.hint_chars)}"
    if knobs.api_calls:
        calls = api_calls(sym.body)
        if calls:
            text += f"{SEPARATOR}API: {_join(calls, knobs.hint_chars)}"
    return text


def body_hint(sym: Symbol, lines: int, chars: int) -> str:
    """The first `lines` code lines after the line that opens the body, cut to `chars`.

    The body opens at the first line ending in `{` or `:` (the signature's own line
    when it ends so); blank lines, comment lines and lone `}` are skipped.
    """
    picked: list[str] = []
    opened = False
    for line in sym.body.split("\n"):
        line = line.strip()
        if not opened:
            opened = line.endswith(("{", ":"))
        elif line and line != "}" and not line.startswith(_COMMENT_STARTS):
            picked.append(line)
            if len(picked) >= lines:
                break
    return _join(picked, chars)


def nl_tokens(body: str, language: str, strict_literals: bool, strict_comments: bool) -> list[str]:
    """2b: NL-shaped whole-line comments, then NL-shaped double-quoted literals, in body order.

    `language` does not change the result: CodeLens scans every language the same way
    (`#` lines are comments everywhere, single-quoted strings are never read), and the
    point of this engine is to match it.
    """
    comments = [c for c in map(_comment_text, _COMMENT_LINE.findall(body))
                if c is not None and is_nl_shaped(c) and not (strict_comments and is_meta_annotation(c))]
    literals = [s for s in (_ESCAPE.sub("", m) for m in _LITERAL.findall(body))
                if is_nl_shaped(s) and not (strict_literals and (has_format_specifier(s) or is_error_or_log(s)))]
    return comments + literals


def api_calls(body: str) -> list[str]:
    """2c: `Type::method` pairs (Type starts with an ASCII capital), first appearance first."""
    if "::" not in body:  # most bodies (all but Rust's, nearly): no pair, and no scan of every identifier
        return []
    found = (m.group() for m in _API_OR_IDENT.finditer(body))
    return list(dict.fromkeys(f for f in found if "::" in f))


def is_nl_shaped(s: str) -> bool:
    """Prose rather than code: >= 4 chars, a space, no path or scope separator, >= 60 % letters."""
    s = s.strip()
    if len(s) < 4 or " " not in s or "/" in s or "\\" in s or "::" in s:
        return False
    if s.isascii():  # counted by bytes.translate: a Python step per character was most of a build's texts
        b = s.encode("ascii")
        non_space, letters = len(b.translate(None, _ASCII_SPACE)), len(b) - len(b.translate(None, _ASCII_LETTERS))
    else:
        non_space = sum(1 for c in s if not c.isspace())
        letters = sum(1 for c in s if c.isalpha())
    return letters * 100 // non_space >= 60


def is_meta_annotation(comment: str) -> bool:
    """2i: the comment's leading run of letters is a marker such as TODO (any case, like CodeLens)."""
    m = _FIRST_WORD.match(comment.lstrip())
    return m is not None and m.group().upper() in META_ANNOTATIONS


def has_format_specifier(s: str) -> bool:
    """2h: `%s`-style specifiers or `{}`, `{0}`, `{name}`, `{:fmt}`, `{name:fmt}` placeholders.

    Braces holding whitespace (`{name: foo}`) are JSON-like text, not placeholders.
    """
    if _PERCENT_SPEC.search(s):
        return True
    for after_open in s.split("{")[1:]:
        inside, closed, _ = after_open.partition("}")
        if not closed or any(c.isspace() for c in inside):
            continue
        ident = inside.partition(":")[0]
        if not inside or inside.startswith(":") or _FORMAT_IDENT.fullmatch(ident):
            return True
    return False


def is_error_or_log(s: str) -> bool:
    """2h: the literal opens like an error or log message ("Failed to open ...")."""
    return s.strip().lower().startswith(ERROR_LOG_PREFIXES)


# -- parts of the text ----------------------------------------------------------------


def _header(sym: Symbol) -> str:
    words = identifiers.words(sym.name)
    name = f"{sym.name} ({' '.join(words)})" if len(words) > 1 else sym.name
    parent = f" (in {sym.parent})" if sym.parent else ""
    directory, _, file = sym.path.rpartition("/")
    # Only the innermost directory and the file name: full paths dilute the signal.
    dir_name = directory.rpartition("/")[2]
    module = f" [{dir_name}]" if directory and dir_name not in _GENERIC_DIRS else ""
    signature = f": {sym.signature}" if sym.signature else ""
    return f"{sym.kind} {name}{parent}{module} in {file}{signature}"


def _doc_hint(doc: str, chars: int) -> str:
    # CodeLens flattens the doc to one line before applying the line budget, so the
    # budget that bites on docs is the char budget alone. Which doc: ENGINE_KNOBS.md says
    # the leading doc (`///` above a Rust fn included), the extractor's `Symbol.doc`;
    # CodeLens's `extract_leading_doc` reads only lines inside the symbol's range after its
    # first line. We follow ENGINE_KNOBS.md.
    return _join([" ".join(line.strip() for line in doc.splitlines() if line.strip())], chars)


def _join(parts: list[str], chars: int) -> str:
    """Parts joined with " · ", cut to `chars` characters with "..." when longer."""
    joined = SEPARATOR.join(parts)
    return joined[:chars] + ELLIPSIS if len(joined) > chars else joined


def _comment_text(line: str) -> str | None:
    """The text of a whole-line comment (`//`, `///`, `//!`, `#`, `/* */`, `*` continuation)."""
    line = line.strip()
    for marker in ("///", "//!", "//"):
        if line.startswith(marker):
            return line[len(marker) :].strip()
    if line.startswith(("#[", "#!")):  # Rust attributes and shebangs are code
        return None
    if line.startswith("#"):
        return line[1:].strip()
    for marker in ("/**", "/*"):
        if line.startswith(marker):
            return _strip_block_end(line[len(marker) :])
    if line.startswith("*"):
        rest = _strip_block_end(line[1:])
        # `*const T` and `*ptr = x;` are code, not comment continuations.
        return rest if rest and ";" not in rest and "{" not in rest else None
    return None


def _strip_block_end(text: str) -> str:
    while text.endswith("*/"):
        text = text[:-2]
    return text.strip()
