"""fetch_corpus: a pinned source, narrowed by the corpus's globs, as a tree and its manifest."""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora import pins
from crmatrix.corpora.languages import dominant_language
from crmatrix.corpora.tree import select_files


def run(name: str, corpus: dict, tree: Path, manifest_path: Path, mirrors: list[str], registries: dict) -> dict:
    """Fetch the pinned source (git, pypi, npm or path), keep the selected files as `tree`,
    write `manifest_path`.

    Nothing is left at either output unless everything succeeded, nor when the corpus's
    declared `language` is not the dominant language of what was fetched.
    """
    pin = pins.Pin.from_config(name, corpus)
    with atomic.scratch_dir(Path(tree)) as scratch:
        src, origin = pins.fetch(pin, scratch / "src", mirrors, registries)
        return keep(name, corpus, pin, src, origin, tree, manifest_path)


def keep(name: str, corpus: dict, pin: pins.Pin, src: Path, origin: dict, tree: Path, manifest_path: Path,
         documents: bool = False) -> dict:
    """The files of `src` the corpus's globs select, as `tree`, and the manifest; `documents`:
    each file is one document (one symbol), not source to parse (crmatrix.stages.write_corpus)."""
    include = corpus.get("include") or ["**"]
    exclude = corpus.get("exclude") or []
    with atomic.staged_dir(Path(tree)) as stage:
        part = select_files(src, stage, include, exclude)
        if not part["files"]:
            raise CrmatrixError(f"corpora.{name}: include/exclude select no readable file from {origin['source']}")
        _check_language(name, corpus.get("language"), part)
    manifest = {"corpus": name, "pin": {"kind": pin.kind, **pin.spec}, "origin": origin,
                "include": include, "exclude": exclude, "documents": documents, **part}
    atomic.write_json(Path(manifest_path), manifest)
    return manifest


def _check_language(name: str, declared: str | None, part: dict) -> None:
    """The plan resolved the arms' language gating by the declared language (index keys hold
    it); the engine resolves it by the tree's. They must agree, or arms would share an index
    built for other knobs."""
    if declared is None:
        return
    found = dominant_language(part)
    if found != declared:
        why = "none (fewer than 3 source files: leave language out)" if found is None else found
        raise CrmatrixError(f"corpora.{name}.language: declared {declared}, but the dominant language of the "
                            f"fetched tree is {why} (counts: {part['languages']})")
