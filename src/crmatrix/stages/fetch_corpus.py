"""fetch_corpus: a pinned source, narrowed by the corpus's globs, as a tree and its manifest."""

from __future__ import annotations

import tempfile
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora import pins
from crmatrix.corpora.languages import dominant_language
from crmatrix.corpora.tree import select_files, write_source


def run(name: str, corpus: dict, tree: Path, manifest_path: Path, mirrors: list[str], registries: dict,
        file: Path | None = None) -> dict:
    """Fetch the pinned source, keep the selected files as `tree`, write `manifest_path`.
    `file`: the benchmark file a repoqa or ds1000 corpus is written out from (the workflow's
    input; its config entry then need not name it).

    Nothing is left at either output unless everything succeeded, nor when the corpus's
    declared `language` is not the dominant language of what was fetched.
    """
    if file is not None:
        corpus = {k: ({**v, "file": str(file)} if k in pins.FILE_KINDS else v) for k, v in corpus.items()}
    pin = pins.Pin.from_config(name, corpus)
    include = corpus.get("include") or ["**"]
    exclude = corpus.get("exclude") or []
    with tempfile.TemporaryDirectory(prefix="crmatrix-fetch-") as scratch:
        if pin.kind in pins.FILE_KINDS:
            src, origin = Path(scratch), write_source(pin.kind, pin.spec[pin.kind], Path(scratch))
        else:
            src, origin = pins.fetch(pin, Path(scratch), mirrors, registries)
        with atomic.staged_dir(Path(tree)) as stage:
            part = select_files(src, stage, include, exclude)
            if not part["files"]:
                raise CrmatrixError(f"corpora.{name}: include/exclude select no readable file from {origin['source']}")
            _check_language(name, corpus.get("language"), part)
    manifest = {"corpus": name, "pin": {"kind": pin.kind, **pin.spec}, "origin": origin,
                "include": include, "exclude": exclude, **part}
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
