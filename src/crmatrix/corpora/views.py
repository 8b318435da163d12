"""Views of a corpus: a corpus made from another one's tree instead of fetched.

`<corpus>~nodocs`, the docs-withheld view, is what a derived dataset (crmatrix.datasets.derived)
is scored on: the corpus's files with every leading doc the symbol extractor reads
(crmatrix.symbols.docs) blanked, each character a space, line breaks kept, so lines and spans
stay valid and the view's symbols are the corpus's, without their docs. A query made of a
doc is then nowhere in what a system searches, whether it reads our symbols (the builtin) or
the files (external systems); body comments, literals and calls stay. Python docstrings keep
their quotes, as empty strings, so a function whose body was its docstring still parses.

A view is just another corpus of the matrix config (crmatrix.config.resolve adds it for the
derived datasets naming its corpus): made once, its symbols extracted and indexed once per
index-time arm like any corpus's, shared by every arm and every derived dataset of the corpus.
Its manifest keeps the corpus's pin and records the corpus's name and content hash under
`view`; its own content hash is that of the blanked files.
"""

from __future__ import annotations

import re
from pathlib import Path

from crmatrix import atomic
from crmatrix.corpora.tree import content_hash
from crmatrix.progress import Progress

NODOCS = "nodocs"
SEPARATOR = "~"  # never in a config's own corpus names (crmatrix.config), so a view's name is free
# What blanking turns into a space: everything but a line break, and a backslash only where it
# does not continue a line (in a one-quote Python docstring, that would unterminate the string).
_BLANKED = re.compile(r"[^\r\n\\]|\\(?!\r?\n)")


def view_name(corpus: str) -> str:
    return f"{corpus}{SEPARATOR}{NODOCS}"


def view_conf(corpus: str, language: str | None) -> dict:
    """The config entry of `corpus`'s view: the corpus it is made of, and its declared language
    (the plan resolves language-gated arms by it, as for the corpus)."""
    return {NODOCS: corpus, **({"language": language} if language is not None else {})}


def blank(data: bytes, ranges: list[tuple[int, int]]) -> bytes:
    """`data` with the characters of the sorted byte `ranges` blanked."""
    out, pos = [], 0
    for start, end in ranges:
        start = max(start, pos)
        if start >= end:
            continue
        out += [data[pos:start], _BLANKED.sub(" ", data[start:end].decode("utf-8")).encode("utf-8")]
        pos = end
    out.append(data[pos:])
    return b"".join(out)


def withhold_docs(name: str, src_tree: Path, src_manifest: dict, tree: Path, manifest_path: Path) -> dict:
    """Write the view `name` of the corpus at `src_tree` (with manifest `src_manifest`) as
    `tree`, which appears whole or not at all, and its manifest."""
    from crmatrix.symbols.extract import doc_ranges  # the parsers, for this job only: planning names views

    files = []
    with atomic.staged_dir(Path(tree)) as stage, Progress("blanking docs", len(src_manifest["files"]),
                                                          "files") as progress:
        for f in src_manifest["files"]:
            progress.advance()
            data = (Path(src_tree) / f["path"]).read_bytes()
            if f["language"]:
                data = blank(data, doc_ranges(data, f["language"]))
            out = stage / f["path"]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            files.append({**f, "size": len(data), "sha256": atomic.sha256_bytes(data)})
    manifest = {**src_manifest, "corpus": name, "files": files, "content_hash": content_hash(files),
                "view": {"kind": NODOCS, "of": src_manifest["corpus"], "content_hash": src_manifest["content_hash"]}}
    atomic.write_json(Path(manifest_path), manifest)
    return manifest
